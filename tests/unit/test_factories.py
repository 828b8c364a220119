"""Request factories: the default three, the lookup through a compiled
pipeline, declining factories, and 405 when no factory handles a request."""

import io

from zope.interface import implementedBy
from zope.interface import providedBy
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
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


def test_requests_are_zope_publisher_requests_with_the_default_skin():
    browser = factories.browser(io.BytesIO(b''), environ_for('GET'))
    assert type(browser) is BrowserRequest
    assert IDefaultBrowserLayer.providedBy(browser)
    xmlrpc = factories.xmlrpc(io.BytesIO(b''), environ_for('POST', 'text/xml'))
    assert type(xmlrpc) is XMLRPCRequest
    assert type(factories.http(io.BytesIO(b''), environ_for('PUT'))) is (
        HTTPRequest)


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
