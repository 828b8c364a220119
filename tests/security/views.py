"""A view for the security tests: it fails as a bug would, with an error
whose text names a file of the server."""

import os

from zope.component.hooks import getSite
from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.interfaces.http import IResult
from zope.publisher.interfaces.xmlrpc import IXMLRPCView
from zope.security.proxy import removeSecurityProxy

from zope.pipeline.interfaces import ITrustedView


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


@implementer(IResult)
class ProtectedStream:
    """Streamed chunks that read protected content through its security
    proxy, and the local site, only while the server iterates them."""

    def __init__(self, context):
        self.context = context

    def __iter__(self):
        yield b'<html><body>'
        yield ('<h1>%s</h1>' % self.context.title).encode('utf-8')
        site = getSite()
        yield ('<p>site: %s</p>' % type(site).__name__).encode()
        yield b'</body></html>'


class StreamTitle:
    """A page that streams what it reads (an IResult)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        self.request.response.setHeader('Content-Type',
                                        'text/html;charset=utf-8')
        return ProtectedStream(self.context)


class ExplodeWithInput(Explode):
    """Fail with an error whose message quotes the client's input."""

    def __call__(self):
        raise RuntimeError('cannot handle %s' % self.request.get('what'))


class IApplicationURLView(Interface):
    """An XML-RPC view that says where the request believes it is."""

    def application_url():
        """The request's application URL."""


@implementer(IApplicationURLView, IXMLRPCView)
class ApplicationURL:
    """``application_url()``: the URL a page would build its links from
    (what a ``++vh++`` directive sets)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def application_url(self):
        return self.request.getApplicationURL()


class UntrustedTitle:
    """A page that says whether its context is security proxied (a
    ``browser:page`` that does not say it is trusted)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        return 'proxied: %s' % (
            removeSecurityProxy(self.context) is not self.context)

    def title_of_context(self):
        return self.context.title


@implementer(ITrustedView)
class TrustedTitle(UntrustedTitle):
    """The same page, trusted by the view-checked model."""
