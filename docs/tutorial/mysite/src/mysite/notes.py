"""Notes: short documents, added by editors who have mysite.AddNotes."""

from mysite.content import Document
from mysite.interfaces import IDocument
from mysite.views import AddDocument
from mysite.views import choose_name
from zope.interface import implementer


class INote(IDocument):
    """A note: a document with a page of its own."""


@implementer(INote)
class Note(Document):
    """A note, stored in the ZODB."""


class AddNote(AddDocument):
    """The generated add form, adding a note instead of a document."""

    heading = 'Add a note'

    def save(self, values):
        name = choose_name(self.context, values['title'])
        self.context[name] = Note(values['title'], values['text'])
        return self.context[name]
