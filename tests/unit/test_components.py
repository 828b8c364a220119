"""zope.pipeline.components, stock and with zope.pipeline._speedups'
zope_component installed (every test runs both ways): the events are
heard by the handlers zope.event.notify calls, in the same order, made
only when one hears them; query_multi_adapter finds what
zope.component.queryMultiAdapter finds, query_adapter what the
interface finds.  The speedups' own lookups (``fast``) call
zope.component whenever anything else is installed."""

import contextlib

import pytest
import transaction
import zope.component.event  # noqa: F401 - installs dispatch
import zope.event
import zope.testing.cleanup
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from ZODB import DB
from zope.component import getGlobalSiteManager
from zope.component import getSiteManager
from zope.component import provideHandler
from zope.component.hooks import setHooks
from zope.component.hooks import setSite
from zope.component.hooks import site
from zope.component.persistentregistry import PersistentComponents
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import classImplements
from zope.interface import implementer
from zope.interface.interfaces import IObjectEvent
from zope.interface.interfaces import ObjectEvent
from zope.interface.registry import Components
from zope.site.folder import rootFolder
from zope.site.site import LocalSiteManager
from zope.traversing.interfaces import BeforeTraverseEvent
from zope.traversing.interfaces import IBeforeTraverseEvent

from zope.pipeline import components as events
from zope.pipeline._speedups import zope_component as fast


@pytest.fixture(autouse=True, params=['stock', 'speedups'])
def seam(request):
    """``components`` as it is without the speedups, then with them;
    left as the session had it."""
    installed = bool(fast._stock)
    if request.param == 'stock':
        fast.uninstall()
    else:
        fast.install()
    yield request.param
    if installed:
        fast.install()
    else:
        fast.uninstall()


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


EVENT_CLASSES = {'object event': ObjectEvent,
                 'before traverse': BeforeTraverseEvent}


def event_arguments(event_class):
    return () if event_class is ObjectEvent else (None,)


@settings(max_examples=60, deadline=None)
@given(event_handlers=st.lists(st.sampled_from(EVENT_INTERFACES),
                               max_size=3),
       object_handlers=st.lists(st.tuples(st.sampled_from(OBJECT_INTERFACES),
                                          st.sampled_from(EVENT_INTERFACES)),
                                max_size=3),
       ob=st.sampled_from((Content, Other)),
       kind=st.sampled_from(sorted(EVENT_CLASSES)))
def test_an_object_event_calls_the_handlers_zope_event_calls(
        event_handlers, object_handlers, ob, kind):
    """The same handlers in the same order; the event made only when one
    of them hears it."""
    zope.testing.cleanup.cleanUp()
    try:
        standard_dispatch()
        calls = []
        register_handlers(calls, event_handlers, object_handlers)
        content = ob()
        event_class = EVENT_CLASSES[kind]
        zope.event.notify(event_class(content, *event_arguments(event_class)))
        expected = list(calls)
        calls[:] = []
        events.notify_object_event(event_class, content,
                                   *event_arguments(event_class))
        assert calls == expected
        handlers = fast.object_event_handlers(event_class, content)
        assert handlers is None or bool(handlers) == bool(expected)
    finally:
        zope.testing.cleanup.cleanUp()


def test_a_handler_registered_later_is_called(hooked):
    content = Content()
    calls = []
    events.notify_object_event(BeforeTraverseEvent, content, None)
    assert fast.object_event_handlers(BeforeTraverseEvent, content) == []
    provideHandler(recorder(calls, 'later'), (IContent, IBeforeTraverseEvent))
    events.notify_object_event(BeforeTraverseEvent, content, None)
    assert calls == [('later', 'Content', 'BeforeTraverseEvent')]


def test_a_handler_registered_later_in_a_local_site_is_called_there(hooked):
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    content = Content()
    calls = []
    with site(root):
        events.notify_object_event(BeforeTraverseEvent, content, None)
        root.getSiteManager().registerHandler(
            recorder(calls, 'local'), (IContent, IBeforeTraverseEvent))
        events.notify_object_event(BeforeTraverseEvent, content, None)
    events.notify_object_event(BeforeTraverseEvent, content, None)
    assert calls == [('local', 'Content', 'BeforeTraverseEvent')]


def test_an_event_nobody_subscribes_to_is_not_made(clean_zope):
    """Not even objectEventNotify: no handler at all."""
    setHooks()
    made = []

    class Recorded(BeforeTraverseEvent):
        def __init__(self, ob, request):
            made.append(ob)
            super().__init__(ob, request)

    events.notify_object_event(Recorded, Content(), None)
    assert made == []
    provideHandler(recorder([], 'any'), (IBeforeTraverseEvent,))
    events.notify_object_event(Recorded, Content(), None)
    assert len(made) == 1


def test_zope_event_is_called_when_anything_else_is_installed(hooked):
    content = Content()
    seen = []
    zope.event.subscribers.append(seen.append)
    try:
        events.notify_object_event(BeforeTraverseEvent, content, None)
    finally:
        zope.event.subscribers.remove(seen.append)
    assert [event.object for event in seen] == [content]
    from zope.component import getSiteManager
    getSiteManager.sethook(lambda context=None: object())
    try:
        assert fast.object_event_handlers(BeforeTraverseEvent,
                                            content) is None
    finally:
        getSiteManager.reset()
        setHooks()


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


class Adapter:
    def __init__(self, *objects):
        self.objects = objects


def nothing(*objects):
    return None


@pytest.fixture
def adapters(hooked):
    """Adapters for (IContent, Interface), one named, one declining, a
    more specific one for IOther, and a local one in a site."""
    from zope.component import provideAdapter
    provideAdapter(Adapter, (IContent, Interface), IPlainEvent)
    provideAdapter(Adapter, (IContent, Interface), IPlainEvent, name='named')
    provideAdapter(nothing, (IContent, Interface), IPlainEvent,
                   name='declines')

    class Specific(Adapter):
        pass

    provideAdapter(Specific, (IOther, Interface), IPlainEvent)
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))

    class Local(Adapter):
        pass

    root.getSiteManager().registerAdapter(Local, (IContent, Interface),
                                          IPlainEvent, 'local')
    return root


def described(adapter):
    if adapter is None:
        return None
    return type(adapter).__name__, adapter.objects


@pytest.mark.parametrize('make', [Content, Other], ids=['content', 'other'])
@pytest.mark.parametrize('proxied', [False, True], ids=['plain', 'proxied'])
@pytest.mark.parametrize('name', ['', 'named', 'declines', 'local',
                                  'absent'])
@pytest.mark.parametrize('in_site', [False, True], ids=['global', 'site'])
def test_a_multi_adapter_is_what_zope_component_finds(
        adapters, make, proxied, name, in_site):
    from zope.component import queryMultiAdapter
    from zope.security.checker import NamesChecker
    from zope.security.checker import ProxyFactory
    ob = make()
    if proxied:
        ob = ProxyFactory(ob, NamesChecker(()))
    request = object()
    with site(adapters if in_site else None):
        expected = queryMultiAdapter((ob, request), IPlainEvent, name)
        got = events.query_multi_adapter((ob, request), IPlainEvent, name)
    assert described(got) == described(expected)
    if got is not None:
        assert got.objects[0] is ob  # the adapter gets the proxy


@pytest.mark.parametrize('count', [1, 3])
def test_an_adapter_of_one_or_three_objects_is_what_zope_component_finds(
        hooked, count):
    from zope.component import provideAdapter
    from zope.component import queryMultiAdapter
    provideAdapter(Adapter, (IContent,) * count, IPlainEvent)
    objects = tuple(Content() for _ in range(count))
    got = events.query_multi_adapter(objects, IPlainEvent)
    assert got.objects == objects
    assert described(got) == described(
        queryMultiAdapter(objects, IPlainEvent))
    assert events.query_multi_adapter((Content(),) * (count + 1),
                                      IPlainEvent) is None


@pytest.mark.parametrize('check', ['subscription_registry',
                                   'lookup_registry'])
def test_only_zope_interfaces_own_methods_are_gone_around(hooked, check):
    """The registry is used directly only where the site manager's class
    and its registry have zope.interface's own methods: a site manager
    that is no ``Components``, a registry without the method, a method
    replaced on the class or on the registry (a plain function, or
    another bound method) leave it to them."""
    registry_of = getattr(fast, check)
    method = {'subscription_registry': 'subscribers',
              'lookup_registry': 'queryMultiAdapter'}[check]
    global_site_manager = getGlobalSiteManager()
    assert registry_of(global_site_manager) is global_site_manager.adapters

    class NoComponents:
        adapters = global_site_manager.adapters

    class Replaced(Components):
        pass

    setattr(Replaced, method, lambda self, *args: None)

    class NoMethod:
        pass

    without_method = Components('without')
    without_method.adapters = NoMethod()

    class OtherBound:
        def other(self, *args):
            return None

    assert registry_of(NoComponents()) is None
    assert registry_of(Replaced('replaced')) is None
    assert registry_of(without_method) is None
    adapters = global_site_manager.adapters
    original = getattr(adapters, method)
    try:
        setattr(adapters, method, OtherBound().other)
        assert registry_of(global_site_manager) is None
    finally:
        setattr(adapters, method, original)
    assert registry_of(global_site_manager) is adapters


def test_a_site_manager_with_its_own_lookup_is_asked_itself(adapters):
    asked = []

    class Recording(Components):
        def queryMultiAdapter(self, objects, interface, name='',
                              default=None):
            asked.append(objects)
            return super().queryMultiAdapter(objects, interface, name,
                                              default)

    registry = Recording('recording', (getGlobalSiteManager(),))
    from zope.component import getSiteManager
    getSiteManager.sethook(lambda context=None: registry)
    try:
        objects = (Content(), object())
        found = events.query_multi_adapter(objects, IPlainEvent)
    finally:
        getSiteManager.reset()
        setHooks()
    assert asked == [objects]
    assert described(found) == ('Adapter', objects)


def test_a_registry_whose_lookup_is_not_zope_interfaces_is_asked(adapters):
    registry = getGlobalSiteManager().adapters
    asked = []
    original = registry.queryMultiAdapter

    def queryMultiAdapter(objects, interface, name='', default=None):
        asked.append(objects)
        return original(objects, interface, name, default)

    registry.queryMultiAdapter = queryMultiAdapter
    try:
        objects = (Content(), object())
        found = events.query_multi_adapter(objects, IPlainEvent)
    finally:
        registry.queryMultiAdapter = original
    assert asked == [objects]
    assert described(found) == ('Adapter', objects)


class IMarker(Interface):
    pass


def marked_content():
    from zope.interface import directlyProvides
    ob = Content()
    directlyProvides(ob, IMarker)
    return ob


def test_a_proxied_objects_interfaces_are_what_its_proxy_answers(
        clean_zope):
    from zope.interface import providedBy
    from zope.security.checker import NamesChecker
    from zope.security.checker import ProxyFactory
    ob = marked_content()
    proxied = ProxyFactory(ob, NamesChecker(()))
    assert events.interfaces_of(proxied) is providedBy(proxied)
    assert list(events.interfaces_of(proxied)) == [IMarker, IContent]
    assert events.interfaces_of(ob) is providedBy(ob)


def test_a_checker_that_guards_providedBy_is_asked(clean_zope):
    """A checker naming a permission for ``__providedBy__`` checks it (here
    it fails: no interaction), and zope.interface falls back to the
    class's declaration, without the object's own marker."""
    from zope.interface import providedBy
    from zope.security.checker import Checker
    from zope.security.checker import ProxyFactory
    proxied = ProxyFactory(marked_content(),
                           Checker({'__providedBy__': 'zope.ManageContent'}))
    assert list(providedBy(proxied)) == [IContent]
    assert list(events.interfaces_of(proxied)) == [IContent]


def test_a_checker_that_makes_providedBy_public_is_read_inside(clean_zope):
    from zope.interface import providedBy
    from zope.security.checker import CheckerPublic
    from zope.security.checker import NamesChecker
    from zope.security.checker import ProxyFactory
    ob = marked_content()
    proxied = ProxyFactory(ob, NamesChecker(['__providedBy__'],
                                            CheckerPublic))
    assert events.interfaces_of(proxied) is providedBy(ob)


@pytest.mark.parametrize('checker_names', [
    None, {'__providedBy__': 'zope.ManageContent'}],
    ids=['default checker', 'guarding checker'])
@pytest.mark.parametrize('interface', [IMarker, IContent, IOther, Interface])
def test_provides_answers_as_the_interface_asks_the_proxy(
        clean_zope, checker_names, interface):
    from zope.security.checker import Checker
    from zope.security.checker import NamesChecker
    from zope.security.checker import ProxyFactory
    checker = (NamesChecker(()) if checker_names is None
               else Checker(checker_names))
    proxied = ProxyFactory(marked_content(), checker)
    assert events.provides(proxied, interface) == \
        interface.providedBy(proxied)


# -- query_adapter: interface(ob, None)

class Conforming:
    """Conforms with what it is given: an adapter, None, or a TypeError."""

    def __init__(self, answer):
        self.answer = answer

    def __conform__(self, interface):
        if self.answer == 'raises':
            raise TypeError('cannot conform')
        return self.answer


class Refusing:
    """Its ``__getattr__`` fails with another error than AttributeError."""

    def __getattr__(self, name):
        raise KeyError(name)


class Adapted:
    def __init__(self, context):
        self.context = context


@pytest.fixture
def single_adapters(hooked):
    from zope.component import provideAdapter
    provideAdapter(Adapted, (IContent,), IPlainEvent)
    provideAdapter(nothing, (IOther,), IMarker)


def outcome(call):
    try:
        found = call()
    except Exception as error:
        return type(error), error.args
    if isinstance(found, Adapted):
        return Adapted, found.context
    return found


@pytest.mark.parametrize('make', [
    Content,                      # adapted by a registered factory
    Other,                        # a declining factory (for IMarker)
    marked_content,               # provides IMarker itself
    lambda: Conforming('conformed'),
    lambda: Conforming(None),     # conforms with nothing: then adapted
    lambda: Conforming('raises'),  # zope.interface's _call_conform: None
    Refusing,                     # its error propagates
    object,
], ids=['adapted', 'declined', 'provides', 'conforms', 'conforms-none',
        'conform-raises', 'refusing', 'nothing'])
@pytest.mark.parametrize('interface', [IPlainEvent, IMarker])
@pytest.mark.parametrize('proxied', [False, True], ids=['plain', 'proxied'])
def test_an_adapter_is_what_the_interface_finds(
        single_adapters, make, interface, proxied):
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy
    ob = make()
    if proxied:
        ob = Proxy(ob, NamesChecker(['__conform__']))
    expected = outcome(lambda: interface(ob, None))
    assert outcome(lambda: events.query_adapter(ob, interface)) == expected


def test_an_interface_with_its_own_adapt_is_asked(hooked):
    from zope.interface import interfacemethod

    class ISelfAdapting(Interface):
        @interfacemethod
        def __adapt__(self, ob):
            return ('adapted by the interface', ob)

    ob = Content()
    assert events.query_adapter(ob, ISelfAdapting) == \
        ISelfAdapting(ob, None) == ('adapted by the interface', ob)


# -- query_adapter of a proxied object: the hook's own lookup, read inside

def lookup_failing(context):
    from zope.interface.interfaces import ComponentLookupError
    raise ComponentLookupError('no adapter after all')


class IFailing(Interface):
    pass


@implementer(IFailing)
class Failing:
    pass


@pytest.fixture
def site_adapters(single_adapters):
    """A local site that registers one more adapter, and a factory that
    fails with ComponentLookupError (the hook answers None for it)."""
    from zope.component import provideAdapter
    provideAdapter(lookup_failing, (IFailing,), IPlainEvent)
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    root.getSiteManager().registerAdapter(Adapted, (IOther,), IContent)
    return root


#: Objects adapted to an interface, globally and in the site: the ways
#: an adapter is found (or not) the lookups below must agree on.
site_cases = [
    pytest.mark.parametrize('make', [Content, Other, Failing, marked_content,
                                     object],
                            ids=['adapted', 'other', 'failing', 'provides',
                                 'nothing']),
    pytest.mark.parametrize('interface', [IPlainEvent, IMarker, IContent]),
    pytest.mark.parametrize('in_site', [False, True], ids=['global', 'site']),
]


def over_site_cases(test):
    for mark in reversed(site_cases):
        test = mark(test)
    return test


@over_site_cases
def test_a_proxied_objects_adapter_is_found_by_the_hooks_own_lookup(
        site_adapters, make, interface, in_site):
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy
    proxied = Proxy(make(), NamesChecker(()))
    with site(site_adapters if in_site else None):
        assert fast.hooked_lookup1(interface) is not None
        expected = outcome(lambda: interface(proxied, None))
        got = outcome(lambda: events.query_adapter(proxied, interface))
    assert got == expected
    if isinstance(got, tuple) and got[0] is Adapted:
        assert got[1] is proxied  # the factory gets the proxy


def test_another_adapter_hook_is_asked_for_a_proxied_object(single_adapters):
    from zope.interface.interface import adapter_hooks
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy

    def hook(interface, ob):
        return ('hooked', interface)

    adapter_hooks.insert(0, hook)
    try:
        assert fast.hooked_lookup1(IPlainEvent) is None
        proxied = Proxy(object(), NamesChecker(()))
        assert events.query_adapter(proxied, IPlainEvent) == \
            ('hooked', IPlainEvent)
    finally:
        adapter_hooks.remove(hook)


def test_a_replaced_site_hook_is_asked_for_a_proxied_object(single_adapters):
    """zope.component's hook calling another ``adapter_hook`` than a C
    lookup's (a Python function here) is called itself."""
    from zope.component.hooks import siteinfo
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy
    asked = []

    def adapter_hook(interface, ob, name='', default=None):
        asked.append(interface)
        return default

    siteinfo.adapter_hook = adapter_hook
    try:
        assert fast.hooked_lookup1(IPlainEvent) is None
        proxied = Proxy(Content(), NamesChecker(()))
        assert events.query_adapter(proxied, IPlainEvent) is None
    finally:
        del siteinfo.adapter_hook
    assert asked == [IPlainEvent]


def test_an_unhooked_component_lookup_is_asked_for_a_proxied_object(
        clean_zope):
    """Before ``setHooks`` zope.component's hook is its global one: the
    interface asks it itself."""
    from zope.component import provideAdapter
    from zope.component.hooks import resetHooks
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy
    resetHooks()
    provideAdapter(Adapted, (IContent,), IPlainEvent)
    assert fast.hooked_lookup1(IPlainEvent) is None
    proxied = Proxy(Content(), NamesChecker(()))
    assert outcome(lambda: events.query_adapter(proxied, IPlainEvent)) == \
        (Adapted, proxied)


def test_an_interface_with_its_own_adapt_is_asked_for_a_proxy(hooked):
    from zope.interface import interfacemethod
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy

    class ISelfAdapting(Interface):
        @interfacemethod
        def __adapt__(self, ob):
            return ('adapted by the interface', ob)

    proxied = Proxy(Content(), NamesChecker(()))
    assert fast.hooked_lookup1(ISelfAdapting) is None
    assert events.query_adapter(proxied, ISelfAdapting) == \
        ('adapted by the interface', proxied)


@pytest.mark.parametrize('hook', ['another method', 'a builtin function'])
def test_a_site_hook_that_is_no_lookups_adapter_hook_is_not_used(
        single_adapters, hook):
    """A C method that is not a lookup's ``adapter_hook`` (a lookup's
    ``queryAdapter``; ``len``, bound to the builtins module) is left to
    the interface to call."""
    from zope.component import getSiteManager
    from zope.component.hooks import siteinfo
    siteinfo.adapter_hook = (getSiteManager().adapters._v_lookup.queryAdapter
                             if hook == 'another method' else len)
    try:
        assert fast.hooked_lookup1(IPlainEvent) is None
    finally:
        del siteinfo.adapter_hook


# -- hooked_lookup1 remembers what the last site hook calls

def hook_lookup(lookup1):
    """The lookup a bound ``lookup1`` belongs to."""
    return lookup1.__self__


def test_the_remembered_lookup_follows_a_new_site(site_adapters):
    from zope.component import getGlobalSiteManager
    global_lookup = hook_lookup(fast.hooked_lookup1(IPlainEvent))
    assert global_lookup is getGlobalSiteManager().adapters._v_lookup
    with site(site_adapters):
        local_lookup = hook_lookup(fast.hooked_lookup1(IPlainEvent))
        assert local_lookup is \
            site_adapters.getSiteManager().adapters._v_lookup
        assert fast.hooked_lookup1(IPlainEvent)(
            events.interfaces_of(Other()), IContent, '') is Adapted
    assert hook_lookup(fast.hooked_lookup1(IPlainEvent)) is global_lookup
    assert fast.hooked_lookup1(IPlainEvent)(
        events.interfaces_of(Other()), IContent, '') is None


def test_the_remembered_lookup_follows_a_new_site_hook(single_adapters):
    """A hook set in its place (another lookup's, then one that is no
    lookup's) is the one answered for, then the site's own again."""
    from zope.component.hooks import siteinfo
    from zope.interface.adapter import AdapterRegistry
    assert fast.hooked_lookup1(IPlainEvent) is not None
    other = AdapterRegistry()
    other.register((IOther,), IPlainEvent, '', Adapted)
    siteinfo.adapter_hook = other.adapter_hook
    try:
        assert hook_lookup(fast.hooked_lookup1(IPlainEvent)) \
            is other._v_lookup
        siteinfo.adapter_hook = len
        assert fast.hooked_lookup1(IPlainEvent) is None
    finally:
        del siteinfo.adapter_hook
    lookup1 = fast.hooked_lookup1(IPlainEvent)
    assert hook_lookup(lookup1) is getGlobalSiteManager().adapters._v_lookup


@pytest.mark.parametrize('replaced', ['adapter hooks', 'component hook'])
def test_a_replaced_global_adapter_hook_is_seen_after_a_remembered_one(
        single_adapters, replaced):
    from zope.component._api import adapter_hook
    from zope.interface.interface import adapter_hooks
    assert fast.hooked_lookup1(IPlainEvent) is not None

    def hook(interface, ob, name='', default=None):
        return default

    if replaced == 'adapter hooks':
        adapter_hooks.insert(0, hook)
    else:
        adapter_hook.sethook(hook)
    try:
        assert fast.hooked_lookup1(IPlainEvent) is None
    finally:
        if replaced == 'adapter hooks':
            adapter_hooks.remove(hook)
        else:
            setHooks()
    assert fast.hooked_lookup1(IPlainEvent) is not None


def test_threads_with_different_sites_get_their_own_sites_lookup(
        site_adapters):
    """Two threads, one in the local site and one not, asking in turn:
    each gets its own site's lookup, whichever asked last."""
    import threading
    local_lookup = site_adapters.getSiteManager().adapters._v_lookup
    global_lookup = getGlobalSiteManager().adapters._v_lookup
    turns = [threading.Event() for _ in range(6)]
    found = {}

    def ask(in_site, mine):
        if in_site:
            setSite(site_adapters)
        try:
            for turn in mine:
                turns[turn].wait(5)
                found[turn] = hook_lookup(fast.hooked_lookup1(IPlainEvent))
                if turn + 1 < len(turns):
                    turns[turn + 1].set()
        finally:
            setSite(None)

    threads = [threading.Thread(target=ask, args=(True, (0, 2, 4))),
               threading.Thread(target=ask, args=(False, (1, 3, 5)))]
    for thread in threads:
        thread.start()
    turns[0].set()
    for thread in threads:
        thread.join(10)
    assert [found[turn] for turn in range(6)] == \
        [local_lookup, global_lookup] * 3


# -- adapter_factory: the factory interface(ob, None) would call

@over_site_cases
def test_an_adapter_factory_is_the_one_the_interface_calls(
        site_adapters, make, interface, in_site):
    """Called with the object, the factory found gives what the interface
    gives; an object providing the interface needs none (None)."""
    ob = make()
    with site(site_adapters if in_site else None):
        factory = fast.adapter_factory(ob, interface)
        expected = outcome(lambda: interface(ob, None))
        if factory is None:
            assert expected is None or expected is ob
        else:
            got = outcome(lambda: factory(ob))
            if factory is lookup_failing:  # the hook answers None for it
                assert (got[0].__name__, expected) == (
                    "ComponentLookupError", None)
            else:
                assert got == expected


def test_an_adapter_factory_is_not_told_for_a_proxy_or_a_conforming_object(
        single_adapters):
    from zope.security.checker import NamesChecker
    from zope.security.proxy import Proxy
    assert fast.adapter_factory(Content(), IPlainEvent) is Adapted
    assert fast.adapter_factory(
        Proxy(Content(), NamesChecker(())), IPlainEvent) is None
    assert fast.adapter_factory(Conforming(None), IPlainEvent) is None


def test_an_adapter_factory_is_not_told_through_another_hook(
        single_adapters):
    from zope.interface.interface import adapter_hooks

    def hook(interface, ob):
        return ('hooked', interface)

    adapter_hooks.insert(0, hook)
    try:
        assert fast.adapter_factory(Content(), IPlainEvent) is None
    finally:
        adapter_hooks.remove(hook)


def test_notify_event_makes_the_event_only_when_a_handler_may_hear_it(
        hooked):
    from zope.publisher.interfaces import EndRequestEvent
    from zope.publisher.interfaces import IEndRequestEvent
    made = []

    class Counted(EndRequestEvent):
        def __init__(self, ob, request):
            made.append(ob)
            super().__init__(ob, request)

    calls = []
    events.notify_event(Counted, 'published', None)
    assert made == [] and calls == []
    # a handler registered later, globally or in the current local site
    provideHandler(recorder(calls, 'global'), (IEndRequestEvent,))
    events.notify_event(Counted, 'published', None)
    assert made == ['published'] and calls == [('global', 'Counted')]
    getGlobalSiteManager().unregisterHandler(required=(IEndRequestEvent,))
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    with site(root):
        root.getSiteManager().registerHandler(recorder(calls, 'local'),
                                              (IEndRequestEvent,))
        events.notify_event(Counted, 'at site', None)
    events.notify_event(Counted, 'at root', None)
    assert calls[1:] == [('local', 'Counted')]
    assert made == ['published', 'at site']


def test_notify_event_calls_zope_event_when_anything_else_is_installed(
        hooked):
    from zope.publisher.interfaces import EndRequestEvent
    seen = []
    zope.event.subscribers.append(seen.append)
    try:
        events.notify_event(EndRequestEvent, 'published', None)
    finally:
        zope.event.subscribers.remove(seen.append)
    assert [event.object for event in seen] == ['published']
    from zope.component import getSiteManager

    class Registry(Components):
        def subscribers(self, objects, provided):
            seen.append('asked')

    registry = Registry()
    getSiteManager.sethook(lambda context=None: registry)
    try:
        events.notify_event(EndRequestEvent, 'published', None)
    finally:
        getSiteManager.reset()
        setHooks()
    assert seen[-1] == 'asked'


# -- notify_object_event: the event made only when a handler hears it


@pytest.fixture
def unheard(hooked):
    """Whether ``notify_object_event`` makes no event for an object."""
    def unheard(event_class, ob):
        made = []

        class Made(event_class):
            def __init__(self, *args):
                made.append(args)
                super().__init__(*args)

        events.notify_object_event(Made, ob, None)
        return not made
    return unheard


def test_a_handler_registered_globally_later_is_heard(unheard):
    content = Content()
    assert unheard(BeforeTraverseEvent, content)
    provideHandler(recorder([], 'later'), (IContent, IBeforeTraverseEvent))
    assert not unheard(BeforeTraverseEvent, content)


def test_a_handler_registered_later_in_a_local_site_is_heard_there(unheard):
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    content = Content()
    with site(root):
        assert unheard(BeforeTraverseEvent, content)
        root.getSiteManager().registerHandler(
            recorder([], 'local'), (IContent, IBeforeTraverseEvent))
        assert not unheard(BeforeTraverseEvent, content)
    assert unheard(BeforeTraverseEvent, content)


def test_a_handler_registered_later_in_a_sites_base_is_heard(unheard):
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    content = Content()
    with site(root):
        assert unheard(BeforeTraverseEvent, content)
        provideHandler(recorder([], 'global'),
                       (IContent, IBeforeTraverseEvent))
        assert not unheard(BeforeTraverseEvent, content)


def test_an_event_handler_other_than_object_dispatch_is_heard(unheard):
    content = Content()
    assert unheard(BeforeTraverseEvent, content)
    provideHandler(recorder([], 'any'), (IBeforeTraverseEvent,))
    assert not unheard(BeforeTraverseEvent, content)


def test_an_interface_declared_later_for_the_class_is_heard(unheard):
    class IMarked(Interface):
        pass

    class Marked:
        pass

    provideHandler(recorder([], 'marked'), (IMarked, IBeforeTraverseEvent))
    assert unheard(BeforeTraverseEvent, Marked())
    classImplements(Marked, IMarked)  # same declaration, new order
    assert not unheard(BeforeTraverseEvent, Marked())


def test_an_interface_an_instance_provides_is_heard(unheard):
    class IMarked(Interface):
        pass

    provideHandler(recorder([], 'marked'), (IMarked, IBeforeTraverseEvent))
    content = Content()
    assert unheard(BeforeTraverseEvent, content)
    alsoProvides(content, IMarked)
    assert not unheard(BeforeTraverseEvent, content)


def test_an_interface_given_to_the_event_class_later_is_heard(unheard):
    class IMarkedEvent(Interface):
        pass

    class MarkedEvent(BeforeTraverseEvent):
        pass

    provideHandler(recorder([], 'marked'), (IContent, IMarkedEvent))
    assert unheard(MarkedEvent, Content())
    classImplements(MarkedEvent, IMarkedEvent)
    assert not unheard(MarkedEvent, Content())


def test_a_registration_undone_by_an_abort_is_heard_again(unheard):
    """A persistent registry loaded again repeats the generation the
    aborted change had reached: its new lookup tells them apart."""
    handler = stored_handler
    db = DB(None)
    connection = db.open()
    try:
        registry = PersistentComponents(bases=(getGlobalSiteManager(),))
        registry.registerHandler(handler, (IContent, IBeforeTraverseEvent))
        connection.root()['registry'] = registry
        transaction.commit()
        with site_manager(registry):
            assert not unheard(BeforeTraverseEvent, Content())
            registry.unregisterHandler(handler,
                                       (IContent, IBeforeTraverseEvent))
            assert unheard(BeforeTraverseEvent, Content())
            remembered = registry.adapters._generation
            transaction.abort()
            assert registry.adapters._generation == remembered
            assert not unheard(BeforeTraverseEvent, Content())
    finally:
        transaction.abort()
        connection.close()
        db.close()


def test_a_ghost_registry_is_loaded_again_not_trusted(unheard):
    db = DB(None)
    connection = db.open()
    try:
        registry = PersistentComponents(bases=(getGlobalSiteManager(),))
        connection.root()['registry'] = registry
        transaction.commit()
        with site_manager(registry):
            assert unheard(BeforeTraverseEvent, Content())
            registry.adapters._p_deactivate()
            assert registry.adapters._p_changed is None  # a ghost
            assert unheard(BeforeTraverseEvent, Content())
            assert registry.adapters._p_changed is False  # loaded
    finally:
        transaction.abort()
        connection.close()
        db.close()


def stored_handler(ob, event):
    """A handler a ZODB can store (by its name)."""


@contextlib.contextmanager
def site_manager(registry):
    """The current site manager is ``registry`` within the block."""
    getSiteManager.sethook(lambda context=None: registry)
    try:
        yield
    finally:
        getSiteManager.reset()
        setHooks()


# -- the seam: install rebinds components' functions, uninstall restores

def test_uninstalling_puts_the_stock_functions_back():
    fast.uninstall()
    stock = {name: getattr(events, name) for name in fast.REPLACED}
    assert all(function.__module__ == events.__name__
               for function in stock.values())
    fast.install()
    for name in fast.REPLACED:
        assert getattr(events, name) is getattr(fast, name)
    fast.install()  # installed once: the stock functions are kept
    fast.uninstall()
    assert {name: getattr(events, name) for name in fast.REPLACED} == stock
    fast.uninstall()
    assert {name: getattr(events, name) for name in fast.REPLACED} == stock


def test_the_stock_functions_leave_the_answer_to_zope_component(
        single_adapters, seam):
    """Without the speedups, what the callers would like to know in fewer
    steps is not known: they ask zope.component (with them, ``fast``
    tells, tested above)."""
    ob = Content()
    if seam == 'speedups':
        assert events.adapter_factory(ob, IPlainEvent) is Adapted
        assert events.has_no_factory(ob, (IMarker,))
        return
    assert events.lookup_registry(getGlobalSiteManager()) is None
    assert events.hooked_lookup1(IPlainEvent) is None
    assert events.hooked_factory(ob, IPlainEvent) is events.UNKNOWN
    assert events.adapter_factory(ob, IPlainEvent) is None
    assert not events.has_no_factory(ob, (IMarker,))


def test_an_event_is_heard_as_zope_event_would_dispatch_it(hooked):
    from zope.interface import implementedBy
    from zope.interface import providedBy
    event_spec = implementedBy(BeforeTraverseEvent)
    content = providedBy(Content())
    assert not events.heard(event_spec, content)
    assert events.heard(event_spec)  # objectEventNotify hears it
    provideHandler(recorder([], 'content'), (IContent, IBeforeTraverseEvent))
    assert events.heard(event_spec, content)
    assert not events.heard(implementedBy(PlainEvent))
    saved = zope.event.subscribers[:]
    try:
        zope.event.subscribers[:] = []
        assert not events.heard(event_spec, content)
        zope.event.subscribers[:] = saved + [print]
        assert events.heard(implementedBy(PlainEvent))
    finally:
        zope.event.subscribers[:] = saved

    class Own(Components):
        def subscribers(self, objects, provided):
            return []

    with site_manager(Own()):
        assert events.heard(implementedBy(PlainEvent))
