"""traverse: from the root application to the object to publish.

zope.publisher's ``request.traverse`` walks the path (``:method`` suffixes,
default views, the traversed names that URLs are made of); the traversal
policy in ``zope.pipeline.traversers`` answers each step: ``++namespace++``
segments (every zope.traversing namespace), ``@@view``, ``IPublishTraverse``
adapters, default views, a security proxy on each object, and the traversal
hooks that earlier stages registered, run once per object reached.
"""

from zope.interface import Interface
from zope.security.checker import ProxyFactory

from zope.pipeline import environ as keys
from zope.pipeline.traversers import Traversal


class ITraverseSettings(Interface):
    """traverse has no settings: traversers and namespaces are ZCML."""


environ_keys = {
    keys.ROOT: 'read: the root application',
    keys.TRAVERSAL_HOOKS: 'read: hook(request, ob) for each object reached',
    keys.CONTEXT: 'written: the last object reached',
    keys.PUBLISHED: 'written: the object to publish',
}


class TraverseStage:
    """Traverse the request's path from the root application."""

    settings_schema = ITraverseSettings
    environ_keys = environ_keys

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        request.setPublication(Traversal(
            environ.get(keys.TRAVERSAL_HOOKS, ()), environ, keys.CONTEXT))
        root = ProxyFactory(environ[keys.ROOT]())
        environ[keys.PUBLISHED] = request.traverse(root)
        return self.next_app(environ, start_response)
