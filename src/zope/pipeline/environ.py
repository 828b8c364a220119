"""The WSGI environ keys stages use to talk to each other, in one place.

Every key a stage reads or writes is a constant of this module; a stage
declares the ones it uses as ``reads`` and ``writes`` (see
``zope.pipeline.interfaces.IStageFactory``) and the publisher checks, when
it compiles a chain, that every key read has an earlier writer.  The keys
the server provides (``SERVER_KEYS``, ``SERVER_PREFIXES``) count as
written before the first stage.
"""

__all__ = (
    'REQUEST_KEY',
    'RESPONSE_KEY',
    'REQUEST_TYPE',
    'RETRIES_LEFT',
    'RETRY_AFTER',
    'ATTEMPT',
    'CONNECTION',
    'TRANSACTION_MANAGER',
    'ROOT',
    'ROOT_NAME',
    'TRAVERSAL_HOOKS',
    'CONTEXT',
    'PUBLISHED',
    'DEFAULT_VIEW',
    'OUTPUT_FILTERS',
    'VIEW_NAME',
    'HANDLE_ERRORS',
    'DEBUGGER',
    'DEBUGGER_BODIES',
    'CLIENT_ADDRESS',
    'VH_DIRECTIVES',
    'SITE_ROOT',
    'UNMETERED',
    'POWERED_BY',
    'RECORD_KEY',
    'RESPONSE_CACHE_FRONT',
    'RESPONSE_CACHE_POLL',
    'SERVER_KEYS',
    'SERVER_PREFIXES',
    'from_server',
)

#: The request object (a zope.publisher request) of the current attempt.
REQUEST_KEY = 'zope.request'
#: The response object belonging to ``REQUEST_KEY``.
RESPONSE_KEY = 'zope.response'

#: The name of the request type (the request factory registration).
REQUEST_TYPE = 'zope.pipeline.request_type'
#: How many more attempts the retry stage will make after this one.
RETRIES_LEFT = 'zope.pipeline.retries_left'
#: Seconds in the Retry-After header of every 503 (``retry.retry_after``:
#: the retry stage's own 503s and those the error handler renders).
RETRY_AFTER = 'zope.pipeline.retry_after'
#: The number of this attempt, 1 for the first.
ATTEMPT = 'zope.pipeline.attempt'
#: The ZODB connection of this request.
CONNECTION = 'zope.pipeline.connection'
#: The explicit transaction manager of this request.
TRANSACTION_MANAGER = 'zope.pipeline.transaction_manager'
#: A callable returning the root application object (unproxied).
ROOT = 'zope.pipeline.root'
#: Its name in the ZODB root mapping (``open_root.root_name``).
ROOT_NAME = 'zope.pipeline.root_name'
#: Traversal hooks added for this request only, run after the chain's own
#: (which stages declare, see IStageFactory): hook(request, ob), once for
#: each object traversal reaches.
TRAVERSAL_HOOKS = 'zope.pipeline.traversal_hooks'
#: The last object traversal reached (the context of errors).
CONTEXT = 'zope.pipeline.context'
#: The object traversal ended on: what the call stage publishes.
PUBLISHED = 'zope.pipeline.published'
#: The names default traversal added to the path (e.g. ('@@index.html',)).
DEFAULT_VIEW = 'zope.pipeline.default_view'
#: Output filters added for this request only, ``filter(response, body) ->
#: body``, run after the chain's own (which stages declare) by whoever sends
#: the response (before HEAD drops the body).
OUTPUT_FILTERS = 'zope.pipeline.output_filters'
#: A readable name of the published view, e.g. 'Page:index.html'.
VIEW_NAME = 'zope.pipeline.view'
#: False asks for exceptions to reach the caller instead of an error page
#: (zope.testbrowser's ``handleErrors = False``, the test layers'
#: ``http(..., handle_errors=False)``), as the classic publisher did.
HANDLE_ERRORS = 'wsgi.handleErrors'
#: True when the debugger stage (development only) shows a local client's
#: server errors: handle_error lets them through to it, logged.
DEBUGGER = 'zope.pipeline.debugger'
#: The site's response bodies under the debugger stage, closed by it.
DEBUGGER_BODIES = 'zope.pipeline.debugger_bodies'
#: The client's IP address after trusted proxies (virtual_host): the
#: connection's, or the one a trusted proxy forwarded; '' when unknown.
CLIENT_ADDRESS = 'zope.pipeline.client_address'
#: The ``++vh++`` directives of the path that virtual_host checked and
#: accepted (the text after ``++vh++``, '' for a bare one), as a tuple:
#: the only ones the ``vh`` namespace applies at traversal, each once.  A
#: ``++vh++`` name added after PATH_INFO (a ``:method`` form field, an
#: XML-RPC method name) or in a request that did not pass virtual_host is
#: refused (400).
VH_DIRECTIVES = 'zope.pipeline.vh_directives'
#: Set by server-side code only (``SiteAtRoot``): the path of the object
#: published at the root URL; virtual_host maps it through ``++vh++``.
SITE_ROOT = 'zope.pipeline.site_root'
#: Set by an outer stage that answered a request metrics must not count
#: (the metrics endpoint's own scrapes).
UNMETERED = 'zope.pipeline.unmetered'
#: True when responses keep zope.publisher's ``X-Powered-By`` header
#: (``create_request.powered_by``); absent, ``responses.emit`` drops it.
POWERED_BY = 'zope.pipeline.powered_by'
#: The metrics ``Record`` of this request (the metrics stage's; shared by
#: the attempts, since retry copies the environ shallowly).
RECORD_KEY = 'zope.pipeline.metrics.record'
#: What response_cache_hit, which found no valid stored page, hands the
#: response_cache stage (``stages.response_cache.Front``): the key, and
#: the shared poll the page is kept through.
RESPONSE_CACHE_FRONT = 'zope.pipeline.response_cache.front'
#: What response_cache_poll, ahead of the other outer stages, hands
#: response_cache_hit (``stages.response_cache.Ahead``): the shared poll,
#: when the request arrived, and the poll it sent ahead, if any.
RESPONSE_CACHE_POLL = 'zope.pipeline.response_cache.poll'

# ----------------------------------------------------------- the server's keys

#: What the WSGI server (PEP 3333, CGI) or the code calling the pipeline
#: sets: counted as written before the first stage.
SERVER_KEYS = frozenset((
    'REQUEST_METHOD', 'SCRIPT_NAME', 'PATH_INFO', 'QUERY_STRING',
    'CONTENT_TYPE', 'CONTENT_LENGTH', 'SERVER_NAME', 'SERVER_PORT',
    'SERVER_PROTOCOL', 'SERVER_SOFTWARE', 'REMOTE_ADDR', 'REMOTE_HOST',
    'REMOTE_PORT', 'REMOTE_USER', 'AUTH_TYPE', 'GATEWAY_INTERFACE',
    'HTTPS', 'REQUEST_URI', 'RAW_URI', 'DOCUMENT_ROOT', 'SCRIPT_FILENAME',
    SITE_ROOT,
))
#: Key prefixes of the server's keys: request headers, the WSGI keys
#: (``HANDLE_ERRORS`` among them), the servers' own.
SERVER_PREFIXES = ('HTTP_', 'wsgi.', 'mod_wsgi.', 'waitress.', 'gunicorn.',
                   'paste.', 'webtest.')


def from_server(key):
    """Whether ``key`` is one the server (not a stage) provides."""
    return key in SERVER_KEYS or key.startswith(SERVER_PREFIXES)
