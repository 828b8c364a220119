from persistent import Persistent
from zope.container.contained import Contained
from zope.interface import implementer

from mysite.interfaces import INote


@implementer(INote)
class Note(Persistent, Contained):
    """A note, stored in the ZODB."""

    def __init__(self, title='', text=''):
        self.title = title
        self.text = text


def populate(root):
    """The content a new database starts with (``open_root.populate``)."""
    root['hello'] = Note('Hello', 'My first note.')
