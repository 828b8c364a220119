"""zope.component's notifications and lookups, as the pipeline asks for
them: the one home of "is this event heard".

Every function here calls the stock API of zope.event, zope.component or
zope.interface.  ``zope.pipeline._speedups.zope_component`` replaces
some of them (it rebinds this module's attributes when the application
is made; see ``zope.pipeline._speedups``), so callers call them through
the module, ``components.notify(...)``, never through a binding of their
own.

``heard(event_spec, object_spec)`` is the one "is anyone listening"
check: whether ``zope.event.notify`` would call any handler for an event
that provides ``event_spec`` (and, for an object event, whose object
provides ``object_spec``).  It reads ``zope.event.subscribers`` and asks
the current site manager's adapter registry for its subscriptions, the
lookup zope.component's ``dispatch`` and ``objectEventNotify`` make
(through the site manager's ``subscribers``, zope.interface's
``Components.subscribers``); it answers True whenever that cannot be
told (another zope.event subscriber, a site manager with a
``subscribers`` of its own).  ``notify_event`` and
``notify_object_event`` make their event only when it is heard.

The other functions name what a caller would like to know in fewer
steps; here they say "not known" (``lookup_registry``,
``hooked_lookup1``, ``adapter_factory``: None; ``hooked_factory``:
``UNKNOWN``; ``has_no_factory``: False), so the caller asks
zope.component.
"""

import zope.event
from zope.component import getSiteManager
from zope.component import queryMultiAdapter
from zope.component.event import dispatch
from zope.component.event import objectEventNotify
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.interface.registry import Components

#: The site managers' ``subscribers`` (zope.interface's ``Components``):
#: it calls the handlers its ``adapters`` registry subscribes.
SUBSCRIBERS = Components.subscribers


def heard(event_spec, object_spec=None):
    """Whether ``zope.event.notify(event)`` may call a handler for an
    ``event`` providing ``event_spec`` and, when ``object_spec`` is given,
    whose ``object`` provides ``object_spec``: False when zope.event has
    no subscriber, or when zope.component's ``dispatch`` is its only one
    and the current site manager and its bases register no handler for
    the event (or only zope.component's ``objectEventNotify``, and none
    for the object and the event); True otherwise, and whenever that
    cannot be told."""
    subscribers = zope.event.subscribers
    if not subscribers:
        return False
    if subscribers != [dispatch]:
        return True
    site_manager = getSiteManager()
    if getattr(type(site_manager), 'subscribers', None) is not SUBSCRIBERS:
        return True  # a site manager that dispatches in its own way
    adapters = site_manager.adapters
    handlers = adapters.subscriptions((event_spec,), None)
    if not handlers:
        return False
    if object_spec is None or handlers != [objectEventNotify]:
        return True
    return bool(adapters.subscriptions((object_spec, event_spec), None))


def notify(event):
    """``zope.event.notify(event)``."""
    zope.event.notify(event)


def notify_event(event_class, *args):
    """``notify(event_class(*args))``, the event made only when it is
    ``heard`` (its interfaces are those ``event_class`` implements: its
    instances declare no others)."""
    if heard(implementedBy(event_class)):
        notify(event_class(*args))


def notify_object_event(event_class, ob, *args):
    """``notify(event_class(ob, *args))``, the event made only when it is
    ``heard`` for ``ob``, the event's ``object`` (most objects traversal
    reaches have no handler)."""
    if heard(implementedBy(event_class), providedBy(ob)):
        notify(event_class(ob, *args))


def query_multi_adapter(objects, interface, name=''):
    """``zope.component.queryMultiAdapter(objects, interface, name)``."""
    return queryMultiAdapter(objects, interface, name)


def query_adapter(ob, interface):
    """``interface(ob, None)``."""
    return interface(ob, None)


def interfaces_of(ob):
    """``providedBy(ob)``."""
    return providedBy(ob)


def provides(ob, interface):
    """``interface.providedBy(ob)``."""
    return interface.providedBy(ob)


def lookup_registry(site_manager):
    """The adapter registry whose ``lookup`` answers what
    ``site_manager.queryMultiAdapter`` would call, when that is known;
    here None: callers ask zope.component."""
    return None


#: What ``hooked_factory`` answers when the factory cannot be told.
UNKNOWN = object()


def hooked_lookup1(interface):
    """The ``lookup1`` that adapting to ``interface`` through the current
    site's adapter hook calls, when that is known; here None."""
    return None


def hooked_factory(ob, interface):
    """The factory ``interface(ob, None)`` would call for ``ob`` (None
    when there is none), when that is known; here ``UNKNOWN``."""
    return UNKNOWN


def has_no_factory(ob, interfaces):
    """True when it is known that ``interface(ob, None)`` is None for
    each of ``interfaces``; here False: callers ask each interface."""
    return False


def adapter_factory(ob, interface):
    """The factory ``interface(ob, None)`` would call for ``ob``, when it
    is known; here None."""
    return None


def remember(memo, bound, key, value):
    """``memo[key] = value``, the memo emptied first when it holds
    ``bound`` entries (what it remembers is chosen by clients or loaded
    code, so it must not grow without end)."""
    if len(memo) >= bound:
        memo.clear()
    memo[key] = value
