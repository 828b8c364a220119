"""zope.component's lookups and notifications in fewer steps.

``install()`` rebinds functions of ``zope.pipeline.components`` (whose
stock versions call zope.event, zope.component and zope.interface) to
the versions below; ``uninstall()`` puts the stock ones back.

What they do: ``query_multi_adapter`` and ``query_adapter`` ask the
current site manager's adapter registry (or the C ``lookup1`` behind
zope.component's site adapter hook) directly instead of through
zope.component's nested calls, and read the interfaces of a
security-proxied object from the object inside the proxy: the same
declaration the proxy's ``__providedBy__`` answers, which the proxy hands
back only after a failed ``__Security_checker__`` lookup with its
formatted AttributeError (``interfaces_of``, only where the proxy's
checker lets anyone read ``__providedBy__``).  ``hooked_factory``,
``has_no_factory`` and ``adapter_factory`` tell which factory adapting
would call, so templates and the security policy skip what cannot apply.
``notify_object_event`` calls the object handlers of an event directly
when zope.component's ``objectEventNotify`` would be the only one to
call them.  Whenever anything else is installed (another zope.event
subscriber or adapter hook, a site manager or adapter registry whose
methods are not zope.interface's own, a checker guarding
``__providedBy__``) they call the stock functions.

They read zope.security's ``_available_by_default`` and compare the
site manager's, the registry's and the hooks' methods with
zope.interface's and zope.component's own (identity checks that a
change of those packages inside the allowed versions can make wrong).

Measured gain (instructions per request of the peers' page, 400
requests, ``python -m benchmarks.instructions``, 2026-11-28): the whole
module, proxied chain 2,001,103 -> 1,605,987 (-19.7 %), view-checked
chain 1,623,203 -> 1,320,878 (-18.6 %).  Each part left out alone:
``query_multi_adapter``, ``lookup_registry``, ``interfaces_of`` and
``provides`` (traversal's lookups) +11.8 % proxied, +15.6 %
view-checked; ``notify_object_event`` (BeforeTraverseEvent for every
object traversal reaches) +4.0 % proxied, +1.3 % view-checked;
``query_adapter``, ``hooked_lookup1``, ``hooked_factory``,
``has_no_factory`` and ``adapter_factory`` (the templates' path steps,
the policy's local maps, the response's charset, the request's
languages) +8.8 % proxied, +6.4 % view-checked.

What would retire it: zope.security's proxy answering ``__providedBy__``
without first looking up ``__Security_checker__`` through its checker
(so ``providedBy(proxy)`` costs what ``providedBy(ob)`` does), and
zope.component's ``queryMultiAdapter``/``queryAdapter`` calling the
site's C lookup without their Python layers (``_api`` -> site manager ->
registry -> lookup).
"""

from types import BuiltinMethodType

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

from zope.pipeline import components

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

UNKNOWN = components.UNKNOWN


def subscription_registry(site_manager):
    """The adapter registry of ``site_manager`` when its ``subscribers``
    and its registry's are zope.interface's own, else None.  (Attributes
    read by name, not ``getattr``: it runs several times a request.)"""
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


def dispatching_registry():
    """The adapter registry of the current site manager whose
    subscriptions are the handlers an event reaches, when zope.event
    calls zope.component's dispatch alone; None otherwise."""
    if zope.event.subscribers != STANDARD_SUBSCRIBERS:
        return None
    return subscription_registry(getSiteManager())


def object_event_handlers(event_class, ob):
    """The handlers ``notify(event_class(ob, ...))`` would call, when all
    of them are registered for ``(ob, event)``: the current site manager
    and its bases register none for the event but zope.component's
    ``objectEventNotify`` (or none at all: an empty list).  None when
    other handlers may be called.  The interfaces of the event are those
    ``event_class`` implements (its instances declare no others)."""
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


def notify_object_event(event_class, ob, *args):
    """``notify(event_class(ob, *args))``, the event made only when a
    handler hears it, and its object handlers called as
    ``objectEventNotify`` would call them when they are the only ones
    (``object_event_handlers``)."""
    handlers = object_event_handlers(event_class, ob)
    if handlers is None:
        components.notify(event_class(ob, *args))
    elif handlers:
        event = event_class(ob, *args)
        for handler in handlers:
            handler(ob, event)


def query_multi_adapter(objects, interface, name=''):
    """``zope.component.queryMultiAdapter(objects, interface, name)``:
    the factory registered for the objects' interfaces (``interfaces_of``)
    in the current site manager's registry, called with the objects as
    they are; None when there is none."""
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
    ``__adapt__``; for a security-proxied ``ob`` going through
    zope.component's hook alone, the hook's own lookup asked for the
    interfaces ``interfaces_of`` reads (``adapt_proxied``)."""
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
    ``adapter_hook`` of that lookup; else None."""
    if type(interface).__adapt__ is not STANDARD_ADAPT \
            or zope.interface.interface.adapter_hooks \
            != STANDARD_ADAPTER_HOOKS \
            or component_adapter_hook.implementation \
            is not hooks.adapter_hook:
        return None
    return hook_lookup1(hooks.siteinfo.adapter_hook)


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


def hooked_factory(ob, interface):
    """The factory ``interface(ob, None)`` calls for ``ob`` (proxied or
    not), looked up as zope.component's hook looks it up
    (``hooked_lookup1``) for the interfaces ``interfaces_of`` reads: None
    when there is none; ``UNKNOWN`` when something else comes first or
    decides (``ob`` has a ``__conform__`` or provides ``interface``, or
    the hooks are not zope.component's own)."""
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
    up as zope.component's hook looks it up (``hooked_factory``); None
    when there is none or when ``ob`` or the hooks are not of that
    kind."""
    if type(ob) is Proxy:
        return None
    factory = hooked_factory(ob, interface)
    return None if factory is UNKNOWN else factory


#: The functions of ``zope.pipeline.components`` this module replaces.
REPLACED = ('interfaces_of', 'provides', 'lookup_registry',
            'query_multi_adapter', 'notify_object_event', 'query_adapter',
            'hooked_lookup1', 'hooked_factory', 'has_no_factory',
            'adapter_factory')

#: The stock functions, kept while installed.
_stock = {}


def install():
    """Rebind ``components``' functions named in ``REPLACED`` to this
    module's."""
    if _stock:
        return
    for name in REPLACED:
        _stock[name] = getattr(components, name)
        setattr(components, name, globals()[name])


def uninstall():
    """Put ``components``' stock functions back."""
    for name, function in _stock.items():
        setattr(components, name, function)
    _stock.clear()
