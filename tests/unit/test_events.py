"""zope.pipeline.events.notify calls the handlers zope.event.notify calls,
in the same order, and is zope.event.notify whenever anything but
zope.component's dispatch is installed."""

import pytest
import zope.component.event  # noqa: F401 - installs dispatch
import zope.event
import zope.testing.cleanup
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from zope.component import getGlobalSiteManager
from zope.component import provideHandler
from zope.component.hooks import setHooks
from zope.component.hooks import setSite
from zope.component.hooks import site
from zope.interface import Interface
from zope.interface import implementer
from zope.interface.interfaces import IObjectEvent
from zope.interface.interfaces import ObjectEvent
from zope.interface.registry import Components
from zope.site.folder import rootFolder
from zope.site.site import LocalSiteManager
from zope.traversing.interfaces import BeforeTraverseEvent
from zope.traversing.interfaces import IBeforeTraverseEvent

from zope.pipeline import events


class IContent(Interface):
    pass


class IOther(Interface):
    pass


@implementer(IContent)
class Content:
    pass


@implementer(IContent, IOther)
class Other:
    pass


class IPlainEvent(Interface):
    pass


@implementer(IPlainEvent)
class PlainEvent:
    pass


EVENT_INTERFACES = (Interface, IObjectEvent, IBeforeTraverseEvent,
                    IPlainEvent)
OBJECT_INTERFACES = (Interface, IContent, IOther)


def recorder(calls, label):
    def handler(*args):
        calls.append((label,) + tuple(type(arg).__name__ for arg in args))
    return handler


def register_handlers(calls, event_handlers, object_handlers):
    for number, interface in enumerate(event_handlers):
        provideHandler(recorder(calls, 'event %d' % number), (interface,))
    for number, (ob_interface, event_interface) in enumerate(
            object_handlers):
        provideHandler(recorder(calls, 'object %d' % number),
                       (ob_interface, event_interface))


def standard_dispatch():
    """What zope.component's configuration sets up: the site hooks and
    objectEventNotify (cleanUp removes its registration)."""
    setHooks()
    getGlobalSiteManager().registerHandler(
        zope.component.event.objectEventNotify)


@pytest.fixture
def hooked(clean_zope):
    standard_dispatch()


@settings(max_examples=60, deadline=None)
@given(event_handlers=st.lists(st.sampled_from(EVENT_INTERFACES),
                               max_size=4),
       object_handlers=st.lists(st.tuples(st.sampled_from(OBJECT_INTERFACES),
                                          st.sampled_from(EVENT_INTERFACES)),
                                max_size=4),
       ob=st.sampled_from((Content, Other)),
       kind=st.sampled_from(('object event', 'before traverse', 'plain')))
def test_the_same_handlers_are_called_in_the_same_order(
        event_handlers, object_handlers, ob, kind):
    zope.testing.cleanup.cleanUp()
    try:
        standard_dispatch()
        calls = []
        register_handlers(calls, event_handlers, object_handlers)
        event = {'object event': lambda: ObjectEvent(ob()),
                 'before traverse': lambda: BeforeTraverseEvent(ob(), None),
                 'plain': PlainEvent}[kind]()
        zope.event.notify(event)
        expected = list(calls)
        calls[:] = []
        events.notify(event)
        assert calls == expected
    finally:
        zope.testing.cleanup.cleanUp()


def test_handlers_of_a_local_site_and_its_bases_are_called(hooked):
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    calls = []
    provideHandler(recorder(calls, 'global'), (IContent, IObjectEvent))
    root.getSiteManager().registerHandler(recorder(calls, 'local'),
                                          (IContent, IObjectEvent))
    with site(root):
        events.notify(ObjectEvent(Content()))
        assert sorted(calls) == [('global', 'Content', 'ObjectEvent'),
                                 ('local', 'Content', 'ObjectEvent')]


def test_object_handlers_come_from_the_site_a_handler_before_set(hooked):
    """zope.site's threadSiteSubscriber sets the site from a handler: the
    object handlers are then looked up in the new site, as
    zope.component's objectEventNotify looks them up when it is called."""
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    calls = []
    gsm = getGlobalSiteManager()
    # registered before objectEventNotify's registration is looked up:
    # handlers run in registration order, so register it again after
    gsm.unregisterHandler(zope.component.event.objectEventNotify)
    gsm.registerHandler(lambda event: setSite(root), (IObjectEvent,))
    gsm.registerHandler(zope.component.event.objectEventNotify)
    root.getSiteManager().registerHandler(recorder(calls, 'local'),
                                          (IContent, IObjectEvent))
    try:
        events.notify(ObjectEvent(Content()))
    finally:
        setSite(None)
    assert calls == [('local', 'Content', 'ObjectEvent')]


def test_another_zope_event_subscriber_is_called_too(hooked):
    seen = []
    zope.event.subscribers.append(seen.append)
    try:
        event = PlainEvent()
        events.notify(event)
    finally:
        zope.event.subscribers.remove(seen.append)
    assert seen == [event]


def test_a_site_manager_with_its_own_subscribers_is_asked_itself(hooked):
    asked = []

    class Recording(Components):
        def subscribers(self, objects, provided):
            asked.append(objects)
            return super().subscribers(objects, provided)

    registry = Recording('recording', (getGlobalSiteManager(),))
    calls = []
    registry.registerHandler(recorder(calls, 'own'), (IContent, IObjectEvent))
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    with site(root):
        sm = root.getSiteManager()
        sm.__bases__ = (registry,)
        event = ObjectEvent(Content())
        events.notify(event)
    assert calls == [('own', 'Content', 'ObjectEvent')]

    from zope.component import getSiteManager
    getSiteManager.sethook(lambda context=None: registry)
    try:
        events.notify(event)
    finally:
        getSiteManager.reset()
        setHooks()
    assert (event,) in asked and (event.object, event) in asked


def test_a_registry_whose_subscribers_are_not_zope_interfaces_is_asked(
        hooked):
    adapters = getGlobalSiteManager().adapters
    asked = []
    original = adapters.subscribers

    def subscribers(objects, provided):
        asked.append(objects)
        return original(objects, provided)

    adapters.subscribers = subscribers
    try:
        event = ObjectEvent(Content())
        events.notify(event)
    finally:
        adapters.subscribers = original
    assert asked == [(event,), (event.object, event)]
