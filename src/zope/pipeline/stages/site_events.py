"""site_events: BeforeTraverseEvent for every object traversal reaches (so
zope.site's local site hooks set the site), EndRequestEvent at the end, and
the thread's site cleared after every request, errors included.

Building the stage installs zope.component's site hooks (``setHooks``), as
the classic application server did at startup: without them component
lookups ignore the local site that traversal set.
"""

from zope.component.hooks import setHooks
from zope.component.hooks import setSite
from zope.interface import Interface
from zope.publisher.interfaces import EndRequestEvent
from zope.traversing.interfaces import BeforeTraverseEvent

from zope.pipeline import components
from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract


class ISiteEventsSettings(Interface):
    """site_events has no settings."""


def before_traverse(request, ob):
    """BeforeTraverseEvent for ``ob``, made only when a handler hears it
    (``components.notify_object_event``: most objects have none)."""
    components.notify_object_event(BeforeTraverseEvent, ob, request)


def end_request(environ):
    """Notify EndRequestEvent (also after an error, as the classic
    publisher's ``endRequest`` did; made only when a handler may hear
    it), then clear the site in any case."""
    try:
        components.notify_event(EndRequestEvent, environ.get(keys.PUBLISHED),
                                environ[keys.REQUEST_KEY])
    finally:
        setSite(None)


class SiteEventsStage:
    """Events around traversal; the site never outlives the request."""

    settings_schema = ISiteEventsSettings
    contract = Contract(
        reads=(keys.REQUEST_KEY,),
        reads_if_present=(keys.PUBLISHED,))

    #: Assembled into the chain when it compiles (see IStageFactory).
    traversal_hooks = (before_traverse,)

    def __init__(self, next_app, build=None):
        self.next_app = next_app
        setHooks()

    def __call__(self, environ, start_response):
        try:
            return self.next_app(environ, start_response)
        finally:
            end_request(environ)
