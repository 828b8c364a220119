"""zope.component's notifications and multi-adapter lookups, with the
same results in fewer steps.

``notify(event)`` calls the handlers ``zope.event.notify(event)`` would
call, in the same order: when zope.component's ``dispatch`` is zope.event's
only subscriber (any application that adds none of its own), those the
current site manager and its bases register for the event, and, where one
of them is zope.component's ``objectEventNotify``, those registered for
the event's object and the event, looked up in the site manager current
at that moment (a handler before it may have set another site, as
zope.site's ``threadSiteSubscriber`` does).

``query_multi_adapter(objects, interface, name)`` is
``zope.component.queryMultiAdapter``: the factory registered for the
objects' interfaces in the current site manager, called with the objects
as they are.  ``query_adapter(ob, interface)`` is ``interface(ob, None)``,
``ob`` asked for ``__conform__`` without the formatted AttributeError of
zope.interface's C lookup when it has none; for a security-proxied
``ob``, when zope.component's hook is zope.interface's only adapter hook
and the current site's lookup is zope.interface's own, the adapter is
looked up for the interfaces read inside the proxy (as below), with the
hook's own lookup, and called with the proxy, as the hook would.

Both ask the site manager's adapter registry directly instead of through
zope.component's nested calls, and read the interfaces of a
security-proxied object from the object inside the proxy: the same
declaration a proxy's ``__providedBy__`` answers, which the proxy hands
back only after a failed ``__Security_checker__`` lookup with its
formatted AttributeError (``interfaces_of``, ``provides``; only where the
proxy's checker lets anyone read ``__providedBy__``).  Whenever anything
else is installed (another zope.event subscriber, a site manager or
adapter registry whose methods are not zope.interface's own, a checker
guarding ``__providedBy__``) they call zope.event, zope.component and the
proxy.  docs/performance.md says what this buys.
"""

from types import BuiltinMethodType
from weakref import ref

import zope.event
import zope.interface.interface
from zope.component import getSiteManager
from zope.component import hooks
from zope.component import queryMultiAdapter
from zope.component._api import adapter_hook as component_adapter_hook
from zope.component.event import dispatch
from zope.component.event import objectEventNotify
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.interface.adapter import AdapterLookupBase
from zope.interface.adapter import LookupBase
from zope.interface.adapter import VerifyingBase
from zope.interface.interface import InterfaceBase
from zope.interface.interfaces import ComponentLookupError
from zope.interface.registry import Components
from zope.security.checker import Checker
from zope.security.checker import CheckerPublic
from zope.security.checker import _available_by_default
from zope.security.proxy import Proxy
from zope.security.proxy import getChecker
from zope.security.proxy import removeSecurityProxy

#: zope.event's subscribers when only zope.component dispatches.
STANDARD_SUBSCRIBERS = [dispatch]
#: The handlers of an object event when only zope.component's dispatches.
OBJECT_EVENT_HANDLERS = [objectEventNotify]
#: zope.interface's adapter hooks when only zope.component's is installed.
STANDARD_ADAPTER_HOOKS = [component_adapter_hook]
#: The C lookups' ``adapter_hook`` and the ``lookup1`` it calls.
LOOKUP1_OF_HOOK = {base.adapter_hook: base.lookup1
                   for base in (LookupBase, VerifyingBase)}
STANDARD_ADAPT = InterfaceBase.__adapt__
PROVIDED_BY = '__providedBy__'


#: zope.interface's own methods, which ``subscription_registry`` and
#: ``lookup_registry`` look for on the site manager and its registry.
OWN_SUBSCRIBERS = Components.subscribers
OWN_QUERY_MULTI_ADAPTER = Components.queryMultiAdapter
LOOKUPS_OWN_SUBSCRIBERS = AdapterLookupBase.subscribers
LOOKUPS_OWN_QUERY_MULTI_ADAPTER = AdapterLookupBase.queryMultiAdapter


def subscription_registry(site_manager):
    """The adapter registry of ``site_manager`` when its ``subscribers``
    and its registry's are zope.interface's own, else None.  (Attributes
    read by name, not ``getattr``: it runs nine times a request.)"""
    try:
        if type(site_manager).subscribers is not OWN_SUBSCRIBERS:
            return None
        adapters = site_manager.adapters
        if adapters.subscribers.__func__ is not LOOKUPS_OWN_SUBSCRIBERS:
            return None
    except AttributeError:  # none, or not a bound method
        return None
    return adapters


def lookup_registry(site_manager):
    """The adapter registry of ``site_manager`` when its
    ``queryMultiAdapter`` and its registry's are zope.interface's own,
    else None (as ``subscription_registry``)."""
    try:
        if type(site_manager).queryMultiAdapter \
                is not OWN_QUERY_MULTI_ADAPTER:
            return None
        adapters = site_manager.adapters
        if adapters.queryMultiAdapter.__func__ \
                is not LOOKUPS_OWN_QUERY_MULTI_ADAPTER:
            return None
    except AttributeError:  # none, or not a bound method
        return None
    return adapters


def interfaces_of(ob):
    """``providedBy(ob)``, read inside a security proxy whose checker
    (zope.security's own ``Checker``) lets anyone read ``__providedBy__``:
    public, or not named and available by default.  Any other proxy is
    asked."""
    if type(ob) is not Proxy:
        return providedBy(ob)
    checker = getChecker(ob)
    if type(checker) is Checker:
        permission = checker.permission_id(PROVIDED_BY)
        if permission is CheckerPublic or (
                permission is None and PROVIDED_BY in _available_by_default):
            return providedBy(removeSecurityProxy(ob))
    return providedBy(ob)


def provides(ob, interface):
    """``interface.providedBy(ob)``, the interfaces read as
    ``interfaces_of`` reads them."""
    return interfaces_of(ob).isOrExtends(interface)


def notify(event):
    """``zope.event.notify(event)``, the same handlers called in the same
    order (see the module's docstring)."""
    if zope.event.subscribers != STANDARD_SUBSCRIBERS:
        zope.event.notify(event)
        return
    adapters = subscription_registry(getSiteManager())
    if adapters is None:
        zope.event.notify(event)
        return
    for handler in adapters.subscriptions((providedBy(event),), None):
        if handler is objectEventNotify:
            notify_object_handlers(event)
        else:
            handler(event)


def notify_event(event_class, *args):
    """``notify(event_class(*args))``, the event made only when a handler
    may hear it: not when zope.component dispatches alone and the current
    site manager and its bases register no handler for the interfaces
    ``event_class`` implements (its instances declare no others)."""
    if zope.event.subscribers == STANDARD_SUBSCRIBERS:
        adapters = subscription_registry(getSiteManager())
        if adapters is not None and not adapters.subscriptions(
                (implementedBy(event_class),), None):
            return
    notify(event_class(*args))


def dispatching_registry():
    """The adapter registry of the current site manager whose
    subscriptions are the handlers an event reaches, when zope.event
    calls zope.component's dispatch alone; None otherwise (another
    subscriber, or a site manager without such a registry)."""
    if zope.event.subscribers != STANDARD_SUBSCRIBERS:
        return None
    return subscription_registry(getSiteManager())


def object_event_handlers(event_class, ob):
    """The handlers ``notify(event_class(ob, ...))`` would call, when all
    of them are registered for ``(ob, event)``: the current site manager
    and its bases register none for the event but zope.component's
    ``objectEventNotify`` (or none at all: an empty list).  None when
    other handlers may be called (or ``notify`` would call zope.event).
    The interfaces of the event are those ``event_class`` implements (its
    instances declare no others); the lookups are the registry's own,
    cached by zope.interface, which drops its caches when a registration
    or a declaration changes."""
    adapters = dispatching_registry()
    if adapters is None:
        return None
    event_spec = implementedBy(event_class)
    handlers = adapters.subscriptions((event_spec,), None)
    if not handlers:
        return handlers
    if handlers != OBJECT_EVENT_HANDLERS:
        return None
    return adapters.subscriptions((interfaces_of(ob), event_spec), None)


def remember(memo, bound, key, value):
    """``memo[key] = value``, the memo emptied first when it holds
    ``bound`` entries (what it remembers is chosen by clients or loaded
    code, so it must not grow without end)."""
    if len(memo) >= bound:
        memo.clear()
    memo[key] = value


#: The most (registry, event, object interfaces) ``unheard_object_event``
#: remembers (the interfaces of an object with declarations of its own
#: are its own, so the memo is bounded).
MAX_UNHEARD = 256
#: (id of the adapters, event spec, object spec) -> (event spec's
#: resolution order, object spec's resolution order,
#: ``registry_state(adapters)``).  The registries are held by weak
#: references alone: a local site's registry holds its connection, which
#: a module's memo must not keep open after its database is closed.
_unheard = {}


def registry_state(adapters):
    """What ``adapters``' subscriptions depend on beyond the interfaces
    asked: each registry along its resolution order (``adapters`` first)
    with its generation (bumped by every registration, base change and
    reload) and its lookup (made anew when a persistent registry is
    loaded again, so an aborted registration whose generation a reload
    repeats is told apart); registries and lookups by weak reference."""
    return tuple([(ref(registry), registry._generation,
                   ref(registry._v_lookup))
                  for registry in adapters.ro])


def state_holds(state):
    """Whether every registry of ``registry_state``'s answer is alive and
    still has its generation and lookup, read from its ``__dict__``: a
    persistent registry is not marked used for it (its attributes would
    be), and a ghost (invalidated, or deactivated by its cache) holds
    neither, so it is loaded again by the lookups that follow."""
    for registry, generation, lookup in state:
        registry = registry()
        if registry is None:
            return False
        held = registry.__dict__
        if held.get('_generation') != generation or \
                held.get('_v_lookup') is not lookup():
            return False
    return True


def unheard_object_event(event_class, ob):
    """True when ``notify_object_event(event_class, ob, ...)`` would call
    no handler (``object_event_handlers`` is empty), the answer
    remembered per adapter registry of the current site, event and
    interfaces of ``ob`` for as long as the registries along the
    registry's resolution order (``registry_state``) live and stay, and
    both interfaces' resolution orders stay; False when a handler hears
    it or it cannot be told."""
    adapters = dispatching_registry()
    if adapters is None:
        return False
    event_spec = implementedBy(event_class)
    spec = interfaces_of(ob)
    key = (id(adapters), event_spec, spec)
    known = _unheard.get(key)
    if known is not None and known[0] is event_spec.__sro__ and \
            known[1] is spec.__sro__ and known[2][0][0]() is adapters and \
            state_holds(known[2]):
        return True
    if object_event_handlers(event_class, ob) != []:
        return False
    remember(_unheard, MAX_UNHEARD, key,
             (event_spec.__sro__, spec.__sro__, registry_state(adapters)))
    return True


def clear_unheard():
    """Forget what ``unheard_object_event`` remembers (tests)."""
    _unheard.clear()


def notify_object_event(event_class, ob, *args):
    """``notify(event_class(ob, *args))``, the event made only when a
    handler hears it (most objects traversal reaches have none), and its
    object handlers called as ``objectEventNotify`` would call them when
    they are the only ones (``object_event_handlers``).  ``ob`` is the
    event's ``object``."""
    handlers = object_event_handlers(event_class, ob)
    if handlers is None:
        notify(event_class(ob, *args))
    elif handlers:
        event = event_class(ob, *args)
        for handler in handlers:
            handler(ob, event)


def notify_object_handlers(event):
    """What ``objectEventNotify(event)`` does: the handlers registered for
    ``(event.object, event)``, in the site manager current now."""
    site_manager = getSiteManager()
    adapters = subscription_registry(site_manager)
    if adapters is None:
        site_manager.subscribers((event.object, event), None)
        return
    ob = event.object
    for handler in adapters.subscriptions(
            (interfaces_of(ob), providedBy(event)), None):
        handler(ob, event)


def query_multi_adapter(objects, interface, name=''):
    """``zope.component.queryMultiAdapter(objects, interface, name)``
    (see the module's docstring); None when there is none."""
    adapters = lookup_registry(getSiteManager())
    if adapters is None:
        return queryMultiAdapter(objects, interface, name)
    if len(objects) == 2:  # (context, request): traversal's lookups
        context, request = objects
        required = (interfaces_of(context), interfaces_of(request))
    else:
        required = tuple([interfaces_of(ob) for ob in objects])
    factory = adapters.lookup(required, interface, name)
    if factory is None:
        return None
    # zope.interface also unwraps super() objects: none are passed here
    return factory(*objects)


def query_adapter(ob, interface):
    """``interface(ob, None)``, with ``ob`` asked for ``__conform__`` as
    Python's ``getattr`` with a default asks: an object that has none is
    spared the formatted AttributeError of zope.interface's C lookup.
    Then the same steps: its ``__conform__``, else the interface's
    ``__adapt__`` (the object itself if it provides the interface, else
    the adapter hooks)."""
    conform = getattr(ob, '__conform__', None)
    if conform is not None:
        adapter = interface._call_conform(conform)
        if adapter is not None:
            return adapter
    if type(ob) is Proxy:
        lookup1 = hooked_lookup1(interface)
        if lookup1 is not None:
            return adapt_proxied(ob, interface, lookup1)
    return interface.__adapt__(ob)


def hooked_lookup1(interface):
    """The ``lookup1`` of the current site's adapter lookup, bound, when
    adapting to ``interface`` goes through zope.interface's own
    ``__adapt__`` to zope.component's hook alone, and the hook to the C
    ``adapter_hook`` of that lookup; else None.  The three checks are
    made on every call; what the site's hook calls is remembered for the
    last hook seen (``last_hook``)."""
    global last_hook
    if type(interface).__adapt__ is not STANDARD_ADAPT \
            or zope.interface.interface.adapter_hooks \
            != STANDARD_ADAPTER_HOOKS \
            or component_adapter_hook.implementation \
            is not hooks.adapter_hook:
        return None
    hook = hooks.siteinfo.adapter_hook
    last = last_hook  # one read: another thread may swap it
    if last[0] is hook:
        return last[1]
    lookup1 = hook_lookup1(hook)
    last_hook = (hook, lookup1)
    return lookup1


def hook_lookup1(hook):
    """The ``lookup1`` ``hook`` calls, bound to its lookup, when ``hook``
    is the C ``adapter_hook`` of a zope.interface lookup; else None."""
    lookup = getattr(hook, '__self__', None)
    if type(hook) is BuiltinMethodType and isinstance(lookup, LookupBase):
        adapter_hook = getattr(type(lookup), 'adapter_hook', None)
        lookup1 = LOOKUP1_OF_HOOK.get(adapter_hook)
        if lookup1 is not None and hook == adapter_hook.__get__(lookup):
            return lookup1.__get__(lookup)
    return None


#: ``(hook, hook_lookup1(hook))`` for the last site adapter hook
#: ``hooked_lookup1`` saw: swapped whole, so a thread reads a pair that
#: belongs together.  The hook is a bound method, made anew whenever
#: zope.component's ``setSite`` drops its thread's hook, held here so its
#: identity is not reused; what it calls cannot change while it lives.
last_hook = (None, None)


def adapt_proxied(ob, interface, lookup1):
    """What ``interface.__adapt__(ob)`` does for a proxied ``ob`` through
    zope.component's hook (see ``hooked_lookup1``), the interfaces read
    as ``interfaces_of`` reads them."""
    spec = interfaces_of(ob)
    if spec.isOrExtends(interface):
        return ob
    factory = lookup1(spec, interface, '')
    if factory is None:
        return None
    try:
        return factory(ob)
    except ComponentLookupError:
        return None


#: What ``hooked_factory`` answers when the factory cannot be told.
UNKNOWN = object()


def hooked_factory(ob, interface):
    """The factory ``interface(ob, None)`` calls for ``ob`` (proxied or
    not), looked up as zope.component's hook looks it up
    (``hooked_lookup1``) for the interfaces ``interfaces_of`` reads: None
    when there is none; ``UNKNOWN`` when something else comes first or
    decides (``ob`` has a ``__conform__`` or provides ``interface``, or the
    hooks are not zope.component's own)."""
    if getattr(ob, '__conform__', None) is not None:
        return UNKNOWN
    lookup1 = hooked_lookup1(interface)
    if lookup1 is None:
        return UNKNOWN
    spec = interfaces_of(ob)
    if spec.isOrExtends(interface):
        return UNKNOWN
    return lookup1(spec, interface, '')


def has_no_factory(ob, interfaces):
    """True when ``hooked_factory(ob, interface)`` is None for each of
    ``interfaces``, the checks that do not depend on the interface made
    once (``interfaces`` share their class, so ``hooked_lookup1`` answers
    alike for each); False when one has a factory or it cannot be told."""
    if getattr(ob, '__conform__', None) is not None:
        return False
    lookup1 = hooked_lookup1(interfaces[0])
    if lookup1 is None:
        return False
    spec = interfaces_of(ob)
    for interface in interfaces:
        if spec.isOrExtends(interface) \
                or lookup1(spec, interface, '') is not None:
            return False
    return True


def adapter_factory(ob, interface):
    """The factory ``interface(ob, None)`` calls for an unproxied ``ob``
    that has no ``__conform__`` and does not provide ``interface``, looked
    up as zope.component's hook looks it up (``hooked_factory``); None when
    there is none or when ``ob`` or the hooks are not of that kind."""
    if type(ob) is Proxy:
        return None
    factory = hooked_factory(ob, interface)
    return None if factory is UNKNOWN else factory
