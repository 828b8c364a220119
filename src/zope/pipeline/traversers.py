"""Default publishing traversers and the traversal policy of the traverse
stage (the traversal half of what zope.app.publication's IPublication did).

Traversal is Python glue around lookups that zope.interface answers from
its caches, so it is made of fewer Python steps, each giving what the
stock code gives (tests/unit/test_traversal_inline.py compares them):
zope.publisher's loop runs in ``Traversal.traverse`` for requests whose
``traverse`` is zope.publisher's own; the stock traversers (zope.container's
``ItemTraverser`` and ``ContainerTraverser``, ``ViewTraverser``, the ``@@``
namespace) run inline, without being made, when the factory the current
site's registry gives for the step is one of them (looked up for every
step, so nothing needs forgetting: a new registration, a local site, an
interface given to an instance or a replaced method is seen at once).
"""

from types import FunctionType

from zope.component import getSiteManager
from zope.component.hooks import getSiteManager as hooked_site_manager
from zope.component.hooks import siteinfo
from zope.component.security import protectedFactory
from zope.container.traversal import ContainerTraverser
from zope.container.traversal import ItemTraverser
from zope.interface import Interface
from zope.interface import implementer
from zope.interface import providedBy
from zope.location.interfaces import LocationError
from zope.publisher.base import BaseRequest
from zope.publisher.browser import DEFAULTABLE_METHODS
from zope.publisher.browser import BrowserRequest
from zope.publisher.defaultview import getDefaultViewName
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IDefaultViewName
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
from zope.pipeline.components import remember

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



# -- the stock traversers' steps, inlined

#: What the inlined steps answer when the traverser must be made and
#: asked.
NOT_INLINED = object()

#: The code of the factory zope.component's ``protectedFactory`` makes
#: (what ``<adapter permission="...">`` registers, neither trusted nor
#: locating): it makes the adapter and gives it a checker, which matters
#: to no inlined step (the traverser is not handed back).
PROTECTED_FACTORY_CODE = next(
    const for const in protectedFactory.__code__.co_consts
    if getattr(const, 'co_name', None) == 'factory')

#: The stock traversers' methods run inline, as they were when loaded:
#: the steps compare them each time, so a class whose method was
#: replaced is asked the stock way.
ITEM_PUBLISH_TRAVERSE = ItemTraverser.publishTraverse
CONTAINER_PUBLISH_TRAVERSE = ContainerTraverser.publishTraverse
CONTAINER_BROWSER_DEFAULT = ContainerTraverser.browserDefault
CONTAINER_INIT = ContainerTraverser.__init__
VIEW_PUBLISH_TRAVERSE = ViewTraverser.publishTraverse
VIEW_BROWSER_DEFAULT = ViewTraverser.browserDefault
VIEW_INIT = ViewTraverser.__init__
VIEW_NAMESPACE_INIT = ViewNamespace.__init__


# -- zope.publisher's traversal loop

#: zope.publisher's ``traverse`` methods, run by ``Traversal.traverse``.
BASE_TRAVERSE = BaseRequest.traverse
HTTP_TRAVERSE = HTTPRequest.traverse
BROWSER_TRAVERSE = BrowserRequest.traverse
#: The ``traverse`` methods along a request class's resolution order ->
#: the first of them, when they are zope.publisher's own chain.
STOCK_TRAVERSE_CHAINS = {
    (HTTP_TRAVERSE, BASE_TRAVERSE): HTTP_TRAVERSE,
    (BROWSER_TRAVERSE, HTTP_TRAVERSE, BASE_TRAVERSE): BROWSER_TRAVERSE,
}
#: The most request classes remembered by ``stock_traverse``.
MAX_REQUEST_CLASSES = 64
#: request class -> (its ``traverse`` when remembered, what
#: ``stock_traverse`` answers for it)
_stock_traverse = {}


def stock_traverse(cls):
    """``BROWSER_TRAVERSE`` or ``HTTP_TRAVERSE`` when ``request.traverse``
    of a ``cls`` instance is zope.publisher's ``BrowserRequest.traverse``
    (or ``HTTPRequest.traverse``) through to ``BaseRequest.traverse``,
    nothing else in between; else None.  Remembered per class with the
    method the class resolves ``traverse`` to: a ``traverse`` set later on
    the class or a base before zope.publisher's, or on zope.publisher's
    own classes, is seen."""
    known = _stock_traverse.get(cls)
    if known is None or known[0] is not cls.traverse:
        chain = tuple(vars(base)['traverse'] for base in cls.__mro__
                      if 'traverse' in vars(base))
        known = (cls.traverse, STOCK_TRAVERSE_CHAINS.get(chain))
        remember(_stock_traverse, MAX_REQUEST_CLASSES, cls, known)
    if HTTPRequest.traverse is not HTTP_TRAVERSE or \
            BaseRequest.traverse is not BASE_TRAVERSE:
        return None
    return known[1]


def clear_stock_traverse():
    """Forget the request classes ``stock_traverse`` remembers (tests)."""
    _stock_traverse.clear()


class Traversal:
    """What ``request.traverse()`` asks of its publication, per request.

    zope.publisher's request keeps the traversal stack, the path suffix of
    ``:method``, the traversed names (so URLs are right); this object
    answers its three questions: run the hooks for an object, find the next
    object, name the default view.  Every object it hands back is security
    proxied (``wrap``; the view-checked model's subclass,
    ``zope.pipeline.publication.ViewCheckedPublication``, hands back
    content and trusted views unproxied).  zope.publisher restarts its
    loop for default views and ``:method`` suffixes, offering the object
    it stopped at a second time: hooks run once per object reached all
    the same.
    """

    __slots__ = ('hooks', 'environ', 'context_key', 'last_hooked',
                 'default_names', 'xmlrpc_attributes', 'vh_left',
                 'site_manager', 'adapters')

    #: Whether the stock traversers' steps run without making them
    #: (``publish_inline``, ``browser_default``); ``zope-pipeline
    #: explain``, which names each traverser, makes them.
    inline_steps = True

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
        #: The last site manager met and its adapter registry
        #: (``components.lookup_registry``), see ``site_lookup``.
        self.site_manager = self.adapters = None

    def traverse(self, request, ob):
        """``request.traverse(ob)``, with this object as the request's
        publication.  Where that is zope.publisher's own
        (``stock_traverse``), its loop runs here, as it is written there
        (the traversed names, the object last traversed, the ``:method``
        suffix, default views, the base or the redirect of a default
        view), asking this object directly instead of the request's
        ``publication`` property each time."""
        stock = stock_traverse(type(request))
        if stock is None:
            return request.traverse(ob)
        ob = self.walk(request, ob)
        if stock is HTTP_TRAVERSE:
            return ob
        # BrowserRequest.traverse, whose first test (of ``_path_suffix``:
        # no default view after a ``:method``) is always false here, as
        # there: the suffix pass has emptied that list (the traverse stage
        # sets the base of a ``:method`` page)
        method = request.method
        base_needed = 0
        if method in DEFAULTABLE_METHODS:
            nsteps = 0
            ob, add_steps = self.getDefaultTraversal(request, ob)
            while add_steps:
                nsteps += len(add_steps)
                add_steps = list(add_steps)
                add_steps.reverse()
                request.setTraversalStack(add_steps)
                ob = self.walk(request, ob)
                ob, add_steps = self.getDefaultTraversal(request, ob)
            if nsteps != request._endswithslash:
                base_needed = 1
                redirect = request.use_redirect and method == 'GET'
        if base_needed:
            url = request.getURL()
            response = request.response
            if redirect:
                response.redirect(url)
                return ''
            elif not response.getBase():
                response.setBase(url)
        return ob

    def walk(self, request, ob):
        """``HTTPRequest.traverse``: ``BaseRequest.traverse``'s loop over
        the traversal stack, then once more over the ``:method`` suffix;
        ``callTraversalHooks`` once per object reached."""
        suffix = False
        while True:
            stack = request._traversal_stack
            names = request._traversed_names
            previous = None
            while True:
                request._last_obj_traversed = ob
                if removeSecurityProxy(ob) is not removeSecurityProxy(
                        previous):
                    self.callTraversalHooks(request, ob)
                if not stack:
                    break
                previous = ob
                name = stack.pop()
                names.append(name)
                ob = self.traverseName(request, ob, name)
            if suffix or not request._path_suffix:
                return ob
            request._traversal_stack = request._path_suffix
            suffix = True

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
        if self.inline_steps:
            found = self.publish_inline(request, ob, name_in_namespace)
            if found is not NOT_INLINED:
                return self.wrap(request, ob, name_in_namespace, found)
        traverser = self.publish_traverser(request, ob)
        if traverser is None:
            raise NotFound(ob, name, request)
        return self.wrap(request, ob, name_in_namespace,
                         traverser.publishTraverse(request,
                                                   name_in_namespace))

    def site_lookup(self, request, ob):
        """The current site's adapter registry and the interfaces of
        ``(ob, request)``, as ``query_multi_adapter`` looks them up (the
        registry is asked again when the site manager changes: a hook
        sets the site); ``(None, None)`` when the site manager or its
        registry is not zope.interface's own."""
        if getSiteManager.implementation is hooked_site_manager:
            site_manager = siteinfo.sm  # what the hook answers
        else:
            site_manager = getSiteManager()
        if site_manager is not self.site_manager:
            self.site_manager = site_manager
            self.adapters = components.lookup_registry(site_manager)
        if self.adapters is None:
            return None, None
        return self.adapters, (
            components.interfaces_of(ob) if type(ob) is Proxy
            else providedBy(ob),
            components.interfaces_of(request) if type(request) is Proxy
            else providedBy(request))

    def publish_inline(self, request, ob, name):
        """``traverser.publishTraverse(request, name)`` for ``ob``'s
        ``IPublishTraverse`` adapter, run without making it when it is
        zope.container's ``ItemTraverser`` or ``ContainerTraverser`` or
        our ``ViewTraverser`` (``protectedFactory`` unwrapped; the factory
        is looked up in the current site for every step, so a new
        registration, a local site or an interface ``ob`` provides
        directly is seen at once); ``NOT_INLINED`` otherwise."""
        adapters, specs = self.site_lookup(request, ob)
        if adapters is None or specs[0].isOrExtends(IPublishTraverse):
            return NOT_INLINED
        cls = adapters.lookup(specs, IPublishTraverse, '')
        if type(cls) is FunctionType and \
                cls.__code__ is PROTECTED_FACTORY_CODE:
            cls = cls.factory
        if cls is ItemTraverser:
            if cls.publishTraverse is not ITEM_PUBLISH_TRAVERSE or \
                    cls.__init__ is not CONTAINER_INIT:
                return NOT_INLINED
            try:
                return ob[name]
            except KeyError:
                view = self.query_view(request, ob, name)
                if view is not None:
                    return view
            raise NotFound(ob, name, request)
        if cls is ContainerTraverser:
            if cls.publishTraverse is not CONTAINER_PUBLISH_TRAVERSE or \
                    cls.__init__ is not CONTAINER_INIT:
                return NOT_INLINED
            found = ob.get(name, None)
            if found is None:
                found = self.query_view(request, ob, name)
                if found is None:
                    raise NotFound(ob, name, request)
            return found
        if cls is ViewTraverser and cls.__init__ is VIEW_INIT and \
                cls.publishTraverse is VIEW_PUBLISH_TRAVERSE:
            view = self.query_view(request, ob, name)
            if view is None:
                raise NotFound(ob, name, request)
            return view
        return NOT_INLINED

    def browser_default(self, request, ob):
        """``adapter.browserDefault(request)`` for ``ob``'s
        ``IBrowserPublisher`` adapter (``ob`` does not provide it), None
        when it has none; run without making the adapter when it is one
        of zope.container's traversers or our ``ViewTraverser`` (as
        ``publish_inline``)."""
        adapters, specs = self.site_lookup(request, ob)
        if adapters is not None:
            cls = adapters.lookup(specs, IBrowserPublisher, '')
            if cls is None:
                return None
            if type(cls) is FunctionType and \
                    cls.__code__ is PROTECTED_FACTORY_CODE:
                cls = cls.factory
            if (cls is ItemTraverser or cls is ContainerTraverser) and \
                    cls.browserDefault is CONTAINER_BROWSER_DEFAULT and \
                    cls.__init__ is CONTAINER_INIT:
                view_name = adapters.lookup(specs, IDefaultViewName)
                if view_name is not None:
                    return ob, ('@@%s' % view_name,)
            elif cls is ViewTraverser and cls.__init__ is VIEW_INIT and \
                    cls.browserDefault is VIEW_BROWSER_DEFAULT:
                return ob, (getDefaultViewName(ob, request),)
        adapter = components.query_multi_adapter((ob, request),
                                                 IBrowserPublisher)
        if adapter is None:
            return None
        return adapter.browserDefault(request)

    def publish_traverser(self, request, ob):
        """What traverses ``ob`` by name: ``ob`` itself when it provides
        IPublishTraverse, else its IPublishTraverse adapter (None when it
        has none)."""
        if components.provides(ob, IPublishTraverse):
            return ob
        return components.query_multi_adapter((ob, request),
                                              IPublishTraverse)

    def query_view(self, request, ob, name):
        """The view of ``ob`` named ``name`` for ``request``, or None
        (the inlined traversers' and ``@@``'s lookups)."""
        return components.query_multi_adapter((ob, request), Interface, name)

    def make_view(self, factory, ob, request):
        """The view ``factory``, looked up for ``(ob, request)``, makes."""
        return factory(ob, request)

    def wrap(self, request, ob, name, found):
        """What traversal hands back for the object it found from ``ob``
        by ``name`` (None for a default)."""
        return ProxyFactory(found)

    def wrap_default(self, request, ob, found):
        """What traversal hands back for the default an adapter named."""
        return ProxyFactory(found)

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
        """``namespace_lookup(namespace, name, ob, request)``; an ``@@``
        view (zope.traversing's ``view`` namespace, not replaced) looked
        up with the step's ``site_lookup``, its traverser not made."""
        if namespace == 'view':
            adapters, specs = self.site_lookup(request, ob)
            if adapters is not None and ViewNamespace.__init__ is \
                    VIEW_NAMESPACE_INIT and adapters.lookup(
                        specs, ITraversable, 'view') is ViewNamespace:
                factory = adapters.lookup(specs, Interface, name)
                found = None if factory is None else self.make_view(
                    factory, ob, request)
                if found is None:
                    raise LocationError(ob, name)
                return found
        return namespace_lookup(namespace, name, ob, request,
                                self.query_view)

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
        if (components.interfaces_of(ob) if type(ob) is Proxy
                else providedBy(ob)) \
                .isOrExtends(IBrowserPublisher):
            found, path = ob.browserDefault(request)
        else:
            if self.inline_steps:
                default = self.browser_default(request, ob)
            else:
                adapter = components.query_multi_adapter(
                    (ob, request), IBrowserPublisher)
                default = (None if adapter is None
                           else adapter.browserDefault(request))
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
