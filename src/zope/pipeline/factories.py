"""Request factories: zope.publisher's request classes, made per request."""

import io

from zope.interface import implementedBy
from zope.interface import implementer
from zope.interface import providedBy
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.skinnable import setDefaultSkin
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline.interfaces import IRequestFactory


@implementer(IRequestFactory)
class RequestFactory:
    """Makes requests of one zope.publisher request class.

    ``request_interface`` is the interface that marks requests of this type
    (used to name the type of a request in logs and introspection).
    """

    def __init__(self, request_class, request_interface=None):
        self.request_class = request_class
        self.request_interface = request_interface or implementedBy(
            request_class)

    def canHandle(self, environ):
        return True

    def __call__(self, input_stream, environ):
        request = self.request_class(input_stream, environ)
        setDefaultSkin(request)
        return request

    def __repr__(self):
        return '<RequestFactory %s.%s>' % (self.request_class.__module__,
                                           self.request_class.__name__)


browser = RequestFactory(BrowserRequest, IBrowserRequest)
xmlrpc = RequestFactory(XMLRPCRequest, IXMLRPCRequest)
http = RequestFactory(HTTPRequest, IHTTPRequest)


def request_interface_of(factory):
    """Return the interface that marks requests made by ``factory``."""
    interface = getattr(factory, 'request_interface', None)
    return interface if interface is not None else implementedBy(
        factory.request_class)


def probe_spec(factory, method='GET'):
    """Return the interfaces a request made by ``factory`` provides.

    Made from a real request for a synthetic environ, so the spec (default
    skin included) is the one the switch sees at run time.  Works for any
    IRequestFactory, not only ``RequestFactory``.
    """
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    request = factory(environ['wsgi.input'], environ)
    spec = providedBy(request)
    request.close()
    return spec


def as_request_factory(factory):
    """Return ``factory`` as an IRequestFactory (wrapping a request class)."""
    if IRequestFactory.providedBy(factory):
        return factory
    return RequestFactory(factory)
