"""The sample views make the URLs of a container's children from the
container's URL once; they must be the URLs zope.traversing's AbsoluteURL
gives each child (names quoted the same way)."""

import pytest
from zope.component import provideAdapter
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.location.interfaces import IRoot
from zope.publisher.browser import TestRequest as Request
from zope.publisher.interfaces.http import IHTTPRequest
from zope.traversing.browser.absoluteurl import AbsoluteURL
from zope.traversing.browser.absoluteurl import SiteAbsoluteURL
from zope.traversing.browser.absoluteurl import absoluteURL
from zope.traversing.browser.interfaces import IAbsoluteURL

from zope.pipeline.sample.content import Item
from zope.pipeline.sample.content import Page
from zope.pipeline.sample.content import SampleFolder
from zope.pipeline.sample.views import FolderView
from zope.pipeline.sample.views import PageView
from zope.pipeline.sample.views import child_url

NAMES = ['item-01', 'with space', 'caf\xe9', '@@view+more', 'a/b?c#d', '%25']


@pytest.fixture
def site(clean_zope):
    provideAdapter(AbsoluteURL, (Interface, IHTTPRequest), IAbsoluteURL)
    provideAdapter(SiteAbsoluteURL, (IRoot, IHTTPRequest), IAbsoluteURL)
    root = SampleFolder('root')
    alsoProvides(root, IRoot)
    root['folder'] = folder = SampleFolder('A folder')
    folder['page'] = page = Page('A page')
    for number, name in enumerate(NAMES):
        page[name] = Item('Item %d' % number)
    for name in NAMES:
        folder[name] = SampleFolder('Folder ' + name)
    return root


def test_page_items_link_to_the_absolute_url_of_each_item(site):
    page = site['folder']['page']
    request = Request(environ={'HTTP_HOST': 'example.com:8080'})
    items = PageView(page, request).items()
    assert [item['url'] for item in items] == [
        absoluteURL(item, request) for item in page.values()]
    assert [item['title'] for item in items] == [
        item.title for item in page.values()]


def test_folder_children_link_to_the_absolute_url_of_each_child(site):
    folder = site['folder']
    request = Request()
    children = FolderView(folder, request).children()
    assert [child['url'] for child in children] == [
        absoluteURL(child, request) for name, child in sorted(
            folder.items())]


def test_children_of_the_root_get_the_application_url_and_their_name(site):
    request = Request(environ={'SCRIPT_NAME': '/mount'})
    children = FolderView(site, request).children()
    assert [child['url'] for child in children] == [
        'http://127.0.0.1/mount/folder']


def test_child_url_quotes_the_name_but_leaves_at_and_plus():
    assert child_url('http://h/p', '@@a+b c/\xe9') == \
        'http://h/p/@@a+b%20c%2F%C3%A9'


def test_url_of_the_context_is_computed_once(site):
    page = site['folder']['page']
    view = PageView(page, Request())
    first = view.url()
    page.__name__ = 'renamed'   # a later call reuses the first answer
    assert view.url() is first
    assert view.url(page) == 'http://127.0.0.1/folder/renamed'
