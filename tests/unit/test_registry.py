"""The registry of one configuration: stages per request type, and the
request factory lookup by (method, mimetype), priority and canHandle."""

import pytest
from zope.configuration.exceptions import ConfigurationError
from zope.interface import implementedBy
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces import IRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline.engine import factories
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.engine.registry import RequestFactoryRegistration
from zope.pipeline.engine.registry import StageRegistration
from zope.pipeline.engine.registry import mimetype_of

from .engine_files import at


class Factory:
    """A request factory stub that may decline."""

    def __init__(self, accepts=True):
        self.accepts = accepts

    def canHandle(self, environ):
        return self.accepts


def registry_with(*registrations):
    registry = PipelineRegistry()
    for name, methods, mimetypes, priority, accepts in registrations:
        registry.add_request_factory(RequestFactoryRegistration(
            name, Factory(accepts), methods.split(), mimetypes.split(),
            priority))
    return registry


def chosen(registry, method, content_type=None):
    environ = {'REQUEST_METHOD': method}
    if content_type is not None:
        environ['CONTENT_TYPE'] = content_type
    registration = registry.choose_request_factory(environ)
    return registration.name if registration is not None else None


LOOKUP = registry_with(
    ('any', '*', '*', 0, True),
    ('post', 'POST', '*', 50, True),
    ('json', 'POST', 'application/json', 1, True),
    ('json-declining', 'POST', 'application/json', 99, False),
    ('get-low', 'GET', '*', 1, True),
    ('get-high', 'GET', '*', 7, True),
)


def test_method_and_mimetype_key_wins_over_higher_priority_method_key():
    assert chosen(LOOKUP, 'POST', 'application/json') == 'json'


def test_mimetype_parameters_and_case_do_not_matter():
    assert chosen(LOOKUP, 'post', 'Application/JSON; charset=utf-8') == 'json'
    assert mimetype_of({'CONTENT_TYPE': ' Text/XML ; charset=utf-8'}) == (
        'text/xml')
    assert mimetype_of({}) == ''


def test_method_key_is_used_when_no_factory_has_the_mimetype():
    assert chosen(LOOKUP, 'POST', 'text/plain') == 'post'


def test_any_method_key_is_the_last_resort():
    assert chosen(LOOKUP, 'PROPFIND') == 'any'
    assert chosen(LOOKUP, 'DELETE', 'application/json') == 'any'


def test_higher_priority_wins_within_one_key_whatever_the_order():
    assert chosen(LOOKUP, 'GET') == 'get-high'


def test_declining_factory_lets_the_next_one_handle_the_request():
    registry = registry_with(('picky', 'GET', '*', 9, False),
                             ('next', 'GET', '*', 1, True))
    assert chosen(registry, 'GET') == 'next'


def test_declining_last_factory_of_a_key_falls_through_to_the_next_key():
    registry = registry_with(('picky', 'GET', '*', 9, False),
                             ('any', '*', '*', 0, True))
    assert chosen(registry, 'GET') == 'any'


def test_no_factory_at_all_gives_none():
    registry = registry_with(('picky', 'GET', '*', 9, False))
    assert chosen(registry, 'GET') is None
    assert chosen(registry, 'PUT') is None


def test_missing_method_counts_as_get():
    assert LOOKUP.choose_request_factory({}).name == 'get-high'


def test_equal_priorities_in_one_key_fail_naming_both_registrations(build):
    with pytest.raises(ConfigurationError) as caught:
        build('equal_priorities.zcml')
    assert str(caught.value) == (
        "Request factories 'one' (registered at %s) and 'other' (registered "
        "at %s) both handle method GET and mimetype * with priority 5: give "
        "them different priorities." % (
            at('equal_priorities.zcml', '"one"'),
            at('equal_priorities.zcml', '"other"')))


def test_equal_priorities_in_different_keys_are_fine():
    registry = registry_with(('get', 'GET', '*', 5, True),
                             ('put', 'PUT', '*', 5, True),
                             ('json', 'GET', 'application/json', 5, True))
    assert set(registry.factory_table()) == {
        ('GET', '*'), ('PUT', '*'), ('GET', 'application/json')}


def test_factory_table_is_cached_until_a_factory_is_added():
    registry = registry_with(('get', 'GET', '*', 5, True))
    table = registry.factory_table()
    assert registry.factory_table() is table
    registry.add_request_factory(RequestFactoryRegistration(
        'put', Factory(), ['PUT']))
    assert ('PUT', '*') in registry.factory_table()


def test_request_factory_registration_normalises_methods_and_mimetypes():
    registration = RequestFactoryRegistration(
        'x', Factory(), ['get', 'Post'], ['Text/XML'], 3, info='here.zcml')
    assert registration.methods == ('GET', 'POST')
    assert registration.mimetypes == ('text/xml',)
    assert repr(registration) == (
        "<RequestFactoryRegistration 'x' at here.zcml>")


# -- stages per request type

def stage(name, for_=None, order=None):
    return StageRegistration(name, for_, object, order=order)


def test_most_specific_registration_of_a_name_wins_keeping_registry_order():
    registry = PipelineRegistry()
    generic_call = stage('call', IRequest)
    for registration in (stage('outer'), generic_call,
                         stage('form', IBrowserRequest),
                         stage('call', IXMLRPCRequest),
                         stage('call', IHTTPRequest)):
        registry.add_stage(registration)
    xmlrpc = registry.inner_stages(implementedBy(XMLRPCRequest))
    assert [(item.name, item.for_) for item in xmlrpc] == [
        ('call', IXMLRPCRequest)]
    browser = registry.inner_stages(implementedBy(BrowserRequest))
    assert [(item.name, item.for_) for item in browser] == [
        ('form', IBrowserRequest), ('call', IHTTPRequest)]
    assert [item.name for item in registry.outer_stages()] == ['outer']
    assert registry.stage_names() == {'outer', 'call', 'form'}
    assert generic_call not in browser


def test_stage_order_is_claimed_once_per_name_and_interface():
    registry = PipelineRegistry()
    assert registry.order_of('a', None) == 0
    assert registry.order_of('b', IRequest) == 1
    assert registry.order_of('a', None) == 0
    assert registry.order_of('a', IRequest) == 2
    explicit = stage('c', order=42)
    registry.add_stage(explicit)
    implicit = stage('b', IRequest)
    registry.add_stage(implicit)
    assert (explicit.order, implicit.order) == (42, 1)


def test_request_type_is_named_by_the_most_specific_request_interface():
    registry = PipelineRegistry()
    for name, factory in (('http', factories.http),
                          ('xmlrpc', factories.xmlrpc),
                          ('browser', factories.browser)):
        registry.add_request_factory(RequestFactoryRegistration(
            name, factory))
    assert registry.request_type_of(implementedBy(XMLRPCRequest)) == 'xmlrpc'
    assert registry.request_type_of(implementedBy(BrowserRequest)) == (
        'browser')
    assert registry.request_type_of(implementedBy(HTTPRequest)) == 'http'
    assert registry.request_type_of(implementedBy(object)) is None


def test_outer_stage_repr_says_outer():
    registration = StageRegistration('retry', None, object, info='x.zcml')
    assert repr(registration) == (
        "<StageRegistration 'retry' for outer at x.zcml>")
