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
"""

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
from zope.security.management import newInteraction
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.scene import authenticate_globally
from zope.pipeline.scene import end_interaction


class IAuthenticateSettings(Interface):
    """authenticate has no settings: the utilities are ZCML."""


#: The stage contract (zope.pipeline.contract): the environ keys this
#: stage needs, reads when present, and writes.
reads = (keys.REQUEST_KEY,)
reads_if_present = ()
writes = ()
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


class AuthenticateStage:
    """Set the principal; run the rest inside a security interaction."""

    settings_schema = IAuthenticateSettings
    reads = reads
    reads_if_present = reads_if_present
    writes = writes

    #: Assembled into the chain when it compiles (see IStageFactory).
    traversal_hooks = (authenticate_at_site,)

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        principal = authenticate_globally(request)
        if principal is not None:
            request.setPrincipal(principal)
        newInteraction(request)
        try:
            return self.next_app(environ, start_response)
        finally:
            end_interaction(request)
