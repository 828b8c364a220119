"""Events the pipeline notifies, dispatched as zope.component dispatches
them, in fewer steps.

``notify(event)`` calls the handlers ``zope.event.notify(event)`` would
call, in the same order: when zope.component's ``dispatch`` is zope.event's
only subscriber (any application that adds none of its own), those the
current site manager and its bases register for the event, and, where one
of them is zope.component's ``objectEventNotify``, those registered for
the event's object and the event, looked up in the site manager current
at that moment (a handler before it may have set another site, as
zope.site's ``threadSiteSubscriber`` does).  It asks the site manager's
adapter registry for its subscriptions directly instead of through
zope.component's five nested calls per lookup.  Whenever anything else
is installed (another zope.event subscriber, a registry whose
``subscribers`` is not zope.interface's own) it is
``zope.event.notify``.  docs/performance.md says what this buys.
"""

import zope.event
from zope.component import getSiteManager
from zope.component.event import dispatch
from zope.component.event import objectEventNotify
from zope.interface import providedBy
from zope.interface.adapter import AdapterLookupBase
from zope.interface.registry import Components

#: zope.event's subscribers when only zope.component dispatches.
STANDARD_SUBSCRIBERS = [dispatch]


def standard_adapters(site_manager):
    """The adapter registry of ``site_manager`` when its subscribers are
    looked up the standard way (zope.interface's), else None."""
    if type(site_manager).subscribers is not Components.subscribers:
        return None
    adapters = site_manager.adapters
    subscribers = getattr(adapters, 'subscribers', None)
    if getattr(subscribers, '__func__', None) is not \
            AdapterLookupBase.subscribers:
        return None
    return adapters


def notify(event):
    """``zope.event.notify(event)``, the same handlers called in the same
    order (see the module's docstring)."""
    if zope.event.subscribers != STANDARD_SUBSCRIBERS:
        zope.event.notify(event)
        return
    adapters = standard_adapters(getSiteManager())
    if adapters is None:
        zope.event.notify(event)
        return
    for handler in adapters.subscriptions((providedBy(event),), None):
        if handler is objectEventNotify:
            notify_object_handlers(event)
        else:
            handler(event)


def notify_object_handlers(event):
    """What ``objectEventNotify(event)`` does: the handlers registered for
    ``(event.object, event)``, in the site manager current now."""
    site_manager = getSiteManager()
    adapters = standard_adapters(site_manager)
    if adapters is None:
        site_manager.subscribers((event.object, event), None)
        return
    ob = event.object
    for handler in adapters.subscriptions(
            (providedBy(ob), providedBy(event)), None):
        handler(ob, event)
