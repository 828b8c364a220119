"""The traversal hooks of site_events and authenticate run as one.

A chain with both stages runs, for every object traversal reaches,
site_events' ``before_traverse`` (BeforeTraverseEvent: zope.site enters a
local site) then authenticate's ``authenticate_at_site`` (a local site's
authentication utility).  ``combine_hooks`` puts ``site_hook`` in the
place of the two when they follow each other: the same steps in that
order, in one hook call.
"""

from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.location.interfaces import ISite
from zope.publisher.base import BaseRequest
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import BeforeTraverseEvent

from zope.pipeline.components import notify_object_event
from zope.pipeline.components import unheard_object_event
from zope.pipeline.stages.authenticate import authenticate_at_site
from zope.pipeline.stages.authenticate import authenticate_locally
from zope.pipeline.stages.site_events import before_traverse

#: zope.publisher's ``request.principal`` (a property reading
#: ``_principal``), read directly when a request class keeps it.
BASE_PRINCIPAL = BaseRequest.principal


def site_hook(request, ob):
    """``before_traverse(request, ob)``, then
    ``authenticate_at_site(request, ob)`` (in the site the event's
    handlers set): the event sent by ``components.notify_object_event``
    (made only when a handler hears it), the request's principal read
    from the request when its class keeps zope.publisher's property.
    Most objects traversal reaches are no site and nobody hears their
    event (``components.unheard_object_event``, remembered): nothing is
    done for them."""
    if not ISite.providedBy(removeSecurityProxy(ob)) and \
            unheard_object_event(BeforeTraverseEvent, ob):
        return
    notify_object_event(BeforeTraverseEvent, ob, request)
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
