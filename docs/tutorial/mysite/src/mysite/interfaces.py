from zope.interface import Interface
from zope.schema import Text
from zope.schema import TextLine


class INote(Interface):
    """A short note with a title."""

    title = TextLine(title='Title', max_length=200)
    text = Text(title='Text', max_length=5000)
