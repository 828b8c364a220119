"""Default publishing traversers and the traversal policy of the traverse
stage (the traversal half of what zope.app.publication's IPublication did).
"""

from zope.component import queryMultiAdapter
from zope.interface import implementer
from zope.publisher.defaultview import getDefaultViewName
from zope.publisher.interfaces import IPublishTraverse
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserPublisher
from zope.publisher.interfaces.http import IHTTPPublisher
from zope.publisher.interfaces.xmlrpc import IXMLRPCPublisher
from zope.security.checker import ProxyFactory
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import TraversalError
from zope.traversing.namespace import namespaceLookup
from zope.traversing.namespace import nsParse


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
        view = queryMultiAdapter((self.context, request), name=name)
        if view is None:
            raise NotFound(self.context, name, request)
        return view


class Traversal:
    """What ``request.traverse()`` asks of its publication, per request.

    zope.publisher's request keeps the traversal stack, the path suffix of
    ``:method``, the traversed names (so URLs are right) and the rule that
    hooks run once per object reached; this object answers its three
    questions: which hooks, which next object, which default view.
    """

    __slots__ = ('hooks', 'environ', 'context_key')

    def __init__(self, hooks, environ, context_key):
        self.hooks = hooks
        self.environ = environ
        self.context_key = context_key

    def callTraversalHooks(self, request, ob):
        self.environ[self.context_key] = ob
        for hook in self.hooks:
            hook(request, ob)

    def traverseName(self, request, ob, name):
        if name[:1] in '@+':
            namespace, name_in_namespace = nsParse(name)
            if namespace:
                try:
                    found = namespaceLookup(namespace, name_in_namespace, ob,
                                            request)
                except (TraversalError, LookupError):
                    raise NotFound(ob, name, request)
                return ProxyFactory(found)
        else:
            name_in_namespace = name
        if name_in_namespace == '.':
            return ob
        if IPublishTraverse.providedBy(ob):
            found = ob.publishTraverse(request, name_in_namespace)
        else:
            traverser = queryMultiAdapter((ob, request), IPublishTraverse)
            if traverser is None:
                raise NotFound(ob, name, request)
            found = traverser.publishTraverse(request, name_in_namespace)
        return ProxyFactory(found)

    def getDefaultTraversal(self, request, ob):
        if IBrowserPublisher.providedBy(ob):
            return ob.browserDefault(request)
        adapter = queryMultiAdapter((ob, request), IBrowserPublisher)
        if adapter is None:
            return ob, None
        found, path = adapter.browserDefault(request)
        return ProxyFactory(found), path


def unproxied_name(ob):
    return type(removeSecurityProxy(ob)).__name__
