"""Sending a zope.publisher response through WSGI: the output filters,
HEAD, the headers (no ``X-Powered-By``), ``start_response``.  The stages
that answer with a response (call, handle_error, fix_relative_links)
share it."""

from zope.publisher.http import DirectResult

from zope.pipeline import environ as keys
from zope.pipeline.http.wsgi import close_iterable


def body_of(response):
    """The response body as a WSGI iterable; a DirectResult is unwrapped so
    that ``close()`` reaches what it wraps."""
    body = response.consumeBodyIter()
    if isinstance(body, DirectResult):
        body = body.body
        if isinstance(body, bytes):
            body = [body]
    if type(body) is tuple:
        body = list(body)
    return body


def emit(environ, response, start_response, exc_info=None, filters=()):
    """Send a zope.publisher response; return the WSGI body.

    The output filters run first (they may change headers through the
    response): ``filters``, those the chain's stages declared (assembled
    when it compiled: ``IBuildContext.output_filters``), then any a stage
    added to this request's ``environ.OUTPUT_FILTERS``; for HEAD the body
    is then dropped, so HEAD and GET send the same headers.
    """
    body = body_of(response)
    for output_filter in filters:
        body = output_filter(response, body)
    for output_filter in environ.get(keys.OUTPUT_FILTERS, ()):
        body = output_filter(response, body)
    if environ.get('REQUEST_METHOD') == 'HEAD':
        close_iterable(body)
        body = []
    headers = headers_of(response, environ)
    if exc_info is None:
        start_response(response.getStatusString(), headers)
    else:
        start_response(response.getStatusString(), headers, exc_info)
    return body


#: The header zope.publisher's ``HTTPResponse.getHeaders`` puts first in
#: every response, naming Zope and Python: it tells only an attacker
#: which software to aim at, so it is sent only where
#: ``create_request.powered_by`` keeps it (``keep_powered_by``).  This
#: module is its one home: the rule is ``headers_of``'s.
POWERED_BY = 'X-Powered-By'


def keep_powered_by(environ):
    """Have the responses of the request of ``environ`` keep
    ``X-Powered-By`` (``create_request.powered_by``)."""
    environ[keys.POWERED_BY] = True


def keeps_powered_by(environ):
    """Whether the responses of the request of ``environ`` keep
    ``X-Powered-By``."""
    return bool(environ.get(keys.POWERED_BY))


def headers_of(response, environ):
    """The response's headers, without any ``X-Powered-By`` header
    unless ``keeps_powered_by(environ)``."""
    headers = response.getHeaders()
    if keeps_powered_by(environ):
        return headers
    return [header for header in headers if header[0] != POWERED_BY]
