"""zope.pipeline.publishing.traversers.Traversal, the traverse stage's policy,
asked
by zope.publisher's own loop (``request.traverse``), gives what
zope.app.publication's ``BrowserPublication`` gives (the same object,
names, URL, base, hooks, errors), and follows every registration: global
or in a local site, an interface an instance provides, a replaced
method; each test runs with Traversal's own steps and with those of
``zope.pipeline._speedups.zope_container`` (``traversal_steps``)."""

import io

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from zope.app.publication.browser import BrowserPublication
from zope.component import getGlobalSiteManager
from zope.component.hooks import resetHooks
from zope.component.hooks import setHooks
from zope.component.hooks import setSite
from zope.component.security import protectedFactory
from zope.container.contained import Contained
from zope.container.interfaces import ISimpleReadContainer
from zope.container.sample import SampleContainer
from zope.container.traversal import ContainerTraverser
from zope.container.traversal import ItemTraverser
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import implementer
from zope.interface.interfaces import ComponentLookupError
from zope.interface.registry import Components
from zope.publisher.browser import BrowserRequest
from zope.publisher.browser import TestRequest as PublisherTestRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces import IDefaultViewName
from zope.publisher.interfaces import IPublishTraverse
from zope.publisher.interfaces import IRequest
from zope.publisher.interfaces.browser import IBrowserPublisher
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.security.adapter import LocatingTrustedAdapterFactory
from zope.security.checker import NamesChecker
from zope.security.checker import defineChecker
from zope.security.checker import undefineChecker
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import ITraversable
from zope.traversing.namespace import view as ViewNamespace

from zope.pipeline import components
from zope.pipeline._speedups import zope_component
from zope.pipeline._speedups import zope_container
from zope.pipeline.publishing.publication import ViewCheckedPublication
from zope.pipeline.publishing.traversers import Traversal
from zope.pipeline.publishing.traversers import ViewTraverser

CONTAINER_NAMES = ('__getitem__', 'get', '__contains__', 'keys', 'values',
                   'items', '__len__', '__iter__')


@pytest.fixture
def container_speedups(monkeypatch):
    """This module installed for the test, whatever
    ZOPE_PIPELINE_SPEEDUPS says (with the seam's zope_component's
    lookups)."""
    for name in zope_component.REPLACED:
        monkeypatch.setattr(components, name, getattr(zope_component, name))
    installed = bool(zope_container._saved)
    zope_container.install()
    yield
    if not installed:
        zope_container.uninstall()


@pytest.fixture
def stock_container():
    """This module uninstalled for the test."""
    installed = bool(zope_container._saved)
    zope_container.uninstall()
    yield
    if installed:
        zope_container.install()


@pytest.fixture(autouse=True, params=['stock', 'inline'])
def traversal_steps(request):
    """Every test twice: Traversal's own steps, then those of
    ``zope.pipeline._speedups.zope_container`` (the stock traversers
    stood in for)."""
    fixture = 'container_speedups' if request.param == 'inline' \
        else 'stock_container'
    request.getfixturevalue(fixture)
    return request.param


class IMarked(Interface):
    """Given to an instance by ``alsoProvides``."""


class Item(Contained):
    pass


@implementer(IBrowserPublisher)
class Page:
    """A view; its own default is itself."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def browserDefault(self, request):
        return self, ()

    def publishTraverse(self, request, name):
        raise LookupError(name)

    def __call__(self):
        return 'page'


class Other(Page):
    pass


class Special:
    """A traverser of its own: every name is the upper-cased name."""

    def __init__(self, context, request):
        self.context = context

    def publishTraverse(self, request, name):
        return 'special:' + name

    def browserDefault(self, request):
        return self.context, ('@@other.html',)


def register(factory, required, provided, name=''):
    getGlobalSiteManager().registerAdapter(factory, required, provided, name)


@pytest.fixture
def root(clean_zope):
    """A container tree with zope.pipeline's configure.zcml traversers
    (zope.container's item traverser for containers, ``protectedFactory``
    wrapped as ``permission="zope.Public"`` wraps it)."""
    setHooks()
    register(ViewTraverser, (Interface, IBrowserRequest), IBrowserPublisher)
    register(protectedFactory(ItemTraverser, IBrowserPublisher,
                              'zope.Public'),
             (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    register(ViewTraverser, (Interface, IRequest), IPublishTraverse)
    register(ItemTraverser, (ISimpleReadContainer, IRequest),
             IPublishTraverse)
    register(ViewNamespace, (Interface, Interface), ITraversable, 'view')
    getGlobalSiteManager().adapters.register(
        (Interface, IBrowserRequest), IDefaultViewName, '', 'index.html')
    register(Page, (Interface, IBrowserRequest), Interface, 'index.html')
    register(Other, (Interface, IBrowserRequest), Interface, 'other.html')
    defineChecker(SampleContainer, NamesChecker(CONTAINER_NAMES))
    defineChecker(Item, NamesChecker(()))
    defineChecker(Page, NamesChecker(('__call__', 'browserDefault')))
    defineChecker(Other, NamesChecker(('__call__', 'browserDefault')))
    top = SampleContainer()
    top['a'] = SampleContainer()
    top['a']['b'] = SampleContainer()
    top['item'] = Item()
    return top


class Classic(BrowserPublication):
    """zope.app.publication's traversal policy (the reference): its
    ``traverseName`` and ``getDefaultTraversal``, with the hooks called
    as ``Traversal`` calls them."""

    def __init__(self, hooks, environ, context_key):
        self.hooks = Traversal(hooks, environ, context_key)
        self.default_names = []

    def callTraversalHooks(self, request, ob):
        self.hooks.callTraversalHooks(request, ob)

    def getDefaultTraversal(self, request, ob):
        ob, path = super().getDefaultTraversal(request, ob)
        self.default_names.extend(path or ())
        return ob, path


def describe(ob):
    """What to compare of an object traversal handed back."""
    if type(ob) is Proxy:
        return ('proxied', describe(removeSecurityProxy(ob)))
    if isinstance(ob, Page):
        return (type(ob), describe(ob.context))
    if isinstance(ob, Special):
        return (type(ob), describe(ob.context))
    return ob


def make_request(path, method='GET', request_class=PublisherTestRequest):
    environ = {'PATH_INFO': path, 'REQUEST_METHOD': method,
               'SERVER_NAME': 'example.com', 'SERVER_PORT': '80'}
    if request_class is PublisherTestRequest:
        return PublisherTestRequest(**environ)
    return request_class(io.BytesIO(), environ)


def outcome(publication_class, root, path, method='GET', suffix=None,
            request_class=PublisherTestRequest, hooks_extra=(), base=None):
    """Everything traversal leaves behind, as comparable values."""
    request = make_request(path, method, request_class)
    if base:
        request.response.setBase(base)
    if suffix:
        request.setPathSuffix(list(suffix))
    seen = []
    environ = {}
    hooks = [lambda request, ob: seen.append(describe(ob))]
    hooks.extend(hooks_extra)
    publication = publication_class(hooks, environ, 'context')
    request.setPublication(publication)
    try:
        found = request.traverse(root)
    except Exception as error:
        found = ('raised', type(error), tuple(
            describe(arg) for arg in error.args
            if not IRequest.providedBy(arg)))
    else:
        found = describe(found)
    response = request.response
    return {
        'found': found,
        'names': list(request._traversed_names),
        'url': request.getURL(),
        'base': getattr(response, 'getBase', lambda: None)(),
        'status': response.getStatus(),
        'location': response.getHeader('Location'),
        'default_names': list(publication.default_names),
        'hooks': seen,
        'context': describe(environ.get('context')),
        'last': describe(request._last_obj_traversed),
    }


PATHS = ['/', '/a', '/a/', '/a/b', '/a/b/', '/a/missing', '/missing/x',
         '/a/other.html', '/a/@@other.html', '/a/@@missing.html',
         '/a/++view++other.html', '/a/.', '/item', '/item/other.html',
         '/item/missing', '/item/@@index.html', '/a/b/index.html',
         '/a/index.html/']


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('method', ['GET', 'HEAD', 'POST', 'PUT'])
def test_traversal_gives_what_the_classic_publication_gives(
        root, path, method):
    assert outcome(Traversal, root, path, method) == \
        outcome(Classic, root, path, method)


@pytest.mark.parametrize('path', PATHS)
def test_view_checked_traversal_hands_back_content_bare(root, path):
    """The view-checked chain reaches what the proxied one reaches, the
    content unproxied (the untrusted test views stay proxied)."""
    proxied = outcome(Traversal, root, path)
    bare = outcome(ViewCheckedPublication, root, path)
    assert bare['names'] == proxied['names']
    assert bare['url'] == proxied['url']
    assert bare['default_names'] == proxied['default_names']
    if proxied['found'][0] == 'proxied' and \
            not isinstance(proxied['found'][1], tuple):
        assert bare['found'] == proxied['found'][1]


@pytest.mark.parametrize('path', ['/a', '/a/b', '/item'])
@pytest.mark.parametrize('suffix', [['other.html'], ['.'], ['missing']])
def test_method_suffix_is_traversed_as_the_classic_publication_does(
        root, path, suffix):
    assert outcome(Traversal, root, path, suffix=suffix) == \
        outcome(Classic, root, path, suffix=suffix)


@pytest.mark.parametrize('request_class', [HTTPRequest, BrowserRequest])
@pytest.mark.parametrize('path', ['/a/b', '/a/missing', '/item/other.html'])
def test_http_and_browser_requests_are_traversed_as_their_classes_do(
        root, request_class, path):
    assert outcome(Traversal, root, path, request_class=request_class) == \
        outcome(Classic, root, path, request_class=request_class)


def test_a_browser_request_with_redirects_redirects_to_the_default(root):
    class Redirecting(PublisherTestRequest):
        use_redirect = True
    result = outcome(Traversal, root, '/a', request_class=Redirecting)
    assert result == outcome(Classic, root, '/a', request_class=Redirecting)
    assert result['found'] == '' and result['status'] == 302


def test_a_traverser_registered_after_the_first_request_is_used(root):
    before = outcome(Traversal, root, '/a/b')
    register(Special, (IMarked, IBrowserRequest), IBrowserPublisher)
    alsoProvides(root['a'], IMarked)
    after = outcome(Traversal, root, '/a/b')
    assert after != before
    assert after == outcome(Classic, root, '/a/b')
    assert outcome(Traversal, root, '/a/b', 'PUT')['found'] == \
        'special:b'


def test_an_interface_provided_by_the_instance_changes_its_traverser(root):
    register(Special, (IMarked, IBrowserRequest), IBrowserPublisher)
    assert outcome(Traversal, root, '/a/b', 'PUT')['found'] == \
        ('proxied', root['a']['b'])
    alsoProvides(root['a'], IMarked)
    assert outcome(Traversal, root, '/a/b', 'PUT')['found'] == \
        'special:b'
    assert outcome(Traversal, root, '/a')['default_names'] == \
        ['@@other.html']


class Site:
    """What ``setSite`` needs: a site manager."""

    def __init__(self, site_manager):
        self.site_manager = site_manager

    def getSiteManager(self):
        return self.site_manager


def test_a_traverser_registered_in_a_local_site_is_used_there(root):
    local = Components('local', bases=(getGlobalSiteManager(),))
    local.registerAdapter(Special, (ISimpleReadContainer, IBrowserRequest),
                          IBrowserPublisher)
    site = Site(local)

    def enter_site(request, ob):
        if removeSecurityProxy(ob) is root['a']:
            setSite(site)
    try:
        result = outcome(Traversal, root, '/a/b', hooks_extra=[enter_site])
        setSite(None)
        expected = outcome(Classic, root, '/a/b', hooks_extra=[enter_site])
    finally:
        setSite(None)
    # root -> a with the global traverser, a -> b with the site's
    assert result == expected
    assert result['names'] == ['a', 'b', 'index.html']
    assert result['hooks'][2] == 'special:b'
    assert outcome(Traversal, root, '/a/b', 'PUT')['found'] == \
        ('proxied', root['a']['b'])


class OwnLookups(Components):
    """A site manager whose ``queryMultiAdapter`` is not zope.interface's
    own: traversal asks it, inlining nothing."""

    asked = 0

    def queryMultiAdapter(self, objects, interface, name='', default=None):
        OwnLookups.asked += 1
        return super().queryMultiAdapter(objects, interface, name, default)


def test_a_site_manager_with_its_own_lookups_is_asked(root):
    site = Site(OwnLookups('own', bases=(getGlobalSiteManager(),)))
    setSite(site)
    try:
        OwnLookups.asked = 0
        assert outcome(Traversal, root, '/a/b') == \
            outcome(Classic, root, '/a/b')
        assert OwnLookups.asked
    finally:
        setSite(None)


def test_without_zope_components_hooks_the_global_registry_answers(root):
    resetHooks()
    try:
        assert outcome(Traversal, root, '/a/b') == \
            outcome(Classic, root, '/a/b')
    finally:
        setHooks()


@pytest.mark.parametrize('cls,method', [
    (ItemTraverser, 'publishTraverse'),
    (ContainerTraverser, 'publishTraverse'),
    (ContainerTraverser, 'browserDefault'),
    (ViewTraverser, 'publishTraverse'),
    (ViewTraverser, 'browserDefault'),
])
def test_a_replaced_stock_method_is_called(root, monkeypatch, cls, method):
    register(cls, (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    register(cls, (Item, IBrowserRequest), IBrowserPublisher)
    if method == 'publishTraverse':
        def replaced(self, request, name):
            return 'replaced:' + name
        http_method, path, expected = 'PUT', '/a', 'replaced:a'
    else:
        def replaced(self, request):
            return self.context, ('@@other.html',)
        http_method, path, expected = 'GET', '/', (
            'proxied', (Other, ('proxied', None)))
    monkeypatch.setattr(cls, method, replaced)
    for each in ('/a/b', '/item/x', '/a', '/item', '/'):
        assert outcome(Traversal, root, each, http_method) == \
            outcome(Classic, root, each, http_method)
    found = outcome(Traversal, root, path, http_method)['found']
    if expected[0] == 'proxied':
        assert found[1][0] is Other, found
    else:
        assert found == expected


@pytest.mark.parametrize('cls', [ItemTraverser, ContainerTraverser,
                                 ViewTraverser])
def test_a_replaced_constructor_is_called(root, monkeypatch, cls):
    register(cls, (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    made = []
    stock_init = cls.__init__

    def init(self, context, request):
        made.append(context)
        stock_init(self, context, request)
    monkeypatch.setattr(cls, '__init__', init)
    assert outcome(Traversal, root, '/a/b') == outcome(Classic, root, '/a/b')
    assert made


@pytest.mark.parametrize('cls', [ItemTraverser, ContainerTraverser,
                                 ViewTraverser])
@pytest.mark.parametrize('path', PATHS)
def test_each_stock_traverser_gives_what_it_gives_classically(
        root, cls, path):
    register(protectedFactory(cls, IBrowserPublisher, 'zope.Public'),
             (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    assert outcome(Traversal, root, path) == outcome(Classic, root, path)


def test_a_trusted_traverser_factory_is_made_and_asked(root, monkeypatch):
    register(LocatingTrustedAdapterFactory(ItemTraverser),
             (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    defineChecker(ItemTraverser, NamesChecker(('publishTraverse',
                                                'browserDefault')))
    made = []
    stock_init = ItemTraverser.__init__

    def init(self, context, request):
        made.append(type(context))
        stock_init(self, context, request)
    for path in ('/a/b', '/a'):
        assert outcome(Traversal, root, path) == outcome(Classic, root, path)
    monkeypatch.setattr(ItemTraverser, '__init__', init)
    outcome(Traversal, root, '/a/b')
    assert SampleContainer in made  # unproxied: trusted


def test_a_container_without_a_default_view_name_fails_as_stock(root):
    getGlobalSiteManager().adapters.unregister(
        (Interface, IBrowserRequest), IDefaultViewName, '', 'index.html')
    result = outcome(Traversal, root, '/a')
    assert result == outcome(Classic, root, '/a')
    assert result['found'][:2] == ('raised', ComponentLookupError)


def test_an_object_without_a_browser_publisher_is_its_own_default(root):
    getGlobalSiteManager().unregisterAdapter(
        ViewTraverser, (Interface, IBrowserRequest), IBrowserPublisher)
    for publication, found in ((Traversal, ('proxied', root['item'])),
                               (ViewCheckedPublication, root['item'])):
        result = outcome(publication, root, '/item')
        assert result['default_names'] == []
        assert result['found'] == found
    assert outcome(Traversal, root, '/item') == \
        outcome(Classic, root, '/item')


def test_an_object_that_traverses_itself_is_asked(root):
    alsoProvides(root['a'], IPublishTraverse)
    root['a'].publishTraverse = lambda request, name: 'self:' + name
    undefineChecker(SampleContainer)
    defineChecker(SampleContainer, NamesChecker(
        CONTAINER_NAMES + ('publishTraverse',)))
    result = outcome(Traversal, root, '/a/b', 'PUT')
    assert result == outcome(Classic, root, '/a/b', 'PUT')
    assert result['found'] == 'self:b'


def test_a_view_namespace_of_its_own_is_used(root):
    class Shouting(ViewNamespace):
        def traverse(self, name, ignored):
            return name.upper()
    register(Shouting, (ISimpleReadContainer, IBrowserRequest),
             ITraversable, 'view')
    result = outcome(Traversal, root, '/a/@@other.html', 'PUT')
    assert result == outcome(Classic, root, '/a/@@other.html', 'PUT')
    assert result['found'] == 'OTHER.HTML'


def test_a_view_factory_answering_none_is_not_found(root):
    register(lambda context, request: None,
             (ISimpleReadContainer, IBrowserRequest), Interface, 'none.html')
    result = outcome(Traversal, root, '/a/@@none.html')
    assert result == outcome(Classic, root, '/a/@@none.html')
    assert result['found'][0] == 'raised'


def test_hooks_of_a_subclass_are_called_as_methods(root):
    called = []

    class Counting(Traversal):
        __slots__ = ()

        def callTraversalHooks(self, request, ob):
            called.append(describe(ob))
            super().callTraversalHooks(request, ob)

    result = outcome(Counting, root, '/a/b')
    assert result == outcome(Classic, root, '/a/b')
    # root, a, b, b again (zope.publisher's loop restarts there for its
    # default view), the view: the hooks ran once for b
    hooks = result['hooks']
    assert len(hooks) == 4
    assert called == hooks[:3] + [hooks[2], hooks[3]]
    assert len(result['hooks']) == 4


def test_a_request_class_with_its_own_traverse_is_asked(root):
    traversed = []

    class Own(PublisherTestRequest):
        def traverse(self, ob):
            traversed.append(ob)
            return super().traverse(ob)
    assert outcome(Traversal, root, '/a', request_class=Own) == \
        outcome(Classic, root, '/a', request_class=Own)
    assert traversed


def test_a_base_set_before_traversal_is_kept(root):
    result = outcome(Traversal, root, '/a', base='http://example.com/x/')
    assert result == outcome(Classic, root, '/a', base='http://example.com/x/')
    assert result['base'] == 'http://example.com/x/'


def test_a_browser_publisher_factory_answering_none_means_no_default(root):
    register(lambda context, request: None,
             (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    result = outcome(Traversal, root, '/', 'GET')
    assert result == outcome(Classic, root, '/', 'GET')
    assert result['found'] == root
    assert result['default_names'] == []


SEGMENTS = ['a', 'b', 'item', 'missing', 'other.html', '@@other.html',
            '@@index.html', 'index.html', '.', '++view++other.html',
            '@@missing.html', '_private']


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=st.lists(st.sampled_from(SEGMENTS), max_size=4),
       slash=st.booleans(),
       method=st.sampled_from(['GET', 'HEAD', 'POST', 'PUT']),
       suffix=st.one_of(st.none(), st.lists(st.sampled_from(SEGMENTS),
                                            min_size=1, max_size=2)))
def test_any_path_is_traversed_as_the_classic_publication_does(
        root, segments, slash, method, suffix):
    path = '/' + '/'.join(segments) + ('/' if slash and segments else '')
    assert outcome(Traversal, root, path, method, suffix) == \
        outcome(Classic, root, path, method, suffix)
