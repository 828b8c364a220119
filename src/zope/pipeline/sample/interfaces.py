"""Interfaces of the sample site's content (the security declarations in
configure.zcml protect them, so they say what each permission covers)."""

from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.interfaces import IBadRequest
from zope.schema import Int
from zope.schema import Text
from zope.schema import TextLine
from zope.site.interfaces import IFolder


class ITitled(Interface):
    """Content with a title: what the search looks at."""

    title = TextLine(title='Title', max_length=200)


class ISampleFolder(ITitled, IFolder):
    """A folder of pages and folders."""


class IPageContent(ITitled):
    """What a page shows (zope.View); editing it needs zope.ManageContent."""

    body = Text(title='Body', required=False, max_length=20000)


class IPage(IPageContent):
    """A page: a title, a body, items listed below it (it is a container
    of IItem), and comments."""

    def recent_comments(count=10):
        """The newest ``count`` comments, newest first, as dicts with
        ``author``, ``text`` and ``when`` (seconds since the epoch)."""

    def comment_count():
        """How many comments the page has."""


class IComment(Interface):
    """What a comment may hold: the one home of the limits that the page
    enforces whoever calls it (the form, XML-RPC, a script)."""

    author = TextLine(title='Author', min_length=1, max_length=100)
    text = Text(title='Text', min_length=1, max_length=2000)


@implementer(IBadRequest)
class InvalidComment(ValueError):
    """A comment outside the limits of ``IComment`` (a 400, or an XML-RPC
    fault with code 400); its text says what the client must change."""


class ICommentable(Interface):
    """Adding a comment (the zope.pipeline.sample.AddComment permission)."""

    def add_comment(author, text):
        """Store a comment; return its key.

        ``author`` and ``text`` are text (``str``), stripped of surrounding
        blanks; an empty author is ``'anonymous'``.  Raise InvalidComment
        when they are not text or not within the limits of ``IComment``.
        """


class IItem(IPageContent):
    """An item of a page."""


class ICounter(Interface):
    """A number that POSTs increment: every increment writes the same
    object, so concurrent ones conflict and are retried."""

    value = Int(title='Value', readonly=True)


class IIncrement(Interface):
    """Incrementing (the zope.pipeline.sample.Increment permission)."""

    def increment():
        """Add one to the value; return the new value."""
