"""Request factories: the default three, the lookup through a compiled
pipeline, declining factories, and 405 when no factory handles a request."""

import io

import pytest
from zope.interface import Interface
from zope.interface import directlyProvidedBy
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.browser import IDefaultBrowserLayer
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline import factories
from zope.pipeline.app import DEFAULT_SITE_ZCML
from zope.pipeline.app import load_zcml
from zope.pipeline.interfaces import IRequestFactory

from .engine_files import ROOT  # noqa: F401 - puts tests.engine on the path
from tests.engine.stages import minimal


def environ_for(method, content_type=None):
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    if content_type:
        environ['CONTENT_TYPE'] = content_type
    return environ


def test_default_factories_are_browser_xmlrpc_and_http(clean_zope):
    registry = load_zcml(DEFAULT_SITE_ZCML)
    registered = {item.name: (item.factory, item.methods, item.mimetypes,
                              item.priority)
                  for item in registry.request_factories}
    assert registered == {
        'browser': (factories.browser, ('GET', 'POST', 'HEAD'), ('*',), 10),
        'xmlrpc': (factories.xmlrpc, ('POST',), ('text/xml',), 20),
        'http': (factories.http, ('*',), ('*',), 0),
    }


def test_default_factories_choose_by_method_and_content_type(clean_zope):
    registry = load_zcml(DEFAULT_SITE_ZCML)
    cases = [('GET', None, 'browser'), ('HEAD', None, 'browser'),
             ('POST', 'application/x-www-form-urlencoded', 'browser'),
             ('POST', 'text/xml', 'xmlrpc'),
             ('POST', 'text/xml; charset=utf-8', 'xmlrpc'),
             ('PUT', 'text/xml', 'http'), ('DELETE', None, 'http'),
             ('PROPFIND', None, 'http')]
    for method, content_type, expected in cases:
        registration = registry.choose_request_factory(
            environ_for(method, content_type))
        assert (method, content_type, registration.name) == (
            method, content_type, expected)


#: The default factories, the zope.publisher class each extends and a
#: method each is chosen for.
over_factories = pytest.mark.parametrize('factory, stock, method', [
    (factories.browser, BrowserRequest, 'GET'),
    (factories.xmlrpc, XMLRPCRequest, 'POST'),
    (factories.http, HTTPRequest, 'PUT'),
], ids=['browser', 'xmlrpc', 'http'])


#: What each default request class adds to zope.publisher's besides
#: ``setupLocale`` and ``getURL``: classes in its resolution order, and
#: methods of its own (``_createResponse``: a response of ours,
#: tests/unit/test_remembered_responses.py).
LINEAR_WORK = {
    BrowserRequest: ((factories.LinearCookies, factories.BoundedCharsets),
                     {'_createResponse', '__Security_checker__'}),
    XMLRPCRequest: ((factories.LinearCookies,), {'processInputs'}),
    HTTPRequest: ((factories.LinearCookies,),
                  {'_createResponse', '__Security_checker__'}),
}


@over_factories
def test_requests_are_zope_publisher_requests_but_for_locale_and_url(
        factory, stock, method):
    """The classes made differ from zope.publisher's in ``setupLocale``
    and ``getURL`` (and a ``repr`` naming zope.publisher's class, as the
    classic publisher's requests did), and in what would cost more than
    linear work (``LINEAR_WORK``, with the responses they make and the
    checker of zope.publisher's class they are proxied with) alone:
    every other attribute is
    zope.publisher's, the instances have the same slots (no ``__dict__``
    where zope.publisher's have none) and provide the same interfaces."""
    request = factory(io.BytesIO(b''), environ_for(method, 'text/xml'))
    cls = type(request)
    mixins, methods = LINEAR_WORK[stock]
    assert isinstance(request, stock) and cls is not stock
    assert cls.__name__ == stock.__name__
    mro = (cls, factories.RememberedLocale, factories.RememberedURL) + \
        mixins + stock.__mro__
    if issubclass(stock, HTTPRequest) and stock is not XMLRPCRequest:
        # zope.publisher's HTTPRequest.__init__, its environment copied in
        # one step (tests/unit/test_request_environment.py)
        at = mro.index(HTTPRequest)
        mro = mro[:at] + (factories.LinearEnvironment,) + mro[at:]
    assert cls.__mro__ == mro
    bookkeeping = {'__doc__', '__module__', '__slots__', '__provides__',
                   '__implemented__', '__providedBy__', '__qualname__'}
    assert set(vars(cls)) - bookkeeping == methods
    assert set(vars(factories.RememberedLocale)) - bookkeeping == {
        'setupLocale', '__repr__'}
    assert set(vars(factories.RememberedURL)) - bookkeeping == {'getURL'}
    assert set(vars(factories.BoundedCharsets)) - bookkeeping == {
        '_decode'}
    assert set(vars(factories.LinearCookies)) - bookkeeping == {
        '_parseCookies'}
    assert set(vars(factories.LinearEnvironment)) - bookkeeping == {
        '__init__', '_setup_path', '_setup_url_base'}
    assert repr(request) == repr(stock(
        io.BytesIO(b''), environ_for(method, 'text/xml')))
    assert repr(request).startswith('<%s.%s instance URL=' % (
        stock.__module__, stock.__name__))
    assert hasattr(request, '__dict__') == hasattr(
        stock(io.BytesIO(b''), environ_for(method)), '__dict__')
    assert list(implementedBy(cls).flattened()) == list(
        implementedBy(stock).flattened())


def test_browser_requests_have_the_default_skin():
    browser = factories.browser(io.BytesIO(b''), environ_for('GET'))
    assert IDefaultBrowserLayer.providedBy(browser)


def test_lookup_through_the_pipeline_prefers_method_and_mimetype(serve):
    app = serve('factories.zcml')
    assert app.post('/', b'{}', content_type='application/json').text == (
        'json: respond')
    assert app.post('/', b'<methodCall/>', content_type='text/xml').text == (
        'xmlrpc: respond')


def test_lookup_through_the_pipeline_falls_back_to_any_method(serve):
    app = serve('factories.zcml')
    assert app.post('/', b'x', content_type='text/plain').text == (
        'fallback: respond')
    assert app.put('/', b'x').text == 'fallback: respond'


def test_higher_priority_factory_that_declines_yields_to_the_next(serve):
    app = serve('factories.zcml')
    assert app.get('/').text == 'get: respond'
    assert app.get('/', headers={'X-Accept': 'yes'}).text == (
        'get-on-request: respond')


def test_no_factory_for_the_method_gives_405(serve):
    response = serve('browser_only.zcml').put('/', b'x', status=405)
    assert response.status == '405 Method Not Allowed'
    assert response.text == 'No request type handles the method PUT.'


def test_request_class_becomes_a_request_factory():
    factory = factories.as_request_factory(XMLRPCRequest)
    assert IRequestFactory.providedBy(factory)
    assert factory.request_class is XMLRPCRequest
    assert factory.request_interface == implementedBy(XMLRPCRequest)
    assert repr(factory) == (
        '<RequestFactory zope.publisher.xmlrpc.XMLRPCRequest>')
    assert factories.as_request_factory(factories.browser) is factories.browser


def test_request_interface_falls_back_to_the_class_declaration():
    assert factories.request_interface_of(minimal) == implementedBy(
        BrowserRequest)
    assert factories.request_interface_of(factories.xmlrpc) is IXMLRPCRequest


def test_probe_spec_is_what_a_real_request_provides():
    spec = factories.probe_spec(factories.browser, 'POST')
    real = factories.browser(io.BytesIO(b''), environ_for('POST'))
    assert spec is providedBy(real)


# -- the locale: zope.publisher's, remembered per Accept-Language

ACCEPT_LANGUAGES = ['', 'en', 'de-CH,de;q=0.8,en;q=0.5', 'xx-yy, fr',
                    'en;q=0, de', 'pt-br', 'en;q=bad, de', '*', 'zz']


@pytest.fixture
def languages(clean_zope):
    from zope.component.hooks import setHooks
    setHooks()
    factories.clear_locales()
    factories.clear_language_factories()
    yield
    factories.clear_locales()
    factories.clear_language_factories()


def language_adapter(adapter):
    from zope.component import provideAdapter
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.interfaces.http import IHTTPRequest
    provideAdapter(adapter, (IHTTPRequest,), IUserPreferredLanguages)


def locale_request(make, accept_language=None, cookie=None):
    environ = environ_for('GET')
    if accept_language is not None:
        environ['HTTP_ACCEPT_LANGUAGE'] = accept_language
    if cookie is not None:
        environ['HTTP_COOKIE'] = cookie
    return make(io.BytesIO(b''), environ)


def described(request):
    """The request's locale and what its creation noted."""
    locale = request.locale
    return (locale and (locale.id.language, locale.id.territory,
                        locale.id.variant),
            dict(request.annotations))


def stock_request(input_stream, environ):
    from zope.publisher.skinnable import setDefaultSkin
    request = BrowserRequest(input_stream, environ)
    setDefaultSkin(request)
    return request


@pytest.mark.parametrize('adapter', [
    'BrowserLanguages', 'CacheableBrowserLanguages',
    'ModifiableBrowserLanguages'])
@pytest.mark.parametrize('header', ACCEPT_LANGUAGES)
def test_a_remembered_locale_is_the_one_zope_publisher_sets_up(
        languages, adapter, header, component_speedups):
    """The first request with a header sets it up the stock way, the next
    ones are given it: the same locale object, the same languages noted."""
    from zope.publisher import browser
    language_adapter(getattr(browser, adapter))
    for attempt in ('first', 'remembered'):
        ours = locale_request(factories.browser, header)
        stock = locale_request(stock_request, header)
        assert (attempt, described(ours)) == (attempt, described(stock))
        assert ours.locale is stock.locale
    assert len(factories._locales) == 1


def test_a_cookie_named_like_the_header_is_read_as_zope_publisher_reads_it(
        languages):
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    for _ in range(2):
        ours = locale_request(factories.browser, 'en',
                              'HTTP_ACCEPT_LANGUAGE=de')
        assert described(ours) == described(
            locale_request(stock_request, 'en', 'HTTP_ACCEPT_LANGUAGE=de'))
        assert ours.locale.id.language == 'de'
    assert described(locale_request(factories.browser, 'en'))[0] == (
        'en', None, None)


def test_languages_noted_for_one_request_are_its_own(languages):
    from zope.publisher.browser import BROWSER_LANGUAGES_KEY
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    first = locale_request(factories.browser, 'fr, en')
    first.annotations[BROWSER_LANGUAGES_KEY]['cached'].append('de')
    second = locale_request(factories.browser, 'fr, en')
    second.annotations[BROWSER_LANGUAGES_KEY]['cached'].append('it')
    third = locale_request(factories.browser, 'fr, en')
    assert third.annotations[BROWSER_LANGUAGES_KEY] == {
        'cached': ['fr', 'en']}


def test_languages_set_later_set_the_locale_up_again(languages):
    """``setPreferredLanguages`` notes the languages and calls
    ``setupLocale`` again: that one goes the stock way."""
    from zope.component import provideAdapter
    from zope.i18n.interfaces import IModifiableUserPreferredLanguages
    from zope.publisher.browser import ModifiableBrowserLanguages
    from zope.publisher.interfaces.http import IHTTPRequest
    language_adapter(ModifiableBrowserLanguages)
    provideAdapter(ModifiableBrowserLanguages, (IHTTPRequest,),
                   IModifiableUserPreferredLanguages)
    for make in (factories.browser, stock_request):
        request = locale_request(make, 'en')
        IModifiableUserPreferredLanguages(request).setPreferredLanguages(
            ['de'])
        assert described(request)[0] == ('de', None, None)
    assert described(locale_request(factories.browser, 'en'))[0] == (
        'en', None, None)


def test_another_language_adapter_is_asked_every_time(languages):
    """An adapter of the application's (here one that reads a cookie) is
    not zope.publisher's: nothing is remembered."""
    from zope.publisher.browser import BrowserLanguages

    class CookieLanguages(BrowserLanguages):
        def getPreferredLanguages(self):
            return [self.request.get('lang', 'en')]

    language_adapter(CookieLanguages)
    for cookie, language in [('lang=de', 'de'), ('lang=fr', 'fr'),
                             (None, 'en')]:
        request = locale_request(factories.browser, 'en', cookie)
        assert described(request)[0] == (language, None, None)
    assert factories._locales == {}


def test_without_a_language_adapter_a_request_has_no_locale(languages):
    assert locale_request(factories.browser, 'en').locale is None
    assert locale_request(stock_request, 'en').locale is None
    assert factories._locales == {}


def test_a_header_that_is_not_text_goes_the_stock_way(languages):
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    for make in (factories.browser, stock_request):
        with pytest.raises(TypeError):
            locale_request(make, b'en')
    assert factories._locales == {}


def test_remembered_locales_are_bounded(languages, monkeypatch,
                                        component_speedups):
    """The header is the client's: at most MAX_LOCALES outcomes are kept
    (then they are forgotten and remembered afresh)."""
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    monkeypatch.setattr(factories, 'MAX_LOCALES', 3)
    for number in range(10):
        request = locale_request(factories.browser, 'en, x%d' % number)
        assert described(request)[0] == ('en', None, None)
        assert 1 <= len(factories._locales) <= 3


class ILanguageMarker(Interface):
    """Marks a request class given a language adapter of its own."""


def german(request):
    from zope.publisher.browser import BrowserLanguages

    class German(BrowserLanguages):
        def getPreferredLanguages(self):
            return ['de']

    return German(request)


def language_of(request):
    return request.locale and request.locale.id.language


def test_a_language_factory_is_remembered_per_interfaces_and_registry(
        languages, component_speedups):
    """The factory zope.component's hook would find for a request's
    interfaces in the current registry is looked up once."""
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.browser import BrowserLanguages

    from zope.pipeline.components import adapter_factory
    language_adapter(BrowserLanguages)
    for _ in range(3):
        request = locale_request(factories.browser, 'fr')
        assert language_of(request) == 'fr'
        assert factories.language_factory(request) is adapter_factory(
            request, IUserPreferredLanguages) is BrowserLanguages
    # one for the request's class as it is made, one for it skinned
    assert [value[2] for value in factories._language_factories.values()
            ] == [BrowserLanguages, BrowserLanguages]


def test_a_language_adapter_registered_later_is_used_at_once(languages):
    """A registration changes the registry's generation: the factory is
    looked up afresh."""
    from zope.component import provideAdapter
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.browser import BrowserLanguages
    from zope.publisher.interfaces.browser import IBrowserRequest
    language_adapter(BrowserLanguages)
    assert language_of(locale_request(factories.browser, 'fr')) == 'fr'
    provideAdapter(german, (IBrowserRequest,), IUserPreferredLanguages)
    assert language_of(locale_request(factories.browser, 'fr')) == 'de'
    assert language_of(locale_request(stock_request, 'fr')) == 'de'


def test_a_request_class_that_comes_to_implement_more_gets_its_adapter(
        languages):
    """A class declaring another interface changes its resolution order:
    the factory is looked up afresh."""
    from zope.component import provideAdapter
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.interface import classImplements
    from zope.publisher.browser import BrowserLanguages
    language_adapter(BrowserLanguages)
    provideAdapter(german, (ILanguageMarker,), IUserPreferredLanguages)

    class MarkedLater(factories.BrowserRequest):
        __slots__ = ('__provides__',)

    make = factories.RequestFactory(MarkedLater)
    assert language_of(locale_request(make, 'fr')) == 'fr'
    classImplements(MarkedLater, ILanguageMarker)
    assert language_of(locale_request(make, 'fr')) == 'de'


def test_a_request_that_conforms_is_asked_every_time(languages):
    """``__conform__`` comes before the registry: nothing is remembered."""
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.browser import BrowserLanguages
    language_adapter(BrowserLanguages)

    class Conforming(factories.BrowserRequest):
        __slots__ = ('__provides__',)

        def __conform__(self, interface):
            if interface is IUserPreferredLanguages:
                return german(self)
            return None

    make = factories.RequestFactory(Conforming)
    for _ in range(2):
        assert language_of(locale_request(make, 'fr')) == 'de'
    assert factories._language_factories == {}


def test_a_persistent_registrys_language_factory_is_not_remembered(
        languages):
    """A local site's registry is persistent: remembering it would keep
    its connection alive (its factory is asked every time)."""
    from zope.component.hooks import setSite
    from zope.component.persistentregistry import PersistentComponents
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.interface.registry import Components
    from zope.publisher.browser import BrowserLanguages
    from zope.publisher.interfaces.browser import IBrowserRequest
    language_adapter(BrowserLanguages)
    components = PersistentComponents('local')
    components.__bases__ = (Components('unused'),)
    components.registerAdapter(german, (IBrowserRequest,),
                               IUserPreferredLanguages)

    class Site:
        def getSiteManager(self):
            return components

    setSite(Site())
    try:
        for _ in range(2):
            assert language_of(locale_request(factories.browser, 'fr')) \
                == 'de'
    finally:
        setSite(None)
    assert factories._language_factories == {}


def test_another_adapter_hook_is_asked_every_time(languages):
    """An adapter hook of the application's comes before zope.component's
    registry: nothing is remembered."""
    import zope.interface.interface
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.browser import BrowserLanguages
    language_adapter(BrowserLanguages)

    def hook(interface, ob):
        if interface is IUserPreferredLanguages:
            return german(ob)
        return None

    adapter_hooks = zope.interface.interface.adapter_hooks
    adapter_hooks.insert(0, hook)  # the list zope.interface's C code reads
    try:
        for _ in range(2):
            assert language_of(
                locale_request(factories.browser, 'fr')) == 'de'
            assert language_of(locale_request(stock_request, 'fr')) == 'de'
    finally:
        adapter_hooks.remove(hook)
    assert factories._language_factories == {}


def test_remembered_language_factories_are_bounded(
        languages, monkeypatch, component_speedups):
    from zope.publisher.browser import BrowserLanguages
    language_adapter(BrowserLanguages)
    monkeypatch.setattr(factories, 'MAX_LANGUAGE_FACTORIES', 2)
    for number in range(5):
        cls = type('Request%d' % number, (factories.BrowserRequest,),
                   {'__slots__': ('__provides__',)})
        request = locale_request(factories.RequestFactory(cls), 'fr')
        assert language_of(request) == 'fr'
        assert 1 <= len(factories._language_factories) <= 2


def test_a_subclass_of_ours_is_named_in_its_repr():
    class MyRequest(factories.BrowserRequest):
        __slots__ = ()

    request = MyRequest(io.BytesIO(b''), environ_for('GET'))
    assert repr(request) == '<%s.MyRequest instance URL=http://localhost>' % (
        __name__)


# -- URLs: zope.publisher's, remembered per server, names and arguments

@pytest.fixture
def urls(clean_zope, monkeypatch):
    """Forgets the remembered URLs; counts zope.publisher's quoting."""
    from zope.publisher import http
    quoted = []

    def quote(name, safe):
        quoted.append(name)
        return stock_quote(name, safe)

    stock_quote = http.quote
    monkeypatch.setattr(http, 'quote', quote)
    factories.clear_urls()
    yield quoted
    factories.clear_urls()


def url_request(make, host='localhost', app_names=(), names=(),
                method='GET'):
    """A request of ``make`` for ``host`` (a Host header), under the
    virtual host names ``app_names``, that has traversed ``names``."""
    environ = environ_for(method)
    environ['HTTP_HOST'] = host
    request = make(io.BytesIO(b''), environ)
    if app_names:
        request.setVirtualHostRoot(list(app_names))
    request._traversed_names = list(names)
    return request


#: Names with characters quoted and kept (getURL keeps '/', '+' and '@').
URL_NAMES = [(), ('folder',), ('folder', 'page', 'index.html'),
             ('++etc++site', '@@view', 'a b', 'caf\xe9', 'x/y%z+w?q#r')]
#: (level, path_only) pairs asked of each request.
URL_ARGUMENTS = [(level, path_only) for level in (0, 1, 2)
                 for path_only in (False, True)]


def url_or_error(request, level, path_only):
    try:
        return request.getURL(level, path_only)
    except Exception as error:
        return type(error)


@over_factories
@pytest.mark.parametrize('names', URL_NAMES)
@pytest.mark.parametrize('app_names', [(), ('vh', 'r\xf6\xf6t')],
                         ids=['no-vh', 'vh'])
def test_a_remembered_url_is_the_one_zope_publisher_makes(
        urls, factory, stock, method, names, app_names):
    """Each level and form of the URL, asked of a first request and of a
    second one with the same host and names (remembered: nothing quoted
    again), is zope.publisher's; a level deeper than the names raises
    IndexError every time."""
    def ask(make):
        request = url_request(make, 'example.com:8080', app_names, names,
                              method)
        return [url_or_error(request, *arguments)
                for arguments in URL_ARGUMENTS]

    expected = ask(stock)
    assert (IndexError in expected) == (len(app_names) + len(names) < 2)
    assert ask(factory) == expected
    quoted = len(urls)
    assert ask(factory) == expected
    assert urls[quoted:] == []


def test_urls_of_other_hosts_and_names_are_made_afresh(urls):
    first = url_request(factories.browser, 'a.example.com', (), ('x',))
    assert first.getURL() == 'http://a.example.com/x'
    other_host = url_request(factories.browser, 'b.example.com', (), ('x',))
    assert other_host.getURL() == 'http://b.example.com/x'
    other_name = url_request(factories.browser, 'a.example.com', (), ('y',))
    assert other_name.getURL() == 'http://a.example.com/y'
    moved = url_request(factories.browser, 'a.example.com', ('x',), ())
    assert moved.getURL() == 'http://a.example.com/x'
    first._traversed_names.append('z')
    assert first.getURL() == 'http://a.example.com/x/z'
    assert first.getURL(1) == 'http://a.example.com/x'


@pytest.mark.parametrize('level, path_only', [
    (True, False), (1.0, False), ('1', True), (0, []), (1, 'yes')])
def test_odd_url_arguments_answer_as_zope_publisher_does(
        urls, level, path_only):
    """A level that is not an int goes the stock way (a bool is a level,
    a float or a string a TypeError); any ``path_only`` answers as it does
    in zope.publisher, which reads it for its truth (an unhashable one
    goes the stock way)."""
    def ask(make):
        request = url_request(make, names=('a', 'b'))
        remembered = [request.getURL(1), request.getURL(1, True)]
        return remembered + [url_or_error(request, level, path_only)
                             for _ in range(2)]

    assert ask(factories.browser) == ask(BrowserRequest)


def test_a_name_that_is_not_text_fails_as_it_does_in_zope_publisher(urls):
    def ask(make):
        return url_or_error(url_request(make, names=('a', ['b'])), 0, False)

    assert ask(factories.browser) is ask(BrowserRequest) is AttributeError


def test_remembered_urls_are_bounded(urls, monkeypatch):
    """Host and names are the client's: at most MAX_URLS URLs are kept
    (then they are forgotten and remembered afresh)."""
    monkeypatch.setattr(factories, 'MAX_URLS', 3)
    for number in range(10):
        request = url_request(factories.browser, names=('n%d' % number,))
        assert request.getURL() == 'http://localhost/n%d' % number
        assert 1 <= len(factories._urls) <= 3


# -- the default skin: zope.publisher's, remembered per class and registry

class ISkinA(IDefaultBrowserLayer):
    """A skin."""


class ISkinB(IDefaultBrowserLayer):
    """Another skin."""


class IExtra(Interface):
    """Something a request class may come to implement."""


class NotASkin(Interface):
    """An interface that is no skin type."""


def mark_skins():
    from zope.interface import directlyProvides
    from zope.publisher.interfaces.browser import IBrowserSkinType
    for skin in (ISkinA, ISkinB):
        directlyProvides(skin, IBrowserSkinType)


@pytest.fixture
def skins(clean_zope):
    from zope.component.hooks import setHooks
    setHooks()
    mark_skins()
    factories.clear_skins()
    yield
    factories.clear_skins()


def zope_publishers_default_skin():
    """What zope.publisher's configure.zcml registers."""
    from zope.component import provideAdapter
    from zope.publisher.interfaces import IDefaultSkin
    from zope.publisher.interfaces.browser import IBrowserRequest
    from zope.publisher.skinnable import getDefaultSkin
    provideAdapter(getDefaultSkin, (IBrowserRequest,), IDefaultSkin,
                   name='default')


def default_skin_directive(skin):
    """What ``<browser:defaultSkin name="..." />`` does."""
    from zope.component import provideUtility
    from zope.publisher.interfaces.browser import IBrowserSkinType
    from zope.publisher.zcml import setDefaultSkin
    provideUtility(skin, IBrowserSkinType, skin.__name__)
    setDefaultSkin(skin.__name__)


def skin_registration(name):
    if name == 'zope.publisher':
        zope_publishers_default_skin()
    elif name == 'defaultSkin directive':
        zope_publishers_default_skin()
        default_skin_directive(ISkinA)


def stock_skinned(cls, method):
    from zope.publisher.skinnable import setDefaultSkin
    request = cls(io.BytesIO(b''), environ_for(method, 'text/xml'))
    setDefaultSkin(request)
    return request


def own_declarations(request):
    return list(directlyProvidedBy(request))


@pytest.mark.parametrize('registration', [
    'nothing', 'zope.publisher', 'defaultSkin directive'])
@over_factories
def test_a_remembered_default_skin_is_the_one_zope_publisher_sets(
        skins, registration, factory, stock, method):
    """The first request of a class is skinned the stock way, the next
    ones get the same declaration (zope.interface's own object for it)."""
    skin_registration(registration)
    made = []
    for attempt in ('first', 'remembered'):
        ours = factory(io.BytesIO(b''), environ_for(method, 'text/xml'))
        assert (attempt, own_declarations(ours)) == (
            attempt, own_declarations(stock_skinned(stock, method)))
        made.append(providedBy(ours))
    assert made[0] is made[1]
    assert len(factories._skins) == 1


def test_the_default_skins_are_those_the_site_zcml_gives(clean_zope):
    load_zcml(DEFAULT_SITE_ZCML)
    factories.clear_skins()
    for _ in range(2):
        request = factories.browser(io.BytesIO(b''), environ_for('GET'))
        assert own_declarations(request) == [IDefaultBrowserLayer]
    assert len(factories._skins) == 1


def test_a_default_skin_registered_later_is_given_at_once(skins):
    zope_publishers_default_skin()
    assert own_declarations(factories.browser(
        io.BytesIO(b''), environ_for('GET'))) == [IDefaultBrowserLayer]
    default_skin_directive(ISkinB)
    assert own_declarations(factories.browser(
        io.BytesIO(b''), environ_for('GET'))) == [ISkinB]


def test_a_request_class_that_comes_to_implement_more_is_skinned_afresh(
        skins):
    """No registration changes (the generation stays): the class's own
    declarations do, and the skin registered for them is given."""
    from zope.component import provideAdapter
    from zope.interface import classImplements
    from zope.publisher.interfaces import IDefaultSkin

    class MyRequest(factories.BrowserRequest):
        __slots__ = ('__provides__',)

    zope_publishers_default_skin()
    provideAdapter(ISkinB, (IExtra,), IDefaultSkin)
    make = factories.RequestFactory(MyRequest)
    assert own_declarations(make(io.BytesIO(b''), environ_for('GET'))) == [
        IDefaultBrowserLayer]
    classImplements(MyRequest, IExtra)
    assert own_declarations(make(io.BytesIO(b''), environ_for('GET'))) == [
        ISkinB]


@pytest.mark.parametrize('name', ['', 'default'])
def test_a_default_skin_made_per_request_is_made_every_time(skins, name):
    """An adapter (unnamed, or a ``default`` one other than
    zope.publisher's) is called with the request: nothing is
    remembered."""
    from zope.component import provideAdapter
    from zope.publisher.interfaces import IDefaultSkin
    from zope.publisher.interfaces.browser import IBrowserRequest

    def by_header(request):
        return ISkinA if request.get('HTTP_X_SKIN') == 'a' else ISkinB

    zope_publishers_default_skin()
    provideAdapter(by_header, (IBrowserRequest,), IDefaultSkin, name=name)
    for header, skin in [('a', ISkinA), ('b', ISkinB), ('a', ISkinA)]:
        environ = dict(environ_for('GET'), HTTP_X_SKIN=header)
        request = factories.browser(io.BytesIO(b''), environ)
        assert (header, own_declarations(request)) == (header, [skin])
    assert factories._skins == {}


def test_a_request_that_declares_something_already_goes_the_stock_way(
        skins):
    """zope.publisher's setDefaultSkin replaces what the request
    declared: so does ours, for every such request."""
    from zope.interface import alsoProvides

    class MarkedRequest(factories.BrowserRequest):
        __slots__ = ('__provides__',)

        def __init__(self, *args):
            super().__init__(*args)
            alsoProvides(self, IExtra)

    zope_publishers_default_skin()
    make = factories.RequestFactory(MarkedRequest)
    for _ in range(2):
        request = make(io.BytesIO(b''), environ_for('GET'))
        assert own_declarations(request) == own_declarations(
            stock_skinned(MarkedRequest, 'GET')) == [IDefaultBrowserLayer]
    assert factories._skins == {}


def test_a_persistent_registry_is_not_remembered(skins):
    """A local site's registry is persistent: remembering it would keep
    its connection alive."""
    from zope.component.persistentregistry import PersistentComponents
    from zope.interface.registry import Components
    from zope.publisher.interfaces import IDefaultSkin

    components = PersistentComponents('local')
    components.__bases__ = (Components('unused'),)
    default_skin_directive(ISkinA)
    components.registerAdapter(ISkinB, (IBrowserRequest,), IDefaultSkin)
    assert_skinned_every_time_in(components, [ISkinB])


def test_a_default_skin_that_is_no_skin_type_is_refused_every_time(skins):
    from zope.component import provideAdapter
    from zope.publisher.interfaces import IDefaultSkin
    provideAdapter(NotASkin, (IBrowserRequest,), IDefaultSkin)
    for make in (factories.browser, factories.browser,
                 lambda stream, environ: stock_skinned(BrowserRequest, 'GET')):
        with pytest.raises(TypeError, match="doesn't provide ISkinType"):
            make(io.BytesIO(b''), environ_for('GET'))
    assert factories._skins == {}


def test_remembered_default_skins_are_bounded(skins, monkeypatch):
    monkeypatch.setattr(factories, 'MAX_SKINS', 2)
    zope_publishers_default_skin()
    for number in range(5):
        cls = type('Request%d' % number, (factories.BrowserRequest,),
                   {'__slots__': ('__provides__',)})
        request = factories.RequestFactory(cls)(io.BytesIO(b''),
                                                environ_for('GET'))
        assert own_declarations(request) == [IDefaultBrowserLayer]
        assert 1 <= len(factories._skins) <= 2


def test_a_registry_that_cannot_tell_its_changes_is_asked_every_time(
        skins):
    """A site manager whose adapter registry has no generation (not
    zope.interface's): nothing is remembered."""
    from zope.component import getGlobalSiteManager

    class Lookups:
        def lookup(self, *args):
            return getGlobalSiteManager().adapters.lookup(*args)

        def adapter_hook(self, *args):
            return getGlobalSiteManager().adapters.adapter_hook(*args)

    class SiteManager:
        adapters = Lookups()

    zope_publishers_default_skin()
    assert_skinned_every_time_in(SiteManager(), [IDefaultBrowserLayer])


def assert_skinned_every_time_in(site_manager, skins):
    """Requests made in a site of ``site_manager`` get ``skins`` and
    nothing is remembered."""
    from zope.component.hooks import setSite

    class Site:
        def getSiteManager(self):
            return site_manager

    setSite(Site())
    try:
        for _ in range(2):
            request = factories.browser(io.BytesIO(b''), environ_for('GET'))
            assert own_declarations(request) == skins
    finally:
        setSite(None)
    assert factories._skins == {}
