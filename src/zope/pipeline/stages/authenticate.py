"""authenticate: who is asking, and the security interaction that checks it.

The global IAuthentication utility (zope.principalregistry out of the box)
authenticates first; at each local site traversal reaches, a local
authentication utility gets a chance to authenticate a still unauthenticated
principal (placeful authentication).  The interaction is ended on every way
out of the stage.
"""

from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.component import getGlobalSiteManager
from zope.component import queryUtility
from zope.interface import Interface
from zope.location.interfaces import ISite
from zope.security.management import endInteraction
from zope.security.management import newInteraction
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys


class IAuthenticateSettings(Interface):
    """authenticate has no settings: the utilities are ZCML."""


environ_keys = {
    keys.REQUEST_KEY: 'read: its principal is set',
    keys.TRAVERSAL_HOOKS: 'appended: placeful authentication at sites',
}


def authenticate_globally(request):
    auth = getGlobalSiteManager().queryUtility(IAuthentication)
    if auth is None:
        return None
    principal = auth.authenticate(request)
    if principal is None:
        principal = auth.unauthenticatedPrincipal()
    return principal


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
    if principal is not None:
        request.setPrincipal(principal)


class AuthenticateStage:
    """Set the principal; run the rest inside a security interaction."""

    settings_schema = IAuthenticateSettings
    environ_keys = environ_keys

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        principal = authenticate_globally(request)
        if principal is not None:
            request.setPrincipal(principal)
        environ.setdefault(keys.TRAVERSAL_HOOKS, []).append(
            authenticate_at_site)
        newInteraction(request)
        try:
            return self.next_app(environ, start_response)
        finally:
            endInteraction()
