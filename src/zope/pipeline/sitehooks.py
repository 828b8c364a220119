"""The traversal hooks of site_events and authenticate run as one.

A chain with both stages runs, for every object traversal reaches,
site_events' ``before_traverse`` (BeforeTraverseEvent: zope.site enters a
local site) then authenticate's ``authenticate_at_site`` (a local site's
authentication utility).  ``combine_hooks`` puts ``site_hook`` in the
place of the two when they follow each other: the same steps in that
order, made in one call instead of about eight.
"""

import zope.event
from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.component import getSiteManager
from zope.component.hooks import getSiteManager as hooked_site_manager
from zope.component.hooks import siteinfo
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.location.interfaces import ISite
from zope.publisher.base import BaseRequest
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import BeforeTraverseEvent

from zope.pipeline.components import OBJECT_EVENT_HANDLERS
from zope.pipeline.components import STANDARD_SUBSCRIBERS
from zope.pipeline.components import interfaces_of
from zope.pipeline.components import notify
from zope.pipeline.components import notify_object_event
from zope.pipeline.components import subscription_registry
from zope.pipeline.stages.authenticate import authenticate_at_site
from zope.pipeline.stages.authenticate import authenticate_locally
from zope.pipeline.stages.site_events import before_traverse

#: zope.publisher's ``request.principal`` (a property reading
#: ``_principal``), read directly when a request class keeps it.
BASE_PRINCIPAL = BaseRequest.principal


def site_hook(request, ob):
    """``before_traverse(request, ob)``, then
    ``authenticate_at_site(request, ob)`` (in the site the event's
    handlers set).

    The event is sent as ``components.notify_object_event`` sends it (made
    only when a handler hears it; its object handlers called directly when
    zope.component's ``objectEventNotify`` is the only handler of the
    event), here with the current site manager read as zope.component's
    site hook answers it; the request's principal is read from the
    request when its class keeps zope.publisher's property."""
    adapters = None
    if getSiteManager.implementation is hooked_site_manager and \
            zope.event.subscribers == STANDARD_SUBSCRIBERS:
        adapters = subscription_registry(siteinfo.sm)
    if adapters is None:
        notify_object_event(BeforeTraverseEvent, ob, request)
    else:
        event_spec = implementedBy(BeforeTraverseEvent)
        handlers = adapters.subscriptions((event_spec,), None)
        if handlers:
            if handlers != OBJECT_EVENT_HANDLERS:
                notify(BeforeTraverseEvent(ob, request))
            else:
                handlers = adapters.subscriptions(
                    (interfaces_of(ob) if type(ob) is Proxy
                     else providedBy(ob), event_spec), None)
                if handlers:
                    event = BeforeTraverseEvent(ob, request)
                    for handler in handlers:
                        handler(ob, event)
    principal = request._principal \
        if type(request).principal is BASE_PRINCIPAL else request.principal
    if IUnauthenticatedPrincipal.providedBy(principal) and \
            ISite.providedBy(removeSecurityProxy(ob)):
        authenticate_locally(request)


#: Hooks that run as one when they follow each other in a chain.
COMBINED = {(before_traverse, authenticate_at_site): site_hook}


def combine_hooks(hooks):
    """``hooks`` (a chain's traversal hooks, in order) with each pair of
    ``COMBINED`` that follow each other replaced by their combination."""
    combined = []
    for hook in hooks:
        if combined and (combined[-1], hook) in COMBINED:
            combined[-1] = COMBINED[combined[-1], hook]
        else:
            combined.append(hook)
    return combined
