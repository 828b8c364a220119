"""A classic site whose users log in and out with zope.pluggableauth's
session credentials plugin, whose logout commits the transaction itself
(``transaction.commit()``), for the test layers of both publishers.

``populate(root)`` adds to the root folder's site manager a session data
container and a pluggable authentication utility: the session credentials
plugin and a principal folder with ``bob`` (password ``bobpw``).  A
request with ``login`` and ``password`` form values logs in; the session
remembers the credentials (a cookie names the session).
"""

import transaction
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import ILogout
from zope.component import getUtility
from zope.pluggableauth.authentication import PluggableAuthentication
from zope.pluggableauth.plugins.principalfolder import InternalPrincipal
from zope.pluggableauth.plugins.principalfolder import PrincipalFolder
from zope.pluggableauth.plugins.session import SessionCredentialsPlugin
from zope.session.interfaces import ISessionDataContainer
from zope.session.session import PersistentSessionDataContainer

#: The names of the plugins in the authentication utility.
CREDENTIALS = 'Session Credentials'
USERS = 'users'


def populate(root):
    """Add the session data container and the authentication utility to
    ``root``'s site manager, and commit."""
    manager = root.getSiteManager()
    default = manager['default']
    default['sessions'] = PersistentSessionDataContainer()
    manager.registerUtility(default['sessions'], ISessionDataContainer)
    default['authentication'] = authentication = PluggableAuthentication()
    manager.registerUtility(authentication, IAuthentication)
    authentication[CREDENTIALS] = SessionCredentialsPlugin()
    authentication[USERS] = PrincipalFolder('users.')
    authentication[USERS]['bob'] = InternalPrincipal(
        'bob', 'bobpw', 'Bob', passwordManagerName='Plain Text')
    authentication.credentialsPlugins = (CREDENTIALS,)
    authentication.authenticatorPlugins = (USERS,)
    transaction.commit()


class WhoAmI:
    """The id of the request's principal."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        return self.request.principal.id


class Logout(WhoAmI):
    """Log out as zope.app.security's logout view does: ``ILogout`` of the
    authentication utility (the session plugin commits)."""

    def __call__(self):
        ILogout(getUtility(IAuthentication)).logout(self.request)
        return 'logged out'
