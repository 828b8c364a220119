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
from zope.publisher.interfaces.browser import IDefaultBrowserLayer
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline.app import DEFAULT_SITE_ZCML
from zope.pipeline.app import load_zcml
from zope.pipeline.engine import factories
from zope.pipeline.interfaces import IRequestFactory

from .engine_files import ROOT  # noqa: F401 - puts tests.engine on the path
from .test_speedups_zope_publisher import stock_publisher  # noqa: F401
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
#: ``setupLocale`` and ``__repr__``: classes in its resolution order, and
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
def test_requests_are_zope_publisher_requests_but_for_linear_work(
        stock_publisher, factory, stock, method):
    """The classes made differ from zope.publisher's in a ``repr`` naming
    zope.publisher's class, as the classic publisher's requests did, and
    in what would cost more than linear work (``setupLocale`` and
    ``LINEAR_WORK``, with the responses they make and the checker of
    zope.publisher's class they are proxied with) alone: every other
    attribute is zope.publisher's, the instances have the same slots (no
    ``__dict__`` where zope.publisher's have none) and provide the same
    interfaces."""
    request = factory(io.BytesIO(b''), environ_for(method, 'text/xml'))
    cls = type(request)
    mixins, methods = LINEAR_WORK[stock]
    assert isinstance(request, stock) and cls is not stock
    assert cls.__name__ == stock.__name__
    mro = (cls, factories.StockRepr, factories.BoundedLocale) + \
        mixins + stock.__mro__
    assert cls.__mro__ == mro
    bookkeeping = {'__doc__', '__module__', '__slots__', '__provides__',
                   '__implemented__', '__providedBy__', '__qualname__'}
    assert set(vars(cls)) - bookkeeping == methods
    assert set(vars(factories.StockRepr)) - bookkeeping == {'__repr__'}
    assert set(vars(factories.BoundedLocale)) - bookkeeping == {
        'setupLocale'}
    assert set(vars(factories.BoundedCharsets)) - bookkeeping == {
        '_decode'}
    assert set(vars(factories.LinearCookies)) - bookkeeping == {
        '_parseCookies'}
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


# -- the locale: zope.publisher's, among a few language tags

ACCEPT_LANGUAGES = ['', 'en', 'de-CH,de;q=0.8,en;q=0.5', 'xx-yy, fr',
                    'en;q=0, de', 'pt-br', 'en;q=bad, de', '*', 'zz']


@pytest.fixture
def languages(clean_zope):
    from zope.component.hooks import setHooks
    setHooks()


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
def test_the_locale_is_the_one_zope_publisher_sets_up(
        languages, adapter, header):
    """The same locale object, the same languages noted."""
    from zope.publisher import browser
    language_adapter(getattr(browser, adapter))
    ours = locale_request(factories.browser, header)
    stock = locale_request(stock_request, header)
    assert described(ours) == described(stock)
    assert ours.locale is stock.locale


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
    """An adapter of the application's (here one that reads a cookie)."""
    from zope.publisher.browser import BrowserLanguages

    class CookieLanguages(BrowserLanguages):
        def getPreferredLanguages(self):
            return [self.request.get('lang', 'en')]

    language_adapter(CookieLanguages)
    for cookie, language in [('lang=de', 'de'), ('lang=fr', 'fr'),
                             (None, 'en')]:
        request = locale_request(factories.browser, 'en', cookie)
        assert described(request)[0] == (language, None, None)


def test_without_a_language_adapter_a_request_has_no_locale(languages):
    assert locale_request(factories.browser, 'en').locale is None
    assert locale_request(stock_request, 'en').locale is None


def test_a_header_that_is_not_text_goes_the_stock_way(languages):
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    for make in (factories.browser, stock_request):
        with pytest.raises(TypeError):
            locale_request(make, b'en')


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


def test_a_language_adapter_registered_later_is_used_at_once(languages):
    """A registration is seen by the next request."""
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
    """A class declaring another interface gets the adapter registered
    for it."""
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
    """``__conform__`` comes before the registry."""
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


def test_a_persistent_registrys_language_factory_is_not_remembered(
        languages):
    """A local site's (persistent) registry is asked."""
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


def test_another_adapter_hook_is_asked_every_time(languages):
    """An adapter hook of the application's comes before zope.component's
    registry."""
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


def test_a_subclass_of_ours_is_named_in_its_repr():
    class MyRequest(factories.BrowserRequest):
        __slots__ = ()

    request = MyRequest(io.BytesIO(b''), environ_for('GET'))
    assert repr(request) == '<%s.MyRequest instance URL=http://localhost>' % (
        __name__)


# -- the default skin: zope.publisher's

class ISkinA(IDefaultBrowserLayer):
    """A skin."""


class ISkinB(IDefaultBrowserLayer):
    """Another skin."""


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
def test_the_default_skin_is_the_one_zope_publisher_sets(
        skins, registration, factory, stock, method):
    skin_registration(registration)
    ours = factory(io.BytesIO(b''), environ_for(method, 'text/xml'))
    assert own_declarations(ours) == own_declarations(
        stock_skinned(stock, method))


def test_the_default_skins_are_those_the_site_zcml_gives(clean_zope):
    load_zcml(DEFAULT_SITE_ZCML)
    request = factories.browser(io.BytesIO(b''), environ_for('GET'))
    assert own_declarations(request) == [IDefaultBrowserLayer]


def test_a_default_skin_registered_later_is_given_at_once(skins):
    zope_publishers_default_skin()
    assert own_declarations(factories.browser(
        io.BytesIO(b''), environ_for('GET'))) == [IDefaultBrowserLayer]
    default_skin_directive(ISkinB)
    assert own_declarations(factories.browser(
        io.BytesIO(b''), environ_for('GET'))) == [ISkinB]
