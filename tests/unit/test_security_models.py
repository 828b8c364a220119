"""Choosing a request type's security model in ZCML (pipeline:security,
pipeline:requestFactory's security) and what the models are made of
(zope.pipeline.security.models)."""

import pytest
from zope.component import provideAdapter
from zope.component.security import LocatingTrustedAdapterFactory
from zope.component.security import protectedFactory
from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import implementer
from zope.publisher.browser import BrowserView
from zope.publisher.browser import TestRequest as BrowserRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.security.checker import NamesChecker
from zope.security.checker import ProxyFactory
from zope.security.checker import defineChecker
from zope.security.interfaces import Forbidden
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy

from zope.pipeline.app import load_zcml
from zope.pipeline.engine.introspect import format_text
from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.interfaces import ITrustedView
from zope.pipeline.publishing.publication import ViewCheckedPublication
from zope.pipeline.security import models as securitymodels

SITE = '''<configure xmlns="http://namespaces.zope.org/zope"
           xmlns:pipeline="http://namespaces.zope.org/pipeline">
  <include package="zope.pipeline" file="pipeline.zcml" />
  %s
</configure>
'''


@pytest.fixture
def configure(clean_zope, tmp_path):
    def load(directives):
        path = tmp_path / 'site.zcml'
        path.write_text(SITE % directives)
        load.path = str(path)
        return load_zcml(str(path))
    return load


def securities(registry):
    return {registration.name: registration.security
            for registration in registry.request_factories}


def test_request_types_are_proxied_unless_a_directive_says_otherwise(
        configure):
    assert securities(configure('')) == dict.fromkeys(
        ['browser', 'xmlrpc', 'http'], 'proxied')


def test_security_directive_without_names_chooses_for_every_request_type(
        configure):
    assert securities(configure(
        '<pipeline:security model="view-checked" />')) == dict.fromkeys(
        ['browser', 'xmlrpc', 'http'], 'view-checked')


def test_security_directive_chooses_for_the_request_types_it_names(
        configure):
    registry = configure('<pipeline:security model="view-checked" '
                         'request_types="browser xmlrpc" />')
    assert securities(registry) == {'browser': 'view-checked',
                                    'xmlrpc': 'view-checked',
                                    'http': 'proxied'}
    text = format_text(Publisher(registry).describe(), 'browser')
    assert '  security:      view-checked (pipeline:security at %s:4)\n' % (
        configure.path) in text
    assert '  made from:     pipeline:requestFactory at ' in text
    # which views of the view-checked chain run on bare objects
    trusted = ' '.join(text.split('  trusted views: ')[1].split(
        '\n  made from')[0].split())
    assert trusted.startswith(
        'views providing zope.pipeline.interfaces.ITrustedView, '
        'grokcore.view.interfaces.IGrokSecurityView, '
        'grokcore.view.interfaces.IGrokView, grokcore.rest.interfaces.IREST '
        'run on bare objects, their permission checked once when called; '
        'every other view is made on the security-proxied context, stays '
        'proxied and is checked as in the proxied chain')
    assert 'trusted views' not in format_text(Publisher(registry).describe(),
                                              'http')


def test_security_directive_naming_an_unknown_request_type_fails(configure):
    with pytest.raises(ConfigurationError) as raised:
        configure('<pipeline:security model="view-checked" '
                  'request_types="browser pages" />')
    assert 'pipeline:security at %s:4 names request types that are not ' \
        'registered: pages (registered: browser, http, xmlrpc).' % (
            configure.path) in str(raised.value)


def test_unknown_security_model_fails_with_the_accepted_ones(configure):
    with pytest.raises(ConfigurationError) as raised:
        configure('<pipeline:security model="trusting" />')
    assert 'model="trusting" at %s:4: expected one of: proxied, ' \
        'view-checked.' % configure.path in str(raised.value)


def test_request_factory_takes_a_security_model(configure):
    registry = configure(
        '<pipeline:requestFactory name="pages" factory="zope.pipeline.'
        'engine.factories.browser" methods="GET" mimetypes="text/plain" '
        'priority="50" security="bogus" />'.replace('bogus', 'proxied'))
    assert securities(registry)['pages'] == 'proxied'
    with pytest.raises(ConfigurationError) as raised:
        configure('<pipeline:requestFactory name="pages" factory="zope.'
                  'pipeline.engine.factories.browser" security="bogus" />')
    assert 'security="bogus" at %s:4: expected one of' % configure.path in \
        str(raised.value)


def test_chain_without_request_type_is_proxied(configure):
    from zope.pipeline.engine.build import BuildContext
    registry = configure('<pipeline:security model="view-checked" />')
    assert registry.request_type_named('pages') is None
    build = BuildContext(registry, {}, [], None, None,
                         registry.request_type_named(None))
    assert (build.security, build.after_traversal_event,
            build.method_not_allowed) == ('proxied', None, None)


def test_each_model_is_one_object_the_stages_ask():
    from zope.pipeline.publishing.publication import Publication
    from zope.pipeline.publishing.publication import publication_factory
    proxied = securitymodels.security_model('proxied')
    checked = securitymodels.security_model('view-checked')
    assert (proxied, checked) == (securitymodels.PROXIED_MODEL,
                                  securitymodels.VIEW_CHECKED_MODEL)
    assert sorted(securitymodels.MODELS) == sorted(
        securitymodels.SECURITY_MODELS)
    assert publication_factory(proxied) is Publication
    assert not proxied.checks_view_when_called
    assert not proxied.locates_errors_at_published
    assert proxied.trusted_views() == ()
    assert proxied.describe() == {'security': 'proxied',
                                  'trusted_views': []}
    factory = publication_factory(checked)
    assert factory.func is ViewCheckedPublication
    assert factory.keywords['trusted_views'] == checked.trusted_views()
    assert ITrustedView in factory.keywords['trusted_views']
    assert factory.keywords['bare_views'] == checked.bare_views()
    assert proxied.bare_views() == ()
    assert checked.checks_view_when_called
    assert checked.locates_errors_at_published
    assert checked.describe()['trusted_views'][0] == \
        'zope.pipeline.interfaces.ITrustedView'
    assert repr(checked) == '<security model view-checked>'


def test_only_the_view_checked_model_trusts_views():
    trusted = TrustedPage(Content(), None)
    assert securitymodels.PROXIED_MODEL.trusted_as(trusted) is None
    assert securitymodels.VIEW_CHECKED_MODEL.trusted_as(trusted) == \
        'zope.pipeline.interfaces.ITrustedView'
    assert securitymodels.VIEW_CHECKED_MODEL.trusted_as(Content()) == ''


def test_trusted_view_interfaces_are_those_loaded(monkeypatch):
    from zope.pipeline.interfaces import ITrustedView
    monkeypatch.setattr(securitymodels, 'TRUSTED_VIEW_INTERFACES', (
        ('zope.pipeline.interfaces', 'ITrustedView'),
        ('not.loaded.anywhere', 'IView')))
    assert securitymodels.trusted_view_interfaces() == (ITrustedView,)


# -- what a view-checked chain makes of a view (securitymodels)

class Content:
    """Content without security declarations."""


class Page:
    """A view that is not trusted."""

    def __init__(self, context, request):
        self.context = context
        self.request = request


@implementer(ITrustedView)
class TrustedPage(Page):
    """A view that says it is trusted."""


class IMarked(Interface):
    """A trusted interface that is not handed back bare."""


def made_by_a_function(context, request):
    """A view factory that says nothing of what it makes."""
    return TrustedPage(context, request)


def nothing(context, request):
    return None


@pytest.fixture
def views(clean_zope):
    for name, factory in (('page', Page), ('trusted', TrustedPage),
                          ('function', made_by_a_function),
                          ('nothing', nothing)):
        provideAdapter(factory, (Content, IBrowserRequest), Interface, name)
    return BrowserRequest()


def is_proxied(ob):
    return type(ob) is Proxy


def test_trusted_factory_looks_into_the_factories_it_wraps():
    trusted = (ITrustedView,)
    assert securitymodels.trusted_factory(TrustedPage, trusted)
    assert not securitymodels.trusted_factory(Page, trusted)
    assert securitymodels.trusted_factory(
        protectedFactory(TrustedPage, Interface, 'zope.Public'), trusted)
    assert securitymodels.trusted_factory(
        LocatingTrustedAdapterFactory(TrustedPage), trusted)
    assert not securitymodels.trusted_factory(made_by_a_function, trusted)

    class Endless:
        """A factory wrapping itself, endlessly."""

        @property
        def factory(self):
            return self
    assert not securitymodels.trusted_factory(Endless(), trusted)


def test_untrusted_view_is_made_on_the_proxied_object_and_proxied(views):
    ob = Content()
    view = securitymodels.query_view(ob, views, 'page', (ITrustedView,))
    assert is_proxied(view)
    assert is_proxied(removeSecurityProxy(view).context)
    assert removeSecurityProxy(removeSecurityProxy(view).context) is ob


def test_trusted_view_is_made_on_the_object_itself(views):
    ob = Content()
    for name in ('trusted', 'function'):
        view = securitymodels.query_view(ob, views, name, (ITrustedView,))
        assert not is_proxied(view) and view.context is ob, name
    assert securitymodels.query_view(ob, views, 'nothing', ()) is None
    assert securitymodels.query_view(ob, views, 'missing', ()) is None


def test_registry_of_its_own_is_asked_with_the_proxied_object(
        views, monkeypatch):
    monkeypatch.setattr(securitymodels.components, 'lookup_registry',
                        lambda sm: None)
    ob = Content()
    view = securitymodels.query_view(ob, views, 'page', (ITrustedView,))
    assert is_proxied(removeSecurityProxy(view).context)
    view = securitymodels.query_view(ob, views, 'function', (ITrustedView,))
    assert view.context is ob


def test_untrusted_view_made_on_bare_object_is_made_again_or_refused(views):
    ob = Content()
    bare = Page(ob, views)
    trusted = (ITrustedView,)
    assert securitymodels.untrusted_view_of(views, bare, trusted)
    assert not securitymodels.on_proxied_context(bare)
    view = securitymodels.remake_untrusted_view(
        bare, views, (None, 'trusted', 'page'), trusted)
    assert type(removeSecurityProxy(view)) is Page
    assert securitymodels.on_proxied_context(removeSecurityProxy(view))
    with pytest.raises(Forbidden) as raised:
        securitymodels.remake_untrusted_view(bare, views, ('missing',),
                                             trusted)
    assert 'cannot be made again on the proxied one' in str(raised.value)
    # a trusted view, or what is no view of this request, is left alone
    assert not securitymodels.untrusted_view_of(
        views, TrustedPage(ob, views), trusted)
    assert not securitymodels.untrusted_view_of(
        BrowserRequest(), bare, trusted)


def test_browser_views_are_handed_back_bare_only_when_marked():
    marked = BrowserView(Content(), BrowserRequest())
    alsoProvides(marked, IMarked)
    assert not is_proxied(securitymodels.bare_unless_untrusted_view(
        marked, (IMarked,)))
    assert is_proxied(securitymodels.bare_unless_untrusted_view(
        marked, (ITrustedView,)))
    content = Content()
    assert securitymodels.bare_unless_untrusted_view(
        ProxyFactory(content), ()) is content


def test_view_checked_publication_keeps_what_is_proxied_proxied(views):
    publication = ViewCheckedPublication([], {}, 'context',
                                         trusted_views=(ITrustedView,))
    proxied = ProxyFactory(Content())
    # looked up on a proxied object (reached through an untrusted view),
    # a view is made on it as in the proxied chain, even a trusted one
    view = publication.query_view(views, proxied, 'trusted')
    assert view.context is proxied
    found = publication.wrap(views, ProxyFactory(Page(Content(), views)),
                             'x', Content())
    assert is_proxied(found)


def test_method_view_of_view_checked_chain(views):
    from zope.pipeline.stages.call import checked_method_handler

    class Methods(Page):
        def PUT(self):
            return 'put'
    defineChecker(Methods, NamesChecker(['PUT']))
    provideAdapter(Methods, (Content, IBrowserRequest), Interface, 'PUT')
    request = BrowserRequest(environ={'REQUEST_METHOD': 'PUT'})
    handler = checked_method_handler(Content(), request)
    assert is_proxied(handler) and handler() == 'put'
    assert is_proxied(removeSecurityProxy(handler).__self__.context)
    handler = checked_method_handler(ProxyFactory(Content()), request)
    assert handler() == 'put'
    # a view named after the method without the method; no view at all
    provideAdapter(Page, (Content, IBrowserRequest), Interface, 'LOCK')
    request = BrowserRequest(environ={'REQUEST_METHOD': 'LOCK'})
    assert checked_method_handler(Content(), request) is None
    request = BrowserRequest(environ={'REQUEST_METHOD': 'MOVE'})
    assert checked_method_handler(Content(), request) is None
