"""Choosing a request type's security model in ZCML (pipeline:security,
pipeline:requestFactory's security) and what the models are made of
(zope.pipeline.securitymodels)."""

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import securitymodels
from zope.pipeline.app import load_zcml
from zope.pipeline.introspect import format_text
from zope.pipeline.publisher import Publisher

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
        'factories.browser" methods="GET" mimetypes="text/plain" '
        'priority="50" security="bogus" />'.replace('bogus', 'proxied'))
    assert securities(registry)['pages'] == 'proxied'
    with pytest.raises(ConfigurationError) as raised:
        configure('<pipeline:requestFactory name="pages" factory="zope.'
                  'pipeline.factories.browser" security="bogus" />')
    assert 'security="bogus" at %s:4: expected one of' % configure.path in \
        str(raised.value)


def test_chain_without_request_type_is_proxied(configure):
    from zope.pipeline.build import BuildContext
    registry = configure('<pipeline:security model="view-checked" />')
    assert registry.request_type_named('pages') is None
    build = BuildContext(registry, {}, [], None, None,
                         registry.request_type_named(None))
    assert (build.security, build.after_traversal_event,
            build.method_not_allowed) == ('proxied', None, None)


def test_trusted_view_interfaces_are_those_loaded(monkeypatch):
    from zope.pipeline.interfaces import ITrustedView
    monkeypatch.setattr(securitymodels, 'TRUSTED_VIEW_INTERFACES', (
        ('zope.pipeline.interfaces', 'ITrustedView'),
        ('not.loaded.anywhere', 'IView')))
    assert securitymodels.trusted_view_interfaces() == (ITrustedView,)
