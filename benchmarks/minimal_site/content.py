"""Content of the benchmark-only site: a folder, a page, ten items, and a
comments form that writes to the database."""

import os
import time

from BTrees.OOBTree import OOBTree
from zope.container.btree import BTreeContainer
from zope.container.contained import Contained
from zope.interface import Interface
from zope.interface import implementer
from zope.schema import TextLine
from zope.security.proxy import removeSecurityProxy
from zope.site.folder import Folder

#: How many items /folder/page lists (as the sample site's page does).
ITEMS = 10


class IPage(Interface):

    title = TextLine(title='Title')


class IItem(Interface):

    title = TextLine(title='Title')


@implementer(IPage)
class Page(BTreeContainer):

    def __init__(self, title=''):
        super().__init__()
        self.title = title
        self.comments = OOBTree()


@implementer(IItem)
class Item(Contained):

    def __init__(self, title=''):
        self.title = title


def populate(root):
    """Add /folder/page and its items to a new root application."""
    folder = root['folder'] = Folder()
    page = folder['page'] = Page('A page with %d items' % ITEMS)
    for number in range(1, ITEMS + 1):
        page['item-%02d' % number] = Item('Item number %d' % number)


class PageView:
    """Values the page template shows."""

    def item_titles(self):
        return [item.title for item in self.context.values()]


class AddComment:
    """POST ``text`` (and ``author``): store a comment, redirect to the page.

    Comments share one BTree, so concurrent posts conflict now and then and
    exercise conflict resolution and the retry stage.
    """

    def __call__(self, text='', author='anonymous'):
        page = removeSecurityProxy(self.context)
        key = '%020d-%d-%s' % (time.time_ns(), os.getpid(), id(self))
        page.comments[key] = (author, text)
        self.request.response.redirect(self.request.getURL(1))
        return ''
