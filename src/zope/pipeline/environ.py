"""The WSGI environ keys stages use to talk to each other, in one place."""

from zope.pipeline.interfaces import REQUEST_KEY  # noqa: F401 - re-exported
from zope.pipeline.interfaces import RESPONSE_KEY  # noqa: F401 - re-exported

#: The name of the request type (the request factory registration).
REQUEST_TYPE = 'zope.pipeline.request_type'
#: How many more attempts the retry stage will make after this one.
RETRIES_LEFT = 'zope.pipeline.retries_left'
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
#: Callables run once for each object traversal reaches: hook(request, ob).
TRAVERSAL_HOOKS = 'zope.pipeline.traversal_hooks'
#: The last object traversal reached (the context of errors).
CONTEXT = 'zope.pipeline.context'
#: The object traversal ended on: what the call stage publishes.
PUBLISHED = 'zope.pipeline.published'
#: The names default traversal added to the path (e.g. ('@@index.html',)).
DEFAULT_VIEW = 'zope.pipeline.default_view'
#: Output filters of this request, ``filter(response, body) -> body``, run
#: in order by whoever sends the response (before HEAD drops the body).
OUTPUT_FILTERS = 'zope.pipeline.output_filters'
#: A readable name of the published view, e.g. 'Page:index.html'.
VIEW_NAME = 'zope.pipeline.view'
#: The debug flag of the error handler (tracebacks in error pages).
DEBUG = 'zope.pipeline.debug'
#: False asks for exceptions to reach the caller instead of an error page
#: (zope.testbrowser's ``handleErrors = False``, the test layers'
#: ``http(..., handle_errors=False)``), as the classic publisher did.
HANDLE_ERRORS = 'wsgi.handleErrors'
#: The client's IP address after trusted proxies (virtual_host): the
#: connection's, or the one a trusted proxy forwarded; '' when unknown.
CLIENT_ADDRESS = 'zope.pipeline.client_address'
#: Set by server-side code only (``SiteAtRoot``): the path of the object
#: published at the root URL; virtual_host maps it through ``++vh++``.
SITE_ROOT = 'zope.pipeline.site_root'
#: Set by an outer stage that answered a request metrics must not count
#: (the metrics endpoint's own scrapes).
UNMETERED = 'zope.pipeline.unmetered'
