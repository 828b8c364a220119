"""create_request: the request and response for this attempt.

The request factory is chosen by method, content type and priority (see
``zope.pipeline.engine.registry``); the request and its response go into the
environ; the request is closed when the response body is closed, and the
reference cycles zope.publisher's request is in are broken then
(``close_request``), so reference counting frees a request's objects when
the server drops its environ and the cyclic garbage collector has nothing
of it to collect.

Credentials come from the ``Authorization`` header only: zope.publisher
also takes them from ``CGI-Authorization`` (``HTTP_CGI_AUTHORIZATION``,
which a CGI gateway sets from the ``Authorization`` it was sent), a
header any client can send itself.  Unless
``create_request.trust_cgi_authorization`` says the server in front sets
it, the stage drops it from the environ before the request is made, so
the request sees no credentials in it; trusted, it holds the request's
credentials (zope.publisher prefers it to ``Authorization``), which the
authenticate stage counts and logs as any other.
"""

import functools

from zope.component import getUtility
from zope.interface import Interface
from zope.publisher.base import BaseRequest
from zope.publisher.base import BaseResponse
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces import NotFound
from zope.schema import Bool

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.interfaces import IPipelineRegistry
from zope.pipeline.publishing import responses


class ICreateRequestSettings(Interface):
    """Request factories are ZCML; one setting says what the responses
    tell about the server."""

    powered_by = Bool(
        title="Keep zope.publisher's X-Powered-By header (naming Zope and "
              'Python) on every response',
        default=False)
    trust_cgi_authorization = Bool(
        title='Take HTTP Basic credentials from the CGI-Authorization '
              'header (only behind a gateway that sets it itself and '
              "never passes the client's own)",
        default=False)


#: The environ key of a ``CGI-Authorization`` header.
CGI_AUTHORIZATION = 'HTTP_CGI_AUTHORIZATION'


def close_request(request):
    """Close ``request`` (zope.publisher's ``close()`` releases what it
    holds), then break the cycles its objects make with each other.

    Once its body is closed, nothing uses them: zope.publisher's request
    holds the environ it was made from (``_orig_env``, read only by
    ``retry()``, which the retry stage does not call), which holds the
    request; its response holds it back (``_request``, read while a result
    is set); and it holds the last object traversed (the view, which holds
    the request).  Left in place, every request is about thirty objects of
    cyclic garbage: the collector's youngest generation fills every twenty
    requests or so, and the objects of the requests in flight then are
    promoted until a full collection (tens of milliseconds in a loaded
    site) stops one request.  A request of another class is closed only.
    """
    try:
        request.close()
    finally:
        if isinstance(request, BaseRequest):
            request._last_obj_traversed = None
            response = request._response
            if isinstance(response, BaseResponse):
                response._request = None
        if isinstance(request, HTTPRequest):
            request._orig_env = None


class CreateRequestStage:
    """Make the request with the factory the publisher's registry chooses."""

    settings_schema = ICreateRequestSettings
    contract = Contract(
        writes=(keys.REQUEST_KEY, keys.RESPONSE_KEY, keys.REQUEST_TYPE,
                keys.POWERED_BY, CGI_AUTHORIZATION))

    def __init__(self, next_app, build=None, powered_by=False,
                 trust_cgi_authorization=False):
        self.next_app = next_app
        self.powered_by = powered_by
        self.trust_cgi_authorization = trust_cgi_authorization
        registry = (build.registry if build is not None
                    else getUtility(IPipelineRegistry))
        self.choose = registry.choose_request_factory

    def __call__(self, environ, start_response):
        if not self.trust_cgi_authorization:
            environ.pop(CGI_AUTHORIZATION, None)
        registration = self.choose(environ)
        if registration is None:
            return plain_response(
                start_response, '405 Method Not Allowed',
                'No request type handles the method %s.'
                % environ.get('REQUEST_METHOD', ''))
        try:
            request = registration.factory(environ['wsgi.input'], environ)
        except NotFound:
            return plain_response(start_response, '404 Not Found',
                                  'Not Found')
        except (UnicodeError, ValueError) as exc:
            return plain_response(start_response, '400 Bad Request',
                                  'Bad request: %s' % type(exc).__name__)
        environ[keys.REQUEST_KEY] = request
        environ[keys.RESPONSE_KEY] = request.response
        environ[keys.REQUEST_TYPE] = registration.name
        if self.powered_by:
            responses.keep_powered_by(environ)
        try:
            result = self.next_app(environ, start_response)
        except BaseException:
            close_request(request)
            raise
        return ClosingIterator(result, functools.partial(close_request,
                                                         request))
