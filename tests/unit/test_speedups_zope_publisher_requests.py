"""zope.pipeline._speedups.zope_publisher: the locale remembered per
Accept-Language and language factory, the default skin per request class
and registry; the same answers as zope.publisher's steps, the memos
bounded, a case a memo cannot tell the stock way."""

import io

import pytest
from zope.interface import Interface
from zope.interface import providedBy
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.browser import IDefaultBrowserLayer
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline._speedups import zope_publisher
from zope.pipeline.app import DEFAULT_SITE_ZCML
from zope.pipeline.app import load_zcml
from zope.pipeline.engine import factories

from . import test_factories as stock_tests
from .test_factories import ISkinA
from .test_factories import ISkinB

# The helpers, and the tests whose every step is the same with the seam:
# collected here again, they run with this module's fixtures (the seam
# installed).
from .test_factories import default_skin_directive
from .test_factories import described
from .test_factories import environ_for
from .test_factories import language_adapter
from .test_factories import language_of
from .test_factories import locale_request
from .test_factories import mark_skins
from .test_factories import own_declarations
from .test_factories import skin_registration
from .test_factories import stock_request
from .test_factories import stock_skinned
from .test_factories import (
    test_a_cookie_named_like_the_header_is_read_as_zope_publisher_reads_it,  # noqa: F401
)
from .test_factories import (
    test_a_default_skin_registered_later_is_given_at_once,  # noqa: F401
)
from .test_factories import (
    test_a_language_adapter_registered_later_is_used_at_once,  # noqa: F401
)
from .test_factories import (
    test_a_request_class_that_comes_to_implement_more_gets_its_adapter,  # noqa: F401,E501
)
from .test_factories import test_languages_noted_for_one_request_are_its_own  # noqa: F401
from .test_factories import test_languages_set_later_set_the_locale_up_again  # noqa: F401
from .test_factories import zope_publishers_default_skin
from .test_speedups_zope_publisher import publisher_speedups  # noqa: F401

#: The default factories, the zope.publisher class each extends and a
#: method each is chosen for.
over_factories = pytest.mark.parametrize('factory, stock, method', [
    (factories.browser, BrowserRequest, 'GET'),
    (factories.xmlrpc, XMLRPCRequest, 'POST'),
    (factories.http, HTTPRequest, 'PUT'),
], ids=['browser', 'xmlrpc', 'http'])


# -- the locale: zope.publisher's, remembered per Accept-Language

ACCEPT_LANGUAGES = ['', 'en', 'de-CH,de;q=0.8,en;q=0.5', 'xx-yy, fr',
                    'en;q=0, de', 'pt-br', 'en;q=bad, de', '*', 'zz']


@pytest.fixture
def languages(clean_zope, publisher_speedups):  # noqa: F811
    from zope.component.hooks import setHooks
    setHooks()


@pytest.mark.parametrize('adapter', [
    'BrowserLanguages', 'CacheableBrowserLanguages',
    'ModifiableBrowserLanguages'])
@pytest.mark.parametrize('header', ACCEPT_LANGUAGES)
def test_a_remembered_locale_is_the_one_zope_publisher_sets_up(
        languages, adapter, header):
    """The first request with a header sets it up the stock way, the next
    ones are given it: the same locale object, the same languages noted."""
    from zope.publisher import browser
    language_adapter(getattr(browser, adapter))
    for attempt in ('first', 'remembered'):
        ours = locale_request(factories.browser, header)
        stock = locale_request(stock_request, header)
        assert (attempt, described(ours)) == (attempt, described(stock))
        assert ours.locale is stock.locale
    assert len(zope_publisher._locales) == 1


def test_another_language_adapter_is_asked_every_time(languages):
    """An adapter of the application's (here one that reads a cookie) is
    not zope.publisher's: nothing is remembered."""
    stock_tests.test_another_language_adapter_is_asked_every_time(languages)
    assert zope_publisher._locales == {}


def test_without_a_language_adapter_a_request_has_no_locale(languages):
    stock_tests.test_without_a_language_adapter_a_request_has_no_locale(
        languages)
    assert zope_publisher._locales == {}


def test_a_header_that_is_not_text_goes_the_stock_way(languages):
    stock_tests.test_a_header_that_is_not_text_goes_the_stock_way(languages)
    assert zope_publisher._locales == {}


def test_remembered_locales_are_bounded(languages, monkeypatch):
    """The header is the client's: at most MAX_LOCALES outcomes are kept
    (then they are forgotten and remembered afresh)."""
    from zope.publisher.browser import ModifiableBrowserLanguages
    language_adapter(ModifiableBrowserLanguages)
    monkeypatch.setattr(zope_publisher, 'MAX_LOCALES', 3)
    for number in range(10):
        request = locale_request(factories.browser, 'en, x%d' % number)
        assert described(request)[0] == ('en', None, None)
        assert 1 <= len(zope_publisher._locales) <= 3


class ILanguageMarker(Interface):
    """Marks a request class given a language adapter of its own."""


def test_a_language_factory_is_remembered_per_interfaces_and_registry(
        languages):
    """The factory zope.component's hook would find for a request's
    interfaces in the current registry is looked up once."""
    from zope.i18n.interfaces import IUserPreferredLanguages
    from zope.publisher.browser import BrowserLanguages

    from zope.pipeline.components import adapter_factory
    language_adapter(BrowserLanguages)
    for _ in range(3):
        request = locale_request(factories.browser, 'fr')
        assert language_of(request) == 'fr'
        assert zope_publisher.language_factory(request) is adapter_factory(
            request, IUserPreferredLanguages) is BrowserLanguages
    # one for the request's class as it is made, one for it skinned
    assert [value[2] for value in zope_publisher._language_factories.values()
            ] == [BrowserLanguages, BrowserLanguages]


def test_a_request_that_conforms_is_asked_every_time(languages):
    """``__conform__`` comes before the registry: nothing is remembered."""
    stock_tests.test_a_request_that_conforms_is_asked_every_time(languages)
    assert zope_publisher._language_factories == {}


def test_a_persistent_registrys_language_factory_is_not_remembered(
        languages):
    """A local site's registry is persistent: remembering it would keep
    its connection alive (its factory is asked every time)."""
    stock_tests.test_a_persistent_registrys_language_factory_is_not_remembered(
        languages)
    assert zope_publisher._language_factories == {}


def test_another_adapter_hook_is_asked_every_time(languages):
    """An adapter hook of the application's comes before zope.component's
    registry: nothing is remembered."""
    stock_tests.test_another_adapter_hook_is_asked_every_time(languages)
    assert zope_publisher._language_factories == {}


def test_remembered_language_factories_are_bounded(languages, monkeypatch):
    from zope.publisher.browser import BrowserLanguages
    language_adapter(BrowserLanguages)
    monkeypatch.setattr(zope_publisher, 'MAX_LANGUAGE_FACTORIES', 2)
    for number in range(5):
        cls = type('Request%d' % number, (factories.BrowserRequest,),
                   {'__slots__': ('__provides__',)})
        request = locale_request(factories.RequestFactory(cls), 'fr')
        assert language_of(request) == 'fr'
        assert 1 <= len(zope_publisher._language_factories) <= 2


# -- the default skin: zope.publisher's, remembered per class and registry

class IExtra(Interface):
    """Something a request class may come to implement."""


class NotASkin(Interface):
    """An interface that is no skin type."""


@pytest.fixture
def skins(clean_zope, publisher_speedups):  # noqa: F811
    from zope.component.hooks import setHooks
    setHooks()
    mark_skins()


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
    assert len(zope_publisher._skins) == 1


def test_the_default_skins_are_those_the_site_zcml_gives(
        clean_zope, publisher_speedups):  # noqa: F811
    load_zcml(DEFAULT_SITE_ZCML)
    for _ in range(2):
        request = factories.browser(io.BytesIO(b''), environ_for('GET'))
        assert own_declarations(request) == [IDefaultBrowserLayer]
    assert len(zope_publisher._skins) == 1


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
    assert zope_publisher._skins == {}


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
    assert zope_publisher._skins == {}


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
    assert zope_publisher._skins == {}


def test_remembered_default_skins_are_bounded(skins, monkeypatch):
    monkeypatch.setattr(zope_publisher, 'MAX_SKINS', 2)
    zope_publishers_default_skin()
    for number in range(5):
        cls = type('Request%d' % number, (factories.BrowserRequest,),
                   {'__slots__': ('__provides__',)})
        request = factories.RequestFactory(cls)(io.BytesIO(b''),
                                                environ_for('GET'))
        assert own_declarations(request) == [IDefaultBrowserLayer]
        assert 1 <= len(zope_publisher._skins) <= 2


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
    assert zope_publisher._skins == {}

