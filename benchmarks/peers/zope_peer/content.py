"""The Zope peer's content: an OFS folder ``page`` whose default view
(``index_html``) is a Chameleon page template, holding ten simple items."""

from AccessControl.class_init import InitializeClass
from AccessControl.Permissions import view
from AccessControl.SecurityInfo import ClassSecurityInfo
from OFS.Folder import Folder
from OFS.SimpleItem import SimpleItem
from Products.PageTemplates.PageTemplateFile import PageTemplateFile

from benchmarks.peers import page


class Page(Folder):
    """A titled folder of items, shown by its page template."""

    meta_type = 'Benchmark Page'
    security = ClassSecurityInfo()

    security.declareProtected(view, 'index_html')
    index_html = PageTemplateFile('page.pt', globals())


InitializeClass(Page)


class Item(SimpleItem):
    """An item with a title."""

    meta_type = 'Benchmark Item'

    def __init__(self, id, title=''):
        self.id = id
        self.title = title


InitializeClass(Item)


def populate(app):
    """Add ``folder/page`` and its items to the Zope application; False
    when they were there already."""
    if page.FOLDER_NAME in app.objectIds():
        return False
    folder = Folder(page.FOLDER_NAME)
    app._setObject(page.FOLDER_NAME, folder)
    folder = app[page.FOLDER_NAME]
    new_page = Page(page.PAGE_NAME)
    new_page.title = page.PAGE_TITLE
    folder._setObject(page.PAGE_NAME, new_page)
    new_page = folder[page.PAGE_NAME]
    for name, title in page.ITEMS:
        new_page._setObject(name, Item(name, title))
    return True
