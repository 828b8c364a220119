"""Content of the inner-stage test site, made by ``populate``.

::

    root (the root application, a site)
      folder/            a plain folder
        doc              a Document
      site/              a local site with its own components:
        doc              a Document
      counter            a Counter (the concurrency tests increment it)

The root and ``site`` each register an ``ISiteLabel`` utility (so a view
can tell whose components it sees); ``site`` also registers a local
authentication utility and a local exception view for ``ILocalError``.
"""

import persistent
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import ILoginPassword
from zope.authentication.interfaces import PrincipalLookupError
from zope.component import queryNextUtility
from zope.container.contained import Contained
from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.security.interfaces import IPrincipal
from zope.site.folder import Folder
from zope.site.site import LocalSiteManager

#: The login and password the local authentication utility accepts.
LOCAL_LOGIN = 'localuser'
LOCAL_PASSWORD = 'localpw'
LOCAL_PRINCIPAL_ID = 'local.user'


class ISiteLabel(Interface):
    """A utility naming the site whose components a lookup found."""


class ILocalError(Interface):
    """An error only the local site of the tests has a view for."""


@implementer(ILocalError)
class LocalError(Exception):
    """Raised by the ``fail`` view with ``kind=local``."""


@implementer(ISiteLabel)
class SiteLabel(persistent.Persistent):

    def __init__(self, label):
        self.label = label


class Document(persistent.Persistent, Contained):
    """Something to traverse to; ``touched`` is what views change."""

    touched = 0


class Counter(persistent.Persistent, Contained):
    """One number every concurrent request adds to: no conflict
    resolution, so concurrent increments conflict."""

    value = 0


@implementer(IPrincipal)
class LocalPrincipal:

    def __init__(self, principal_id):
        self.id = principal_id
        self.title = principal_id
        self.description = ''
        #: What zope.principalregistry gives its own principals.
        self.groups = ['zope.Everybody', 'zope.Authenticated']


@implementer(IAuthentication)
class LocalAuthentication(persistent.Persistent, Contained):
    """Knows one principal, by HTTP basic auth: placeful authentication."""

    def authenticate(self, request):
        credentials = basic_credentials(request)
        if credentials == (LOCAL_LOGIN, LOCAL_PASSWORD):
            return LocalPrincipal(LOCAL_PRINCIPAL_ID)
        return None

    def unauthenticatedPrincipal(self):
        return None

    def unauthorized(self, id, request):
        request.response.setStatus(401)
        request.response.setHeader('WWW-Authenticate',
                                   'basic realm="local site"')

    def getPrincipal(self, id):
        """Its own principal; others (groups too) from the next utility,
        as zope.pluggableauth does."""
        if id == LOCAL_PRINCIPAL_ID:
            return LocalPrincipal(id)
        following = queryNextUtility(self, IAuthentication)
        if following is None:
            raise PrincipalLookupError(id)
        return following.getPrincipal(id)


def basic_credentials(request):
    """(login, password) as text, from the request's ILoginPassword."""
    credentials = ILoginPassword(request, None)
    if credentials is None or credentials.getLogin() is None:
        return None
    return tuple(value.decode('utf-8') if isinstance(value, bytes) else value
                 for value in (credentials.getLogin(),
                               credentials.getPassword()))


class LocalErrorView:
    """The exception view the local site registers for ``ILocalError``."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        self.request.response.setStatus(418)
        return 'local error view at %s' % self.context.__parent__.__name__


def make_site(folder, label):
    """Make ``folder`` a site with a label utility; return its manager."""
    manager = LocalSiteManager(folder)
    folder.setSiteManager(manager)
    manager.registerUtility(SiteLabel(label), ISiteLabel)
    return manager


def populate(root):
    """Add the content above to a new root application."""
    root.getSiteManager().registerUtility(SiteLabel('root'), ISiteLabel)
    root['folder'] = Folder()
    root['folder']['doc'] = Document()
    root['site'] = Folder()
    manager = make_site(root['site'], 'site')
    # Kept in the site's 'default' folder, so that queryNextUtility finds
    # the global utility after it.
    manager['default']['authentication'] = LocalAuthentication()
    manager.registerUtility(manager['default']['authentication'],
                            IAuthentication)
    manager.registerAdapter(LocalErrorView, (ILocalError, IBrowserRequest),
                            Interface, 'index.html')
    root['site']['doc'] = Document()
    root['counter'] = Counter()
