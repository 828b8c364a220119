"""call: call the published object and send the response it made.

Browser and XML-RPC requests call the object with ``mapply`` (form values,
or XML-RPC parameters, as arguments; ``REQUEST`` is the request; a missing
required argument is a 400).  Plain HTTP requests (PUT, DELETE, OPTIONS,
WebDAV-like methods) are dispatched to a view named after the method, and
get 405 with an ``Allow`` header (the methods that have a view, as
zope.app.http did) when there is none.

The result may be a string, anything adaptable to IResult (an iterable
that is streamed, closed once when the server is done with it, and
produced in the request's scene, its security interaction, local site and
transaction manager: ``zope.pipeline.publishing.scene``) or an open file
(streamed
with ``wsgi.file_wrapper`` when the server offers one).  Every callable is
called behind its security checker: traversal proxies what it reaches, and
a method view's method is taken from the proxied view.
Output filters that the chain's stages declared (``fix_relative_links``)
see the body before it is sent; the response's own ``<base>`` insertion is
left to them, so the pipeline's configuration decides it.  HEAD gets the
headers of GET (Content-Length included) and no body.

In a chain of the view-checked security model (``zope.pipeline.
security.models``, fixed when the chain is built) traversal proxies only
the views that are not trusted: an unproxied published object's
permission (the one its checker requires for ``__call__``) is checked
before it is called, as grokcore's publications did
(``ZopePublicationSansProxy.callObject``), and a proxied one is called
through its checker, as in the proxied chain.  A plain HTTP method view
that is trusted is made, checked and called bare (``GrokHTTPPublication``);
one that is not is made on the proxied object and its method taken from
the proxied view, as in the proxied chain.
"""

import functools
import io
import re

from zope.component import getAdapters
from zope.component import queryMultiAdapter
from zope.interface import Interface
from zope.publisher.http import DirectResult
from zope.publisher.interfaces.http import MethodNotAllowed
from zope.publisher.publish import mapply
from zope.security.checker import ProxyFactory
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.publications import CALLS_METHOD_VIEWS
from zope.pipeline.engine.publications import CALLS_OBJECT
from zope.pipeline.http.errors import MissingArgument
from zope.pipeline.http.errors import TooManyArguments
from zope.pipeline.publishing.responses import emit
from zope.pipeline.publishing.scene import Scene
from zope.pipeline.publishing.scene import StreamInScene
from zope.pipeline.security.models import PROXIED_MODEL
from zope.pipeline.security.models import check_view_permission
from zope.pipeline.security.models import query_view

#: Bytes per block when a file result is streamed without a file wrapper.
FILE_BLOCK_SIZE = 1 << 16


class ICallSettings(Interface):
    """call has no settings."""


# -- results

class FileBlocks:
    """A file read in blocks, closed with the response (the fallback for
    servers without ``wsgi.file_wrapper``)."""

    def __init__(self, stream, block_size=FILE_BLOCK_SIZE):
        self.stream = stream
        self.block_size = block_size

    def __iter__(self):
        read, size = self.stream.read, self.block_size
        while True:
            block = read(size)
            if not block:
                return
            yield block

    def close(self):
        self.stream.close()


def file_result(response, stream, environ):
    """Stream an open file: its length, then the server's file wrapper."""
    if response.getHeader('content-length') is None and stream.seekable():
        start = stream.tell()
        length = stream.seek(0, io.SEEK_END) - start
        stream.seek(start)
        response.setHeader('Content-Length', str(length))
    wrapper = environ.get('wsgi.file_wrapper')
    if wrapper is not None:
        return DirectResult(wrapper(stream, FILE_BLOCK_SIZE))
    return DirectResult(FileBlocks(stream))


def set_result(environ, response, result):
    """Give the response what the published object returned.

    The result is the publisher's to send: it is unproxied (so it can be
    iterated and closed).  The response's own ``<base>`` insertion is kept
    out of the way; fix_relative_links inserts the base, if configured.
    """
    result = removeSecurityProxy(result)
    if result is response:
        return
    if isinstance(result, io.IOBase):
        result = file_result(response, result, environ)
    get_base = getattr(response, 'getBase', None)
    base = get_base() if get_base is not None else ''
    if base:
        response.setBase('')
    try:
        set_text_or_bytes(response, result)
    finally:
        if base:
            response.setBase(base)


def set_text_or_bytes(response, result):
    """``setResult``; an empty string is text (``text/plain;charset=utf-8``
    as in the classic publisher, e.g. for a redirect) unless the view chose
    a type that is not text, for which zope.publisher refuses strings:
    then it is an empty body of that type."""
    try:
        response.setResult(result)
    except ValueError:
        if not isinstance(result, str) or result:
            raise
        response.setResult(b'')


# -- calling

def view_name(ob):
    """A readable name for metrics: 'Context:view', 'Context:view.method'
    for a method of a view that is not the page itself, or the class
    name."""
    ob = removeSecurityProxy(ob)
    owner = getattr(ob, '__self__', None)
    if owner is not None and callable(ob):
        name = view_name(owner)
        method = getattr(ob, '__name__', None)
        # a template bound to its view (zope.browserpage's
        # BoundPageTemplate) has no name: it is the view's page
        if not isinstance(method, str) or \
                getattr(owner, '__page_attribute__', None) == method:
            return name
        return '%s.%s' % (name, method)
    context = getattr(ob, 'context', None)
    if context is None:
        return type(ob).__name__
    name = getattr(ob, '__name__', None)
    return '%s:%s' % (type(removeSecurityProxy(context)).__name__,
                      name if isinstance(name, str) else type(ob).__name__)


#: How mapply says the request's arguments do not fit the callable: a
#: required one is missing, or more positional ones (XML-RPC parameters)
#: were given than it takes.
BAD_ARGUMENTS = (
    (re.compile(r'^Missing argument to '), MissingArgument),
    (re.compile(r'^\S+\(\) takes at most \d+ argument'), TooManyArguments),
)


def call_object(ob, request):
    """mapply ``ob``; arguments that do not fit it are a 400."""
    try:
        return mapply(ob, request.getPositionalArguments(), request)
    except TypeError as exc:
        for pattern, error in BAD_ARGUMENTS:
            if pattern.match(str(exc)):
                raise error(str(exc)) from exc
        raise


def allowed_methods(ob, request):
    """The methods ``ob`` has views for: the names of its views for this
    request that have a method of their own name (as zope.app.http's
    MethodNotAllowedView listed them)."""
    return sorted(name for name, view in getAdapters((ob, request), Interface)
                  if name and hasattr(removeSecurityProxy(view), name))


def publish(environ, start_response, request, ob, filters=()):
    """Call ``ob``, give its result to the response and send it.  A
    streamed body is produced in the request's scene (its interaction,
    site and transaction manager) while the server iterates it."""
    response = request.response
    set_result(environ, response, call_object(ob, request))
    body = emit(environ, response, start_response, filters=filters)
    if type(body) is list or is_file_body(environ, body):
        return body
    return StreamInScene(body, Scene.current(request))


def is_file_body(environ, body):
    """Whether ``body`` streams a file (it reads nothing of the request)."""
    if isinstance(body, FileBlocks):
        return True
    wrapper = environ.get('wsgi.file_wrapper')
    return isinstance(wrapper, type) and isinstance(body, wrapper)


class CallStage:
    """Publish the traversed object with mapply."""

    settings_schema = ICallSettings
    #: How it publishes, for the request types of ``<publisher>``
    #: registrations (``engine.publications.check_call_stage``).
    calls = CALLS_OBJECT
    contract = Contract(
        reads=(keys.REQUEST_KEY, keys.PUBLISHED),
        reads_if_present=(keys.OUTPUT_FILTERS, keys.POWERED_BY),
        writes=(keys.VIEW_NAME,),
        results=(keys.VIEW_NAME,),
        publishes=True)

    def __init__(self, next_app, build=None):
        self.next_app = next_app
        # the chain's output filters: filled when the chain is compiled
        self.filters = build.output_filters if build is not None else ()
        #: the chain's security model (``explain`` asks it too)
        self.security_model = model = (
            build.security_model if build is not None else PROXIED_MODEL)
        self.view_checked = model.checks_view_when_called

    def __call__(self, environ, start_response):
        ob = environ[keys.PUBLISHED]
        environ[keys.VIEW_NAME] = view_name(ob)
        if self.view_checked and type(ob) is not Proxy:
            check_view_permission(ob)
        return publish(environ, start_response, environ[keys.REQUEST_KEY],
                       ob, self.filters)


def method_handler(ob, request):
    """The method of the view named after the request method, taken from
    behind the view's security checker (a permission on the view's
    registration is checked here); None when there is no such method."""
    method = request.method
    view = queryMultiAdapter((ob, request), name=method)
    if view is None or not hasattr(removeSecurityProxy(view), method):
        return None
    return getattr(ProxyFactory(view), method)


def checked_method_handler(ob, request, trusted=()):
    """The method of the view named after the request method in a
    view-checked chain: a trusted view (one of ``trusted``) is made on
    ``ob`` itself and its method taken from it once the view's permission
    is checked; any other is made on the proxied ``ob`` and its method
    taken from the proxied view (``method_handler``).  None when there
    is no such method."""
    if type(ob) is Proxy:
        return method_handler(ob, request)
    method = request.method
    view = query_view(ob, request, method, trusted)
    if type(view) is Proxy:
        if not hasattr(removeSecurityProxy(view), method):
            return None
        return getattr(view, method)
    check_view_permission(view)
    return getattr(view, method, None)


def method_not_allowed(ob, request):
    """The 405 error for ``ob``, with the methods it has views for.  Made
    here, raised by the caller: a local variable holding the error in a
    frame of its own traceback would make a reference cycle."""
    error = MethodNotAllowed(ob, request)
    error.allow = allowed_methods(ob, request)
    return error


class MethodCallStage(CallStage):
    """Publish to the view named after the request method (plain HTTP)."""

    calls = CALLS_METHOD_VIEWS

    def __init__(self, next_app, build=None):
        super().__init__(next_app, build)
        self.handler_of = (
            functools.partial(checked_method_handler,
                              trusted=self.security_model.trusted_views())
            if self.view_checked else method_handler)
        error_class = (build.method_not_allowed if build is not None
                       else None)
        self.not_allowed = (method_not_allowed if error_class is None
                            else error_class)

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        ob = environ[keys.PUBLISHED]
        handler = self.handler_of(ob, request)
        if handler is None:
            raise self.not_allowed(ob, request)
        environ[keys.VIEW_NAME] = '%s:%s' % (
            type(removeSecurityProxy(ob)).__name__, request.method)
        return publish(environ, start_response, request, handler,
                       self.filters)
