"""The zope.pipeline peer's content: a page (a BTree container with a
title) holding ten items, under the root folder's ``folder``."""

from persistent import Persistent
from zope.container.btree import BTreeContainer
from zope.container.contained import Contained
from zope.interface import Interface
from zope.interface import implementer
from zope.schema import TextLine
from zope.site.folder import Folder

from benchmarks.peers import page


class IPage(Interface):

    title = TextLine(title='Title')


class IItem(Interface):

    title = TextLine(title='Title')


@implementer(IPage)
class Page(BTreeContainer):

    def __init__(self, title=''):
        super().__init__()
        self.title = title


@implementer(IItem)
class Item(Contained, Persistent):

    def __init__(self, title=''):
        self.title = title


def populate(root):
    """Add ``folder/page`` and its items to a new root folder
    (``open_root.populate``)."""
    folder = root[page.FOLDER_NAME] = Folder()
    new_page = folder[page.PAGE_NAME] = Page(page.PAGE_TITLE)
    for name, title in page.ITEMS:
        new_page[name] = Item(title)


class PageView:
    """What the page template shows of the items."""

    def item_titles(self):
        return [item.title for item in self.context.values()]
