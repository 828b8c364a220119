"""authenticate: who is asking, and the security interaction that checks it.

The global IAuthentication utility (zope.principalregistry out of the box)
authenticates first; at each local site traversal reaches, a local
authentication utility gets a chance to authenticate a still unauthenticated
principal (placeful authentication).  The interaction is ended on every way
out of the stage, and the request leaves it (so an error page can be
rendered in an interaction of its own).

``BasicAuthCredentials`` reads HTTP basic auth for zope.principalregistry
and other authentication utilities (what zope.login's adapter did in the
classic application server); zope.pipeline's site.zcml registers it.

Password guessing: a request that sends HTTP Basic credentials (what the
``ILoginPassword`` adapter reads from it, whichever header held them)
and ends unauthenticated (globally and at every local site) is a failed
login, logged at WARNING with its login and client address (escaped).  After
``authenticate.max_failures_per_client`` failures from one client address
(after trusted proxies) or ``authenticate.max_failures_per_login`` for one
login within ``authenticate.failure_window`` seconds, a request with
credentials from that client or for that login is answered 429 with
``Retry-After`` before its password is checked: refused, never slowed
down, so no thread waits.  A successful login forgets the failures of its
client and its login.  A failed login that no bcrypt check ran for
(its login is unknown) pays one (``zope.pipeline.security.passwords``): an
unknown
login costs what a known one does.  The counts
(``zope.pipeline.security.failedlogins``) are shared by the chains of all
request
types and, in a directory (``authenticate.state_dir``; under mod_wsgi
the server's run directory), by every process of the server: the limits
hold for the whole site.  Without one (``memory``; a single-process
server) they live in the process's memory.
"""

import logging
import os

from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import ILoginPassword
from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.authentication.loginpassword import LoginPassword
from zope.component import adapter
from zope.component import getGlobalSiteManager
from zope.component import queryUtility
from zope.interface import Interface
from zope.interface import implementer
from zope.location.interfaces import ISite
from zope.publisher.interfaces.http import IHTTPCredentials
from zope.schema import Int
from zope.schema import TextLine
from zope.security.management import newInteraction
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.wsgi import html_response
from zope.pipeline.publishing.scene import authenticate_globally
from zope.pipeline.publishing.scene import end_interaction
from zope.pipeline.security.failedlogins import FailedLogins
from zope.pipeline.security.failedlogins import SharedFailedLogins
from zope.pipeline.security.passwords import bcrypt_checks
from zope.pipeline.security.passwords import check_unknown_login
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE

logger = logging.getLogger('zope.pipeline.authenticate')


class IAuthenticateSettings(Interface):
    """The authentication utilities are ZCML; these settings throttle
    password guessing."""

    max_failures_per_client = Int(
        title='Failed logins from one client address within failure_window '
              'after which its logins are refused (429); 0: no limit',
        default=20, min=0, required=False)
    max_failures_per_login = Int(
        title='Failed logins for one login within failure_window after '
              'which that login is refused (429); 0: no limit',
        default=10, min=0, required=False)
    failure_window = Int(
        title='Seconds a failed login counts for', default=300, min=1,
        required=False)
    state_dir = TextLine(
        title='Directory (absolute) the processes of a server share their '
              "failed-login counts in; 'memory' for this process only; '' "
              'for failed-logins-<uid> in $ZOPE_PIPELINE_RUN_DIR when the '
              'environment names one (the mod_wsgi deployments), else '
              'memory',
        default='', required=False)


#: The name of the failed logins in the publisher's shared build state.
SHARED_NAME = 'authenticate.failed_logins'
#: Logins longer than this are counted by their first characters.
LOGIN_KEY_LENGTH = 256

TOO_MANY_PAGE = (
    '<!DOCTYPE html>\n<html><head><title>429 Too Many Requests</title>'
    '</head><body><h1>429 Too Many Requests</h1><p>Too many failed logins. '
    'Try again in %d seconds.</p></body></html>')
@adapter(IHTTPCredentials)
@implementer(ILoginPassword)
class BasicAuthCredentials(LoginPassword):
    """The login and password of a request's HTTP basic auth header.

    A header that is not valid basic auth (or not UTF-8, which the
    principal registry would fail to decode) counts as no credentials.
    """

    def __init__(self, request):
        self.request = request
        try:
            credentials = request._authUserPW()
            if credentials is not None:
                check_utf8(credentials)
        except ValueError:  # bad base64, no ':' or not UTF-8
            credentials = None
        login, password = credentials or (None, None)
        super().__init__(login, password)

    def needLogin(self, realm):
        self.request.unauthorized('basic realm="%s"' % realm)


def check_utf8(credentials):
    """Raise UnicodeDecodeError (a ValueError) unless the login and
    password given as bytes are UTF-8."""
    for part in credentials:
        if isinstance(part, bytes):
            part.decode('utf-8')


def authenticate_at_site(request, ob):
    """At a local site, let its authentication utility try (once)."""
    if not IUnauthenticatedPrincipal.providedBy(request.principal):
        return
    if not ISite.providedBy(removeSecurityProxy(ob)):
        return
    auth = queryUtility(IAuthentication)
    if auth is None or auth is getGlobalSiteManager().queryUtility(
            IAuthentication):
        return
    principal = auth.authenticate(request)
    if principal is None:
        # the site's own unauthenticated principal, as in the classic
        # publisher (local grants to it then apply)
        principal = auth.unauthenticatedPrincipal()
    if principal is not None:
        request.setPrincipal(principal)


def attempted_login(request):
    """The login of the credentials the request sends, or None when it
    sends none.

    Read through the ``ILoginPassword`` adapter, as the authentication
    utilities read them (HTTP Basic: ``BasicAuthCredentials``): the
    credentials counted are the ones checked, whichever header of the
    request held them (zope.publisher takes ``CGI-Authorization`` before
    ``Authorization``; the create_request stage drops a client's
    ``CGI-Authorization`` unless it is trusted)."""
    credentials = ILoginPassword(request, None)
    login = credentials.getLogin() if credentials is not None else None
    if isinstance(login, bytes):
        login = login.decode('utf-8', 'replace')
    return login


def equal_cost(request):
    """Make a failed login whose password no bcrypt checked (an unknown
    login) pay one bcrypt check, as a known login's wrong password does:
    otherwise its answer's time tells that the login does not exist."""
    check_unknown_login(ILoginPassword(request).getPassword())


def is_authenticated(principal):
    return principal is not None and \
        not IUnauthenticatedPrincipal.providedBy(principal)


def client_of(environ):
    """The client's address after trusted proxies, else the connection's."""
    return environ.get(keys.CLIENT_ADDRESS) or environ.get('REMOTE_ADDR', '')


class LoginThrottle:
    """Count failed logins per client and per login; say how long a
    client or login is refused."""

    def __init__(self, failed, per_client, per_login):
        self.failed = failed
        self.per_client = per_client
        self.per_login = per_login

    @staticmethod
    def keys_of(client, login):
        return ('client', client), ('login', login[:LOGIN_KEY_LENGTH])

    def retry_after(self, client, login):
        client_key, login_key = self.keys_of(client, login)
        return max(self.failed.retry_after(client_key, self.per_client),
                   self.failed.retry_after(login_key, self.per_login))

    def record(self, client, login, succeeded):
        client_key, login_key = self.keys_of(client, login)
        if succeeded:
            self.failed.reset(client_key)
            self.failed.reset(login_key)
        else:
            self.failed.fail(client_key, self.per_client)
            self.failed.fail(login_key, self.per_login)


#: ``authenticate.state_dir`` for counts in this process's memory.
IN_MEMORY = 'memory'


def failures_directory(state_dir):
    """The directory of the shared failed-login counts ``state_dir`` says,
    or None for this process's memory: the setting, else
    ``failed-logins-<uid>`` in the server's run directory when the
    environment names one (``$ZOPE_PIPELINE_RUN_DIR``: every mod_wsgi
    daemon of ``serve --mod-wsgi`` and of etc/app.wsgi)."""
    state_dir = (state_dir or '').strip()
    if state_dir == IN_MEMORY:
        return None
    if state_dir:
        return state_dir
    run_dir = os.environ.get(RUN_DIR_VARIABLE, '').strip()
    if not run_dir:
        return None
    return os.path.join(run_dir, 'failed-logins-%d' % os.geteuid())


def failure_store(window, directory):
    if directory is None:
        return FailedLogins(window)
    return SharedFailedLogins(directory, window)


def shared_failures(build, window, directory=None):
    """The publisher's failed logins (one store for every chain), or a
    new one: in ``directory``, shared with the other processes using it,
    or in memory (None)."""
    if build is None:
        return failure_store(window, directory)
    failed = build.shared.get(SHARED_NAME)
    if failed is None or failed.window != window or \
            getattr(failed, 'directory', None) != directory:
        failed = build.shared[SHARED_NAME] = failure_store(window,
                                                           directory)
    return failed


def too_many_failures(environ, start_response, client, login, seconds):
    logger.info('Refused %s %s: too many failed logins from %s or for %s; '
                'answered 429 (Retry-After %d)',
                client_text(environ.get('REQUEST_METHOD')),
                client_text(environ.get('PATH_INFO')), client_text(client),
                client_text(login), seconds)
    return html_response(start_response, '429 Too Many Requests',
                         TOO_MANY_PAGE % seconds,
                         [('Retry-After', str(seconds))])


def log_failure(environ, client, login):
    logger.warning('Failed login %s from %s (%s %s)', client_text(login),
                   client_text(client) or '-',
                   client_text(environ.get('REQUEST_METHOD')),
                   client_text(environ.get('PATH_INFO')))


class AuthenticateStage:
    """Set the principal; run the rest inside a security interaction;
    refuse a client or login that failed too often."""

    settings_schema = IAuthenticateSettings
    contract = Contract(
        reads=(keys.REQUEST_KEY,),
        reads_if_present=(keys.CLIENT_ADDRESS, keys.ATTEMPT))

    #: Assembled into the chain when it compiles (see IStageFactory).
    traversal_hooks = (authenticate_at_site,)

    def __init__(self, next_app, max_failures_per_client=20,
                 max_failures_per_login=10, failure_window=300, state_dir='',
                 build=None):
        self.next_app = next_app
        self.throttle = None
        if max_failures_per_client or max_failures_per_login:
            self.throttle = LoginThrottle(
                shared_failures(build, failure_window,
                                failures_directory(state_dir)),
                max_failures_per_client, max_failures_per_login)

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        login = attempted_login(request)
        if login is not None:
            checks = bcrypt_checks()
            client = client_of(environ)
            seconds = self.throttle.retry_after(client, login) \
                if self.throttle is not None else 0
            if seconds:
                return too_many_failures(environ, start_response, client,
                                         login, seconds)
        principal = authenticate_globally(request)
        if principal is not None:
            request.setPrincipal(principal)
        newInteraction(request)
        try:
            return self.next_app(environ, start_response)
        finally:
            end_interaction(request)
            if login is not None:
                if not is_authenticated(request.principal) and \
                        bcrypt_checks() == checks:
                    equal_cost(request)
                self.record(environ, client, login, request.principal)

    def record(self, environ, client, login, principal):
        """Count the login's outcome once the request is over (a local
        site may have authenticated it); a retried attempt's failure is
        counted once."""
        succeeded = is_authenticated(principal)
        if not succeeded:
            if environ.get(keys.ATTEMPT, 1) != 1:
                return
            log_failure(environ, client, login)
        if self.throttle is not None:
            self.throttle.record(client, login, succeeded)
