"""Views of the view-checked site: trusted ones (ITrustedView) read the
content's undeclared attributes; the registrations give each a checker."""

from zope.interface import implementer
from zope.publisher.browser import BrowserView
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserPublisher

from zope.pipeline.interfaces import ITrustedView


@implementer(IBrowserPublisher)
class HerdTraverser:
    """Finds members with the herd's ``get``, as Grok's traversers do."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def publishTraverse(self, request, name):
        found = self.context.get(name)
        if found is None:
            raise NotFound(self.context, name, request)
        return found

    def browserDefault(self, request):
        return self.context, ('index.html',)


@implementer(ITrustedView)
class MammothPage(BrowserView):
    """Public: the mammoth's name (an undeclared attribute)."""

    def __call__(self):
        return 'Mammoth %s' % self.context.name


@implementer(ITrustedView)
class SecretPage(BrowserView):
    """Protected by fixtures.viewchecked.secret."""

    def __call__(self):
        return 'Secret of %s' % self.context.name


class UntrustedPage(BrowserView):
    """Protected, and not trusted: made on the proxied mammoth, whose
    ``name`` it may not read."""

    def __call__(self):
        return 'Untrusted page of %s' % self.context.name


@implementer(ITrustedView)
class MammothMethods:
    """Plain HTTP method views (PUT is protected; DELETE is not there)."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def PUT(self):
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'Put %s' % self.context.name


@implementer(ITrustedView)
class Feed:
    """An XML-RPC method view, protected."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self, food):
        return '%s ate %s' % (self.context.name, food)
