"""What ``request.publication`` is under zope.pipeline: the classic
publication's attributes that views and traversers use, over the stages
that do the work.

zope.app.publication's ``ZopePublication`` was both the publisher's
policy and an object views reached through ``request.publication``:
``db`` (undo views, application control, generations), ``root_name``,
``getApplication(request)``, ``proxy(ob)`` and the traversal methods
(``traverseName``, ``getDefaultTraversal``, ``callTraversalHooks``).
``Publication`` offers those, for this request: ``db`` is the database of
the request's connection, ``getApplication`` the request's own root
application (proxied; the classic one opened another connection).  The
steps the stages perform (``beforeTraversal``, ``afterTraversal``,
``afterCall``, ``endRequest``) do nothing when called again, and
``handleException`` re-raises, for the handle_error stage to render.
``ViewCheckedPublication`` is the same for a chain of the view-checked
security model (``zope.pipeline.security.models``): the root and the
content traversal reaches come back without a security proxy, as
grokcore.view's ``ZopePublicationSansProxy`` gave them, and so do the
trusted views (made on bare objects, their default published bare);
every other view is made on the proxied context and proxied, and
everything reached through it stays proxied, as in the proxied chain.
zope.app.publication is not imported.
"""

import functools

from zope.component import queryUtility
from zope.interface import implementer
from zope.publisher.interfaces import IPublication
from zope.publisher.publish import mapply
from zope.security.checker import ProxyFactory
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import IEtcNamespace

from zope.pipeline import environ as keys
from zope.pipeline.publishing.traversers import Traversal
from zope.pipeline.security.models import bare_unless_untrusted_view
from zope.pipeline.security.models import in_untrusted_view
from zope.pipeline.security.models import on_proxied_context
from zope.pipeline.security.models import query_view
from zope.pipeline.security.models import remake_untrusted_view
from zope.pipeline.security.models import untrusted_view_of

#: The classic publication's name of the root application.
DEFAULT_ROOT_NAME = 'Application'
#: A path through it starts from the application controller, not the ZODB.
PROCESS_NAMESPACE = '++etc++process'


@implementer(IPublication)
class Publication(Traversal):
    """``request.publication`` of a request published by zope.pipeline."""

    __slots__ = ()

    @property
    def db(self):
        """The ZODB database of this request's connection (None without
        the open_root stage)."""
        connection = self.environ.get(keys.CONNECTION)
        return connection.db() if connection is not None else None

    @property
    def root_name(self):
        return self.environ.get(keys.ROOT_NAME, DEFAULT_ROOT_NAME)

    def proxy(self, ob):
        return ProxyFactory(ob)

    def getApplication(self, request):
        """This request's root application, security proxied."""
        return ProxyFactory(self.bare_application(request))

    def bare_application(self, request):
        """This request's root application; for a path through
        ``++etc++process``, the parent of the process namespace (the
        application controller), as in the classic publisher."""
        if PROCESS_NAMESPACE in request.getTraversalStack():
            process = queryUtility(IEtcNamespace, 'process')
            if process is not None:
                return process.__parent__
        return self.environ[keys.ROOT]()

    def callObject(self, request, ob):
        return mapply(ob, request.getPositionalArguments(), request)

    def beforeTraversal(self, request):
        """Done by the stages (authentication, transaction, events)."""

    def afterTraversal(self, request, ob):
        """Done by the stages."""

    def afterCall(self, request, ob):
        """Done by the transaction stage."""

    def endRequest(self, request, ob):
        """Done by the stages."""

    def handleException(self, object, request, exc_info, retry_allowed=True):
        """Re-raise: the handle_error stage renders errors."""
        raise exc_info[1].with_traceback(exc_info[2])


class ViewCheckedPublication(Publication):
    """``request.publication`` of a view-checked chain
    (``zope.pipeline.security.models``): content comes back unproxied,
    trusted views are made on it unproxied; a view that ``trusted_views``
    do not mark is made on the proxied context and proxied, and what is
    reached through it stays proxied; the call stage checks the
    permission of an unproxied published object."""

    __slots__ = ('trusted_views', 'bare_views')

    def __init__(self, hooks, environ, context_key,
                 xmlrpc_attributes=frozenset(), trusted_views=(),
                 bare_views=()):
        super().__init__(hooks, environ, context_key, xmlrpc_attributes)
        #: The interfaces of trusted views (made on bare objects).
        self.trusted_views = trusted_views
        #: Those of the trusted browser views handed back unproxied.
        self.bare_views = bare_views

    def query_view(self, request, ob, name):
        if type(ob) is Proxy:
            return super().query_view(request, ob, name)
        return query_view(ob, request, name, self.trusted_views)

    def wrap(self, request, ob, name, found):
        trusted = self.trusted_views
        if in_untrusted_view(ob, trusted):
            return ProxyFactory(found)
        bare = removeSecurityProxy(found)
        if untrusted_view_of(request, bare, trusted):
            if on_proxied_context(bare):
                return ProxyFactory(found)
            return remake_untrusted_view(
                found, request, (name, getattr(bare, '__name__', None)),
                trusted)
        return bare_unless_untrusted_view(found, self.bare_views)

    def wrap_default(self, request, ob, found):
        return found

    def published_default(self, request, ob, found):
        found = self.wrap(request, ob, None, found)
        if in_untrusted_view(found, self.trusted_views):
            return found
        return removeSecurityProxy(found)

    def getApplication(self, request):
        return removeSecurityProxy(self.bare_application(request))


def publication_factory(model):
    """The ``request.publication`` class of the chains of the security
    model ``model`` (zope.pipeline.security.models), called as
    ``factory(hooks, environ, context_key, xmlrpc_attributes)``:
    ``ViewCheckedPublication`` with the views the model trusts and those
    it hands back bare, as they are loaded when the chain is built, for a
    model that checks views when they are called; else ``Publication``."""
    if not model.checks_view_when_called:
        return Publication
    return functools.partial(ViewCheckedPublication,
                             trusted_views=model.trusted_views(),
                             bare_views=model.bare_views())
