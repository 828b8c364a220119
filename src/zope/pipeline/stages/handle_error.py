"""handle_error: turn an exception into the response the client should see.

Exception views are looked up in the context of the object where the error
happened (with that object's site set, so local views apply), as the
classic publisher did.  Without a view, a short page is made here.
``NotFound`` gives 404, ``Unauthorized`` 401 with the authentication
utility's challenge (403 for a principal who is already authenticated),
``Redirect`` a redirect, bad input 400, a transient error on the last
attempt 503 with ``Retry-After``, anything else 500.  An exception view
that sets no status gets the error's status, or 200 (as in the classic
publisher) for an error that has none of its own, such as a
``UserError``.  Tracebacks of 500s go to the log (and to the error
reporting utility); the page shows one only in debug mode.  A 503 after
the last attempt is logged in one line that names the conflict
(``errors.describe_error``: its oid and class).
Transient errors pass up to retry while it has attempts left.

A database that cannot serve (``errors.is_unavailable``: the MySQL
server refused or dropped the connection, or did not answer within the
connection's read timeout, while beginning the transaction, loading an
object or committing; or its storage is full: MySQL's 1114 or 1021,
SQLite's 'database or disk is full', no space left for a blob file) is
answered at once with a short 503 page saying which, and
``Retry-After``, logged in one line without a traceback, and not retried:
nothing that needs the database (exception views, the site, the error
reporting utility, which may all live in it) is used to render it.
When the database stopped answering during the commit itself
(``errors.CommitOutcomeUnknown``, raised by the transaction stage), the
change may have been stored: the page says so (reload before sending it
again), without ``Retry-After``.

With ``wsgi.handleErrors`` False in the environ (zope.testbrowser's
``handleErrors = False``), the exception reaches the caller instead, as
from the classic publisher, unless an ``IReRaiseException`` adapter of
the error says not to.

An error while rendering an error gives a plain 500, never a loop; but
a database that cannot serve while the error is rendered (the error's
site, its exception view and the error reporting utility may all need
it) is still an outage: 503 with ``Retry-After`` and one line, as above.
XML-RPC clients get a fault for every error but 401 and an unreachable
database (they understand faults, not pages), unless the error has an
exception view for XML-RPC requests (as in the classic publisher).

The error is rendered in a security interaction of its own (the
authenticate stage has ended the request's), in a fresh transaction that
is aborted afterwards.
"""

import contextlib
import html
import sys
import xmlrpc.client

from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.component import queryAdapter
from zope.component import queryMultiAdapter
from zope.component import queryUtility
from zope.component.hooks import getSite
from zope.component.hooks import setSite
from zope.error.interfaces import IErrorReportingUtility
from zope.interface import Interface
from zope.location import LocationProxy
from zope.location.interfaces import ISite
from zope.publisher.defaultview import queryDefaultViewName
from zope.publisher.interfaces import IBadRequest
from zope.publisher.interfaces import INotFound
from zope.publisher.interfaces import IRedirect
from zope.publisher.interfaces import IReRaiseException
from zope.publisher.interfaces.http import IMethodNotAllowed
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.publish import mapply
from zope.schema import Bool
from zope.security.interfaces import IForbidden
from zope.security.interfaces import IUnauthorized
from zope.security.management import newInteraction
from zope.security.management import queryInteraction
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.errors import DEFAULT_RETRY_AFTER
from zope.pipeline.http.errors import BadInput
from zope.pipeline.http.errors import IPayloadTooLarge
from zope.pipeline.http.errors import PayloadTooLarge
from zope.pipeline.http.errors import describe_error
from zope.pipeline.http.errors import for_caller
from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.http.errors import log_unavailable
from zope.pipeline.http.errors import unavailable_headers
from zope.pipeline.http.errors import unavailable_message
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.logtext import logger_for
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.publishing.debugpage import debug_html
from zope.pipeline.publishing.responses import emit
from zope.pipeline.publishing.scene import authenticate_globally
from zope.pipeline.publishing.scene import end_interaction

logger = logger_for('zope.pipeline.error')


class IHandleErrorSettings(Interface):

    debug = Bool(title='Show tracebacks in error pages (never in '
                       'production)', default=False, required=False)


REASONS = {400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
           404: 'Not Found', 405: 'Method Not Allowed',
           413: 'Payload Too Large', 500: 'Internal Server Error',
           503: 'Service Unavailable'}

#: Status by exception interface; the first that matches wins.
STATUS_BY_INTERFACE = (
    (INotFound, 404),
    (IPayloadTooLarge, 413),
    (IBadRequest, 400),
    (IMethodNotAllowed, 405),
    (IUnauthorized, 401),
    (IForbidden, 404),
)

MESSAGES = {
    400: 'The request could not be understood.',
    401: 'You must log in to see this page.',
    403: 'You are not allowed to see this page.',
    404: 'The page you asked for does not exist.',
    405: 'This resource does not support that method.',
    413: 'The request body is too large.',
    500: 'The server could not complete the request. The error was logged.',
    503: 'The server is busy; please try again in a moment.',
}


def status_of(error):
    if is_transient(error) or is_unavailable(error):
        return 503
    for interface, status in STATUS_BY_INTERFACE:
        if interface.providedBy(error):
            return status
    return 500


def reraise_to_caller(environ, error):
    """Whether the caller asked for exceptions (``wsgi.handleErrors``
    False) and no ``IReRaiseException`` adapter of ``error`` says no."""
    if environ.get(keys.HANDLE_ERRORS, True):
        return False
    reraise = queryAdapter(error, IReRaiseException)
    return reraise is None or bool(reraise())


def nearest_site(context):
    """Return the nearest site at or above ``context`` (unproxied)."""
    ob = removeSecurityProxy(context)
    while ob is not None:
        if ISite.providedBy(ob):
            return ob
        ob = getattr(ob, '__parent__', None)
    return None


def retry_after_of(environ):
    """The Retry-After of a 503: ``retry.retry_after``, which the retry
    stage passes on in the environ (one setting for every 503)."""
    return str(environ.get(keys.RETRY_AFTER, DEFAULT_RETRY_AFTER))


def default_page(status, error, debug, exc_info, message=None,
                 environ=None):
    """The page of an error without an exception view; in ``debug`` mode
    with the error, the site's frames, the folded traceback and the
    request (``environ``), credentials masked
    (zope.pipeline.publishing.debugpage).
    """
    title = '%d %s' % (status, REASONS.get(status, 'Error'))
    parts = ['<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
             '<title>%s</title></head><body>' % title, '<h1>%s</h1>' % title,
             '<p>%s</p>' % (message or MESSAGES.get(status, MESSAGES[500]))]
    if debug:
        request = environ.get(keys.REQUEST_KEY) if environ else None
        parts.append(debug_html(exc_info, environ, request))
    parts.append('</body></html>')
    return ''.join(parts)


def client_message(error):
    """What the page of an input error says: the text of the pipeline's
    own ``BadInput`` and ``PayloadTooLarge``, written for the client
    (escaped: it may quote field names), else None (the status's
    message)."""
    if isinstance(error, (BadInput, PayloadTooLarge)):
        return html.escape(str(error))
    return None


@contextlib.contextmanager
def error_scene(context, request):
    """Render an error where it happened: with the site of ``context`` set
    (so local exception views, authentication and error utilities apply)
    and inside a security interaction for the request's principal (the
    authenticate stage has ended its own by now, or, for an error before
    it, never began one: then the principal is found here)."""
    if request.principal is None:
        principal = authenticate_globally(request)
        if principal is not None:
            request.setPrincipal(principal)
    site = nearest_site(context) if context is not None else None
    previous_site = getSite()
    try:
        if site is not None:
            setSite(site)
        if queryInteraction() is not None:
            yield
            return
        newInteraction(request)
        try:
            yield
        finally:
            end_interaction(request)
    finally:
        setSite(previous_site)


def fresh_transaction(manager):
    """Abort what the failed request left and begin a new transaction."""
    manager.abort()
    manager.begin()


def render_view(environ, request, response, error):
    """Render the exception view of ``error``, located at the object the
    error happened at, in a transaction that is aborted afterwards;
    return False if there is no view."""
    context = environ.get(keys.CONTEXT)
    manager = environ.get(keys.TRANSACTION_MANAGER)
    if manager is not None:
        fresh_transaction(manager)
    try:
        located = LocationProxy(error, context, 'error')
        # the classic publisher's lookup: the default view name of the
        # error (configure.zcml makes it index.html), none without one
        name = queryDefaultViewName(located, request)
        view = None if name is None else queryMultiAdapter(
            (located, request), name=name)
        if view is None:
            return False
        # the view may set a status of its own; else the error's stays,
        # or, for an error without one (a 500), 200 as in the classic
        # publisher (an application's UserError page)
        response.setResult(mapply(view, (), request))
        return True
    finally:
        if manager is not None:
            manager.abort()


#: What an XML-RPC client is told, by status, where a page would say more.
FAULT_MESSAGES = {
    404: 'The object or method called does not exist.',
    405: 'This object does not support that call.',
}


def xmlrpc_fault(error, status, debug):
    """The fault an XML-RPC client gets for ``error``.

    A fault the view raised is sent as it is.  Otherwise the code is the
    status a browser would get (404, 400, 500...); the text is the error's
    own for bad input (written for the client) and in debug mode, and a
    generic one otherwise: ``str(error)`` of other errors holds object
    reprs and oids (``NotFound``, ``ForbiddenAttribute``).
    """
    if isinstance(error, xmlrpc.client.Fault):
        return error
    if debug or status in (400, 413):
        return xmlrpc.client.Fault(status, '%s: %s'
                                   % (type(error).__name__, error))
    message = FAULT_MESSAGES.get(status) or MESSAGES.get(status,
                                                         MESSAGES[500])
    return xmlrpc.client.Fault(status, '%s: %s'
                               % (REASONS.get(status, 'Error'), message))


class HandleErrorStage:
    """Render exceptions raised by the stages inside it."""

    settings_schema = IHandleErrorSettings
    contract = Contract(
        reads=(keys.REQUEST_KEY,),
        reads_if_present=(keys.RETRIES_LEFT, keys.TRANSACTION_MANAGER,
                          keys.CONTEXT, keys.ATTEMPT, keys.OUTPUT_FILTERS,
                          keys.HANDLE_ERRORS, keys.RETRY_AFTER,
                          keys.POWERED_BY, keys.DEBUGGER))

    def __init__(self, next_app, debug=False, build=None):
        self.next_app = next_app
        # the chain's output filters: filled when the chain is compiled
        self.filters = build.output_filters if build is not None else ()
        self.debug = debug

    def __call__(self, environ, start_response):
        try:
            return self.next_app(environ, start_response)
        except Exception as error:
            if is_transient(error) and environ.get(keys.RETRIES_LEFT, 0) > 0:
                raise
            if reraise_to_caller(environ, error):
                original = for_caller(error)
                if original is error:
                    raise
                raise original from None
            if environ.get(keys.DEBUGGER) and status_of(error) == 500:
                # the debugger stage (development) shows it
                logger.error('%s %s failed; the debugger shows it',
                             client_text(environ.get('REQUEST_METHOD')),
                             client_text(environ.get('PATH_INFO')),
                             exc_info=True)
                raise
            exc_info = sys.exc_info()
            try:
                if is_unavailable(error):
                    return self.unavailable(environ, start_response, error,
                                            exc_info)
                return self.render(environ, start_response, error, exc_info)
            except Exception as rendering:
                if is_unavailable(rendering):
                    # The page needed the database (the error's site, its
                    # views), which is gone: still an outage.
                    return self.unavailable(environ, start_response,
                                            rendering, exc_info)
                logger.exception('Error while rendering the error for %s',
                                 client_text(environ.get('PATH_INFO')))
                return plain_response(start_response,
                                      '500 Internal Server Error',
                                      'Internal Server Error', (), exc_info)
            finally:
                del exc_info

    # -- rendering

    def render(self, environ, start_response, error, exc_info):
        request = environ[keys.REQUEST_KEY]
        response = request.response
        status = status_of(error)
        with error_scene(environ.get(keys.CONTEXT), request):
            self.report(environ, request, status, error, exc_info)
            response.reset()
            if IXMLRPCRequest.providedBy(request) and status != 401:
                # XML-RPC clients understand faults, not error pages: an
                # exception view for XML-RPC requests, else a fault
                if not render_view(environ, request, response, error):
                    response.setResult(xmlrpc_fault(error, status, self.debug))
                    response.setStatus(200)
                return emit(environ, response, start_response, exc_info,
                            self.filters)
            if IRedirect.providedBy(error):
                response.redirect(error.getLocation(),
                                  trusted=error.getTrusted())
                return emit(environ, response, start_response, exc_info,
                            self.filters)
            if not self.view_rendered(environ, request, response, error,
                                      status):
                response.reset()
                status = self.prepare(environ, request, response, error,
                                      status)
                response.setStatus(status)
                response.setHeader('Content-Type', 'text/html;charset=utf-8')
                response.setResult(default_page(status, error, self.debug,
                                                exc_info,
                                                client_message(error),
                                                environ))
            return emit(environ, response, start_response, exc_info,
                        self.filters)

    def prepare(self, environ, request, response, error, status):
        """Status and headers the error brings whoever renders it (the
        challenge of a 401, Retry-After, Allow); return the status."""
        if status == 401:
            status = self.challenge(request, response)
        if status != 500:
            # an error with a status of its own keeps it, view or not
            response.setStatus(status)
        if status == 503:
            response.setHeader('Retry-After', retry_after_of(environ))
        if IMethodNotAllowed.providedBy(error):
            allow = getattr(error, 'allow', None)
            if allow:
                response.setHeader('Allow', ', '.join(allow))
        return status

    def view_rendered(self, environ, request, response, error, status):
        """Render the error's exception view; False without one, or when
        the view fails (logged): the error's own page is shown instead, as
        the classic publisher did."""
        self.prepare(environ, request, response, error, status)
        try:
            return render_view(environ, request, response, error)
        except Exception:
            logger.exception('Error while rendering the error view for %s',
                             client_text(environ.get('PATH_INFO')))
            return False

    def unavailable(self, environ, start_response, error, exc_info):
        """503 with Retry-After: the database cannot be reached.  One log
        line; nothing that needs the database is touched."""
        log_unavailable(logger, environ.get('REQUEST_METHOD'),
                        environ.get('PATH_INFO'), error)
        response = environ[keys.REQUEST_KEY].response
        response.reset()
        response.setStatus(503)
        for name, value in unavailable_headers(error,
                                               retry_after_of(environ)):
            response.setHeader(name, value)
        response.setHeader('Content-Type', 'text/html;charset=utf-8')
        response.setResult(default_page(503, error, self.debug, exc_info,
                                        unavailable_message(error), environ))
        return emit(environ, response, start_response, exc_info,
                    self.filters)

    def challenge(self, request, response):
        """401 with the challenge of the authentication utility at the
        error's site; 403 for a principal who is already authenticated."""
        principal = request.principal
        if principal is not None and \
                not IUnauthenticatedPrincipal.providedBy(principal):
            return 403
        auth = queryUtility(IAuthentication)
        if auth is not None:
            auth.unauthorized(principal.id if principal else None, request)
        status = response.getStatus()
        return status if status in (401, 403) else 401

    def report(self, environ, request, status, error, exc_info):
        if status >= 500:
            if status == 503:
                # A transient error (a conflict) on the last attempt: the
                # one line names what conflicted; a traceback would only
                # show where the commit happened.
                logger.error('%s %s failed on attempt %d: %s; answered 503',
                             client_text(environ.get('REQUEST_METHOD')),
                             client_text(environ.get('PATH_INFO')),
                             environ.get(keys.ATTEMPT, 1),
                             client_text(describe_error(error)))
            else:
                logger.error('%s %s failed',
                             client_text(environ.get('REQUEST_METHOD')),
                             client_text(environ.get('PATH_INFO')),
                             exc_info=exc_info)
            utility = queryUtility(IErrorReportingUtility)
            if utility is not None:
                try:
                    utility.raising(exc_info, request)
                except Exception:  # the report must not hide the error
                    logger.exception('The error reporting utility failed')
        else:
            logger.debug('%s %s: %d (%s)',
                         client_text(environ.get('REQUEST_METHOD')),
                         client_text(environ.get('PATH_INFO')), status,
                         exc_info[0].__name__)
