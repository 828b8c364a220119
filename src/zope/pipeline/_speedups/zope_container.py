"""zope.container's traversers (and zope.traversing's ``@@`` namespace
traverser, and our ``ViewTraverser``) answered without being made.

Each step of traversal makes the object's traverser (an
``IPublishTraverse``, ``IBrowserPublisher`` or ``ITraversable``
multi-adapter) and asks it one question; the stock ones answer it with
a line or two (an item of the container, a view looked up by name, the
default view's name).  ``install()`` replaces three steps of the
traversal policy (``zope.pipeline.publishing.traversers.Traversal``):

- ``publish``: where the factory registered for ``(ob, request)`` in the
  current site is zope.container's ``ItemTraverser`` or
  ``ContainerTraverser`` or our ``ViewTraverser`` (or one of them as
  zope.component's ``protectedFactory`` wraps it: ``<adapter
  permission="...">``, which gives the traverser a checker that no step
  here reads), its ``publishTraverse`` runs here, on ``ob``;
- ``browser_default``: the same for their ``browserDefault``
  (zope.container's looks the ``IDefaultViewName`` up in the site's
  registry; ``ViewTraverser``'s asks ``getDefaultViewName``);
- ``lookup_namespace``: an ``@@name`` where the ``view`` namespace's
  ``ITraversable`` is zope.traversing's own ``view``: the view looked up
  as the traversal looks views up (``query_view``), as
  ``namespace_traverse`` does with the traverser made.

The factory is looked up for every step, in the registry of the current
site (``siteinfo.sm``, what zope.component's hooked ``getSiteManager``
answers), so nothing needs forgetting: a new registration, a local site,
an interface given to an instance is seen at once.  A step goes the
stock way (``Traversal``'s own method: the traverser made and asked)
when the registered factory is anything else (a site's own traverser),
when the site manager or its registry is not zope.interface's own
(``zope_component.lookup_registry``), when ``ob`` traverses itself, or
when a stock traverser's ``__init__`` or method was replaced on its
class.  Each inline step tells ``stands_in_for`` the class it answered
for, so ``zope-pipeline explain`` names the traverser that would have
been made.

It compares zope.container's and zope.traversing's classes and methods
with those loaded and the code of zope.component's ``protectedFactory``
(identity checks that a change of those packages inside the allowed
versions can make wrong), and repeats what their methods do.

Measured (issue 42, instructions per request of the peers' page,
``/folder/page``: four steps answered here, two ``ItemTraverser``, the
default view's ``ViewTraverser``, the ``@@``; 400 requests,
``PYTHONHASHSEED=0 python -m benchmarks.instructions``), the seam's
other modules installed, this one left out and not: proxied 1,846,235 ->
1,821,395 (-1.3 %), view-checked 1,493,413 -> 1,480,143 (-0.9 %)
(``GAIN``).  Against the code before it (no ``publish`` and
``browser_default`` steps in ``Traversal``, all the seam installed):
proxied 1,845,924 -> 1,821,395 (-1.3 %), view-checked 1,498,390 ->
1,480,143 (-1.2 %).  Without the seam (``ZOPE_PIPELINE_SPEEDUPS=0``)
those two steps cost the stock code 2,211,082 -> 2,216,443 (+0.2 %)
proxied, 1,810,751 -> 1,816,886 (+0.3 %) view-checked.  Less than the
about 3.3 % that cc885f8 estimated for the same steps when it deleted
them (then beside the copied traversal loop, with a memo of the site's
registry per request, on the code of that time; not split further).

What would retire it: zope.publisher's traversal asking the adapter
registry for the object a name reaches (a lookup the registry caches
per specification, as ``queryMultiAdapter`` caches the factory) instead
of a traverser made for every step, or zope.container's traversers
registered as functions of ``(context, request, name)``.
"""

from types import FunctionType

from zope.component import getSiteManager
from zope.component.hooks import getSiteManager as hooked_site_manager
from zope.component.hooks import siteinfo
from zope.component.security import protectedFactory
from zope.container.traversal import ContainerTraverser
from zope.container.traversal import ItemTraverser
from zope.interface import Interface
from zope.location.interfaces import LocationError
from zope.publisher.defaultview import getDefaultViewName
from zope.publisher.interfaces import IDefaultViewName
from zope.publisher.interfaces import IPublishTraverse
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserPublisher
from zope.traversing.interfaces import ITraversable
from zope.traversing.namespace import view as ViewNamespace

from zope.pipeline import components
from zope.pipeline._speedups import zope_component
from zope.pipeline.publishing.traversers import Traversal
from zope.pipeline.publishing.traversers import ViewTraverser

#: The measured gain, instructions per request (400 requests, hash seed
#: 0): the proxied chain (``--peer pipeline``) and the view-checked chain
#: (``--peer pipeline-checked``), without and with this module (the
#: seam's others installed; -1.3 %, -0.9 %).
GAIN = {'pipeline': (1846235, 1821395),
        'pipeline-checked': (1493413, 1480143)}

#: The code of the factory zope.component's ``protectedFactory`` makes
#: (what ``<adapter permission="...">`` registers, neither trusted nor
#: locating): it makes the adapter and sets its ``__Security_checker__``
#: (none of the stock traversers has slots), which no inline step reads.
PROTECTED_FACTORY_CODE = next(
    const for const in protectedFactory.__code__.co_consts
    if getattr(const, 'co_name', None) == 'factory')

#: The stock traversers' methods as they were loaded: a class whose
#: method was replaced since is asked the stock way.
ITEM_PUBLISH_TRAVERSE = ItemTraverser.publishTraverse
CONTAINER_PUBLISH_TRAVERSE = ContainerTraverser.publishTraverse
CONTAINER_BROWSER_DEFAULT = ContainerTraverser.browserDefault
CONTAINER_INIT = ContainerTraverser.__init__
VIEW_PUBLISH_TRAVERSE = ViewTraverser.publishTraverse
VIEW_BROWSER_DEFAULT = ViewTraverser.browserDefault
VIEW_INIT = ViewTraverser.__init__
VIEW_NAMESPACE_INIT = ViewNamespace.__init__

#: ``Traversal``'s own steps, which this module's call when a step is
#: not theirs to answer.
STOCK_PUBLISH = Traversal.publish
STOCK_BROWSER_DEFAULT = Traversal.browser_default
STOCK_LOOKUP_NAMESPACE = Traversal.lookup_namespace


def site_lookup(ob, request):
    """The current site's adapter registry and the interfaces of
    ``(ob, request)``, as ``components.query_multi_adapter`` looks them
    up; ``(None, None)`` when the site manager or its registry is not
    zope.interface's own."""
    if getSiteManager.implementation is hooked_site_manager:
        site_manager = siteinfo.sm  # what the hook answers
    else:
        site_manager = getSiteManager()
    adapters = zope_component.lookup_registry(site_manager)
    if adapters is None:
        return None, None
    interfaces_of = zope_component.interfaces_of
    return adapters, (interfaces_of(ob), interfaces_of(request))


def stock_class(factory):
    """The class a registered traverser ``factory`` makes: ``factory``
    itself, or the factory ``protectedFactory`` wrapped."""
    if type(factory) is FunctionType and \
            factory.__code__ is PROTECTED_FACTORY_CODE:
        return factory.factory
    return factory


def publish(self, request, ob, name):
    """``Traversal.publish``: ``publishTraverse(request, name)`` of
    ``ob``'s ``IPublishTraverse`` adapter, run here without making it
    when it is zope.container's ``ItemTraverser`` or
    ``ContainerTraverser`` or our ``ViewTraverser``; the stock step
    otherwise."""
    adapters, specs = site_lookup(ob, request)
    if adapters is None or specs[0].isOrExtends(IPublishTraverse):
        return STOCK_PUBLISH(self, request, ob, name)
    cls = stock_class(adapters.lookup(specs, IPublishTraverse, ''))
    if cls is ItemTraverser:
        if cls.publishTraverse is not ITEM_PUBLISH_TRAVERSE or \
                cls.__init__ is not CONTAINER_INIT:
            return STOCK_PUBLISH(self, request, ob, name)
        self.stands_in_for(cls)
        try:
            return ob[name]
        except KeyError:
            view = components.query_multi_adapter((ob, request), Interface,
                                                  name)
            if view is not None:
                return view
        raise NotFound(ob, name, request)
    if cls is ContainerTraverser:
        if cls.publishTraverse is not CONTAINER_PUBLISH_TRAVERSE or \
                cls.__init__ is not CONTAINER_INIT:
            return STOCK_PUBLISH(self, request, ob, name)
        self.stands_in_for(cls)
        found = ob.get(name, None)
        if found is None:
            found = components.query_multi_adapter((ob, request), Interface,
                                                   name)
            if found is None:
                raise NotFound(ob, name, request)
        return found
    if cls is ViewTraverser and cls.__init__ is VIEW_INIT and \
            cls.publishTraverse is VIEW_PUBLISH_TRAVERSE:
        self.stands_in_for(cls)
        view = components.query_multi_adapter((ob, request), Interface,
                                              name)
        if view is None:
            raise NotFound(ob, name, request)
        return view
    return STOCK_PUBLISH(self, request, ob, name)


def browser_default(self, request, ob):
    """``Traversal.browser_default``: ``browserDefault(request)`` of
    ``ob``'s ``IBrowserPublisher`` adapter, run here without making it
    when it is one of zope.container's traversers or our
    ``ViewTraverser`` (a container without a default view name goes the
    stock way, to fail as zope.container's does); the stock step
    otherwise."""
    adapters, specs = site_lookup(ob, request)
    if adapters is not None:
        cls = adapters.lookup(specs, IBrowserPublisher, '')
        if cls is None:
            return None
        cls = stock_class(cls)
        if (cls is ItemTraverser or cls is ContainerTraverser) and \
                cls.browserDefault is CONTAINER_BROWSER_DEFAULT and \
                cls.__init__ is CONTAINER_INIT:
            view_name = adapters.lookup(specs, IDefaultViewName)
            if view_name is not None:
                return ob, ('@@%s' % view_name,)
        elif cls is ViewTraverser and cls.__init__ is VIEW_INIT and \
                cls.browserDefault is VIEW_BROWSER_DEFAULT:
            return ob, (getDefaultViewName(ob, request),)
    return STOCK_BROWSER_DEFAULT(self, request, ob)


def lookup_namespace(self, request, ob, namespace, name):
    """``Traversal.lookup_namespace``: an ``@@name`` whose ``view``
    namespace traverser is zope.traversing's own, the view looked up
    without making the traverser (as ``namespace_traverse`` asks it:
    ``query_view``, ``LocationError`` when there is none); the stock
    step otherwise."""
    if namespace == 'view':
        adapters, specs = site_lookup(ob, request)
        if adapters is not None and \
                adapters.lookup(specs, ITraversable, 'view') \
                is ViewNamespace and \
                ViewNamespace.__init__ is VIEW_NAMESPACE_INIT:
            self.stands_in_for(ViewNamespace)
            found = self.query_view(request, ob, name)
            if found is None:
                raise LocationError(ob, name)
            return found
    return STOCK_LOOKUP_NAMESPACE(self, request, ob, namespace, name)


def swaps():
    """(owner, attribute name, what is installed) of this module."""
    return [
        (Traversal, 'publish', publish),
        (Traversal, 'browser_default', browser_default),
        (Traversal, 'lookup_namespace', lookup_namespace),
    ]


#: (owner, name, what it held) saved by ``install``.
_saved = []


def install():
    """Put the inline steps in place (nothing when they are)."""
    if _saved:
        return
    for owner, name, value in swaps():
        _saved.append((owner, name, vars(owner)[name]))
        setattr(owner, name, value)


def uninstall():
    """Put ``Traversal``'s own steps back exactly."""
    while _saved:
        owner, name, value = _saved.pop()
        setattr(owner, name, value)
