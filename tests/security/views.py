"""A view for the security tests: it fails as a bug would, with an error
whose text names a file of the server."""

import os

from zope.interface import Interface
from zope.interface import implementer
from zope.security.proxy import removeSecurityProxy


class Explode:
    """Raise an error that names this file (a server path)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        raise RuntimeError('cannot open %s <script>alert(1)</script>'
                           % os.path.abspath(__file__))


class IDeleteView(Interface):
    """What a DELETE method view offers: the permission of its
    registration protects these names."""

    def DELETE():
        """Delete something."""


@implementer(IDeleteView)
class DeleteTitle:
    """A method view (plain HTTP ``DELETE``) that empties the page's title:
    registered with a permission, so only a manager may call it.  Like a
    trusted adapter, it writes to its context unproxied: its own
    permission is the only check."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def DELETE(self):
        removeSecurityProxy(self.context).title = ''
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'deleted'


class PatchTitle(DeleteTitle):
    """A PATCH method view whose registration names no interface with the
    method: its checker protects nothing, so the method is forbidden."""

    def PATCH(self):
        return self.DELETE()
