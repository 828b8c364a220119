"""call: call the published object and send the response it made.

Browser and XML-RPC requests call the object with ``mapply`` (form values,
or XML-RPC parameters, as arguments; ``REQUEST`` is the request; a missing
required argument is a 400).  Plain HTTP requests (PUT, DELETE, OPTIONS,
WebDAV-like methods) are dispatched to a view named after the method, and
get 405 with an ``Allow`` header when there is none.  HEAD gets the headers
of GET (Content-Length included) and no body.
"""

from zope.component import queryMultiAdapter
from zope.interface import Interface
from zope.publisher.interfaces.http import MethodNotAllowed
from zope.publisher.publish import mapply
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.errors import MissingArgument
from zope.pipeline.wsgi import close_iterable

#: Methods whose views the Allow header of a 405 lists, when they exist.
KNOWN_METHODS = ('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH',
                 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK',
                 'UNLOCK')


class ICallSettings(Interface):
    """call has no settings."""


environ_keys = {
    keys.PUBLISHED: 'read: the object to call',
    keys.VIEW_NAME: "written: the published view's name, for metrics",
    keys.RESPONSE_KEY: 'read: status, headers and body are sent from it',
}


def emit(environ, response, start_response, exc_info=None):
    """Send a zope.publisher response; return the WSGI body."""
    body = response.consumeBodyIter()
    if type(body) is tuple:
        body = list(body)
    if environ.get('REQUEST_METHOD') == 'HEAD':
        close_iterable(body)
        body = []
    if exc_info is None:
        start_response(response.getStatusString(), response.getHeaders())
    else:
        start_response(response.getStatusString(), response.getHeaders(),
                       exc_info)
    return body


def view_name(ob):
    """A readable name for metrics: 'Context:view' or the class name."""
    ob = removeSecurityProxy(ob)
    context = getattr(ob, 'context', None)
    name = getattr(ob, '__name__', None)
    if context is not None and isinstance(name, str):
        return '%s:%s' % (type(removeSecurityProxy(context)).__name__, name)
    if callable(ob) and hasattr(ob, '__self__'):
        return view_name(ob.__self__) + '.' + ob.__name__
    return type(ob).__name__


def call_object(ob, request):
    try:
        return mapply(ob, request.getPositionalArguments(), request)
    except TypeError as exc:
        if str(exc).startswith('Missing argument to '):
            raise MissingArgument(str(exc)) from exc
        raise


class CallStage:
    """Publish the traversed object with mapply."""

    settings_schema = ICallSettings
    environ_keys = environ_keys

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        ob = environ[keys.PUBLISHED]
        environ[keys.VIEW_NAME] = view_name(ob)
        result = call_object(ob, request)
        response = request.response
        if result is not response:
            response.setResult(result)
        return emit(environ, response, start_response)


class MethodCallStage:
    """Publish to the view named after the request method (plain HTTP)."""

    settings_schema = ICallSettings
    environ_keys = environ_keys

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        ob = environ[keys.PUBLISHED]
        method = request.method
        view = queryMultiAdapter((ob, request), name=method)
        if view is None and method == 'HEAD':
            method = 'GET'
            view = queryMultiAdapter((ob, request), name=method)
        handler = getattr(view, method, None) if view is not None else None
        if handler is None:
            error = MethodNotAllowed(ob, request)
            error.allow = [name for name in KNOWN_METHODS
                           if queryMultiAdapter((ob, request), name=name)
                           is not None]
            raise error
        environ[keys.VIEW_NAME] = '%s:%s' % (
            type(removeSecurityProxy(ob)).__name__, method)
        result = handler()
        response = request.response
        if result is not response:
            response.setResult(result)
        return emit(environ, response, start_response)
