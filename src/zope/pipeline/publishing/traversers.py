"""Default publishing traversers and the traversal policy of the traverse
stage (the traversal half of what zope.app.publication's IPublication did).

Traversal is zope.publisher's: the traverse stage calls
``request.traverse(root)``, whose loop asks this policy, as the
request's publication, each step (``callTraversalHooks``,
``traverseName``, ``getDefaultTraversal``); the traversers are the
registered ``IPublishTraverse`` and ``IBrowserPublisher`` adapters
(zope.container's for containers, ``ViewTraverser`` for every other
object), made and asked each step (``publish``, ``browser_default``,
``lookup_namespace``: where ``zope.pipeline._speedups.zope_container``
is installed, it answers for the stock traversers without making them,
and tells ``stands_in_for``).  ``zope-pipeline explain`` records these
same calls (``zope.pipeline.explain.RecordingSteps``).
"""

from zope.interface import Interface
from zope.interface import implementer
from zope.interface import providedBy
from zope.location.interfaces import LocationError
from zope.publisher.defaultview import getDefaultViewName
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IPublishTraverse
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserPublisher
from zope.publisher.interfaces.http import IHTTPPublisher
from zope.publisher.interfaces.xmlrpc import IXMLRPCPublisher
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.interfaces.xmlrpc import IXMLRPCView
from zope.security.checker import ProxyFactory
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import ITraversable
from zope.traversing.interfaces import TraversalError
from zope.traversing.namespace import nsParse
from zope.traversing.namespace import view as ViewNamespace

from zope.pipeline import components
from zope.pipeline import environ as keys

#: Namespaces whose names are attribute names: private ones are refused.
ATTRIBUTE_NAMESPACES = ('attribute',)
#: The namespace that sets the application URL: applied only for the
#: directives virtual_host checked (``zope.pipeline.vh_directives``).
VH_NAMESPACE = 'vh'
#: In ``traverse.xmlrpc_attributes``: every public attribute (classic).
ANY_ATTRIBUTE = '*'


def parse_attribute_names(text):
    """The names of ``traverse.xmlrpc_attributes`` (space separated) as a
    frozenset; a private name is a configuration error."""
    names = frozenset((text or '').split())
    private = sorted(name for name in names if name.startswith('_'))
    if private:
        raise ValueError('private attributes are never published: %s'
                         % ', '.join(private))
    return names


@implementer(IBrowserPublisher, IXMLRPCPublisher, IHTTPPublisher)
class ViewTraverser:
    """Traverse to views by name; default view from ``browser:defaultView``.

    Registered for every object and request; containers get zope.container's
    item traversers, which are more specific.
    """

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def browserDefault(self, request):
        return self.context, (getDefaultViewName(self.context, request),)

    def publishTraverse(self, request, name):
        view = components.query_multi_adapter((self.context, request),
                                              Interface, name)
        if view is None:
            raise NotFound(self.context, name, request)
        return view


@implementer(IXMLRPCPublisher)
class XMLRPCMethodTraverser:
    """Traverse an XML-RPC view to the method the request calls.

    What zope.app.publisher's ``xmlrpc:view`` used to register: the method
    name of an XML-RPC call becomes the last path step, and it names a
    method of the view (which the view's checker must allow).
    """

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def publishTraverse(self, request, name):
        method = None if name.startswith('_') else getattr(
            self.context, name, None)
        if method is None or not callable(method):
            raise NotFound(self.context, name, request)
        return method


class Traversal:
    """What ``request.traverse()`` asks of its publication, per request.

    zope.publisher's request keeps the traversal stack, the path suffix of
    ``:method``, the traversed names (so URLs are right); this object
    answers its three questions: run the hooks for an object, find the next
    object, name the default view.  Every object it hands back is security
    proxied (``wrap``; the view-checked model's subclass,
    ``zope.pipeline.publishing.publication.ViewCheckedPublication``, hands back
    content and trusted views unproxied).  zope.publisher restarts its
    loop for default views and ``:method`` suffixes, offering the object
    it stopped at a second time: hooks run once per object reached all
    the same.
    """

    __slots__ = ('hooks', 'environ', 'context_key', 'last_hooked',
                 'default_names', 'xmlrpc_attributes', 'vh_left')

    def __init__(self, hooks, environ, context_key,
                 xmlrpc_attributes=frozenset()):
        self.hooks = hooks
        self.environ = environ
        self.context_key = context_key
        #: What ``++attribute++`` reaches over XML-RPC besides the methods
        #: of XML-RPC views (``traverse.xmlrpc_attributes``).
        self.xmlrpc_attributes = xmlrpc_attributes
        self.last_hooked = None
        #: The names default traversal added, e.g. ['@@index.html'].
        self.default_names = []
        #: The checked ``++vh++`` directives not applied yet (on first use).
        self.vh_left = None

    def callTraversalHooks(self, request, ob):
        self.environ[self.context_key] = ob
        unproxied = removeSecurityProxy(ob)
        if unproxied is self.last_hooked:
            return
        self.last_hooked = unproxied
        for hook in self.hooks:
            hook(request, ob)

    def traverseName(self, request, ob, name):
        if name[:1] in '@+':
            namespace, name_in_namespace = nsParse(name)
            if namespace:
                return self.traverse_namespace(request, ob, name, namespace,
                                               name_in_namespace)
        else:
            name_in_namespace = name
        if name_in_namespace == '.':
            return ob
        return self.wrap(request, ob, name_in_namespace,
                         self.publish(request, ob, name_in_namespace))

    def publish(self, request, ob, name):
        """What ``ob``'s traverser (``publish_traverser``) finds by
        ``name``, a name of no namespace; ``NotFound`` when it has
        none."""
        traverser = self.publish_traverser(request, ob)
        if traverser is None:
            raise NotFound(ob, name, request)
        return traverser.publishTraverse(request, name)

    def publish_traverser(self, request, ob):
        """What traverses ``ob`` by name: ``ob`` itself when it provides
        IPublishTraverse, else its IPublishTraverse adapter (None when it
        has none)."""
        if components.provides(ob, IPublishTraverse):
            return ob
        return components.query_multi_adapter((ob, request), IPublishTraverse)

    def query_view(self, request, ob, name):
        """The view of ``ob`` named ``name`` for ``request``, or None
        (the ``@@`` namespace's lookup)."""
        return components.query_multi_adapter((ob, request), Interface, name)

    def wrap(self, request, ob, name, found):
        """What traversal hands back for the object it found from ``ob``
        by ``name`` (None for a default)."""
        return ProxyFactory(found)

    def wrap_default(self, request, ob, found):
        """What traversal hands back for the default an adapter named."""
        return ProxyFactory(found)

    def browser_default(self, request, ob):
        """``adapter.browserDefault(request)`` of ``ob``'s
        ``IBrowserPublisher`` adapter (``ob`` does not provide it), or
        None when it has none."""
        adapter = components.query_multi_adapter((ob, request),
                                                 IBrowserPublisher)
        if adapter is None:
            return None
        return adapter.browserDefault(request)

    def stands_in_for(self, factory):
        """A step of ``zope.pipeline._speedups`` answered for the current
        name what the traverser ``factory`` makes would have answered,
        without making it (``zope-pipeline explain`` names it)."""

    def published_default(self, request, ob, found):
        """What traversal hands back for the default of ``ob`` (``ob``
        itself when it has none)."""
        return found

    def traverse_namespace(self, request, ob, name, namespace, name_in_it):
        """``++namespace++name`` and ``@@name``; private attributes never;
        ``++vh++`` only as virtual_host checked it.  A namespace that
        cannot apply its name (``ValueError``: ``++skin++`` past the first
        name, ``++vh++`` without its ``++``) is a bad request."""
        if namespace in ATTRIBUTE_NAMESPACES and not \
                self.attribute_allowed(request, ob, name_in_it):
            raise NotFound(ob, name, request)
        if namespace == VH_NAMESPACE:
            self.use_vh_directive(name_in_it)
        try:
            found = self.lookup_namespace(request, ob, namespace,
                                          name_in_it)
        except (TraversalError, LookupError):
            raise NotFound(ob, name, request) from None
        except ValueError:
            raise BadRequest('The ++%s++ segment of the path cannot be '
                             'applied here.' % namespace) from None
        return self.wrap(request, ob, name_in_it, found)

    def lookup_namespace(self, request, ob, namespace, name):
        """``namespace_lookup(namespace, name, ob, request)``, the
        namespace's traverser from ``namespace_traverser`` and an ``@@``
        view looked up as this traversal looks views up
        (``query_view``)."""
        return namespace_traverse(
            self.namespace_traverser(request, ob, namespace), namespace,
            name, ob, self.query_view)

    def namespace_traverser(self, request, ob, namespace):
        """The ``++namespace++`` traverser of ``ob`` (its ``ITraversable``
        adapter of that name), or None."""
        return components.query_multi_adapter((ob, request), ITraversable,
                                              namespace)

    def use_vh_directive(self, directive):
        """Apply ``++vh++directive`` only if virtual_host checked it in
        the path (from a trusted proxy, or the server's own site root),
        once each: one that a ``:method`` form field or an XML-RPC method
        name added after the path is refused."""
        if self.vh_left is None:
            self.vh_left = list(self.environ.get(keys.VH_DIRECTIVES, ()))
        if directive not in self.vh_left:
            raise BadRequest(
                'A ++vh++ segment is accepted only in the path, from the '
                'proxies in virtual_host.trusted_proxies.')
        self.vh_left.remove(directive)

    def attribute_allowed(self, request, ob, name):
        """Private attributes never; over XML-RPC only the methods of an
        XML-RPC view (what the classic ``MethodPublisher`` published) and
        the names of ``traverse.xmlrpc_attributes``: a content method
        called directly would skip the checks of the views."""
        if name.startswith('_'):
            return False
        if not IXMLRPCRequest.providedBy(request):
            return True
        allowed = self.xmlrpc_attributes
        return (name in allowed or ANY_ATTRIBUTE in allowed or
                IXMLRPCView.providedBy(removeSecurityProxy(ob)))

    def getDefaultTraversal(self, request, ob):
        interfaces = (components.interfaces_of(ob) if type(ob) is Proxy
                      else providedBy(ob))
        if interfaces.isOrExtends(IBrowserPublisher):
            found, path = ob.browserDefault(request)
        else:
            default = self.browser_default(request, ob)
            if default is None:
                return self.published_default(request, ob, ob), None
            found, path = default
            found = self.wrap_default(request, ob, found)
        if request.method == 'HEAD':
            found = get_instead_of_head(ob, found)
        self.default_names.extend(path or ())
        return self.published_default(request, ob, found), path


def query_view(ob, request, name):
    """``queryMultiAdapter((ob, request), name=name)``, or None."""
    return components.query_multi_adapter((ob, request), Interface, name)


def namespace_lookup(namespace, name, ob, request, view_lookup=None):
    """zope.traversing's ``namespaceLookup(namespace, name, ob, request)``
    with its multi-adapters looked up by ``query_multi_adapter``: the
    namespace's traverser and, for zope.traversing's own ``@@`` traverser,
    the view it looks up (with ``view_lookup(request, ob, name)`` when
    given: the traversal's)."""
    traverser = components.query_multi_adapter((ob, request), ITraversable,
                                               namespace)
    return namespace_traverse(traverser, namespace, name, ob, view_lookup)


def namespace_traverse(traverser, namespace, name, ob, view_lookup=None):
    """What ``traverser``, the ``namespace`` traverser of ``ob`` (None:
    it has none), finds by ``name``, as ``namespace_lookup``."""
    if traverser is None:
        raise LocationError(ob, '++%s++%s' % (namespace, name))
    if type(traverser) is not ViewNamespace:
        return traverser.traverse(name, ())
    if view_lookup is None:
        found = query_view(traverser.context, traverser.request, name)
    else:
        found = view_lookup(traverser.request, traverser.context, name)
    if found is None:
        raise LocationError(traverser.context, name)
    return found


def get_instead_of_head(ob, found):
    """HEAD must send the headers of GET: when the default of ``ob`` is its
    own ``HEAD`` method (zope.browserresource's resources, whose HEAD sends
    a Content-Length of 0), publish its ``GET`` and let the call stage drop
    the body."""
    method = removeSecurityProxy(found)
    if getattr(method, '__name__', None) != 'HEAD' or \
            getattr(method, '__self__', None) is not removeSecurityProxy(ob):
        return found
    return getattr(ob, 'GET', None) or found
