"""The Pyramid peer's content: persistent mappings traversed by Pyramid."""

from persistent import Persistent
from persistent.mapping import PersistentMapping
from pyramid.authorization import Allow
from pyramid.authorization import Everyone

from benchmarks.peers import page

#: The key of the application's root in the ZODB root mapping.
ROOT_KEY = 'app_root'


class Folder(PersistentMapping):
    """A container (the root and ``folder``)."""

    __parent__ = __name__ = None

    def add(self, name, child):
        child.__name__, child.__parent__ = name, self
        self[name] = child
        return child


class Root(Folder):
    """The application's root: its ACL lets everyone view (read by the
    ``pyramid-acl`` peer's security policy; the plain peer has none)."""

    __acl__ = [(Allow, Everyone, 'view')]


class Page(Folder):
    """``page``: a titled container of items."""

    def __init__(self, title=''):
        super().__init__()
        self.title = title


class Item(Persistent):

    __parent__ = __name__ = None

    def __init__(self, title=''):
        self.title = title


def build():
    """A new root holding ``folder/page`` and its items."""
    root = Root()
    folder = root.add(page.FOLDER_NAME, Folder())
    new_page = folder.add(page.PAGE_NAME, Page(page.PAGE_TITLE))
    for name, title in page.ITEMS:
        new_page.add(name, Item(title))
    return root
