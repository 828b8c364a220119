"""The traversal hooks of site_events and authenticate, in turn, do what
they would do if site_events sent every BeforeTraverseEvent through
zope.event (it makes the event only when a handler hears it,
``components.notify_object_event``): every scenario runs both ways and
compares, with zope.pipeline._speedups' zope_component installed and
without.  Nothing is remembered: handlers, sites, interfaces and
utilities added later are seen."""

import pytest
import zope.event
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.component import getGlobalSiteManager
from zope.component.event import objectEventNotify
from zope.component.hooks import getSite
from zope.component.hooks import resetHooks
from zope.component.hooks import setHooks
from zope.component.hooks import setSite
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import implementer
from zope.interface import noLongerProvides
from zope.location.interfaces import ISite
from zope.publisher.browser import TestRequest as BrowserRequest
from zope.security.checker import NamesChecker
from zope.security.checker import ProxyFactory
from zope.site.folder import Folder
from zope.site.folder import rootFolder
from zope.site.site import LocalSiteManager
from zope.site.site import threadSiteSubscriber
from zope.traversing.interfaces import BeforeTraverseEvent
from zope.traversing.interfaces import IBeforeTraverseEvent

from zope.pipeline._speedups import zope_component
from zope.pipeline.stages.authenticate import authenticate_at_site
from zope.pipeline.stages.site_events import before_traverse


class IThing(Interface):
    pass


@implementer(IThing)
class Thing:
    pass


@implementer(IUnauthenticatedPrincipal)
class Anonymous:
    id = 'anonymous'


class Principal:
    def __init__(self, id):
        self.id = id


class Authentication:
    """A local authentication utility that knows one principal."""

    def __init__(self, principal=None):
        self.principal = principal
        self.asked = 0
        self.anonymous = Anonymous()

    def authenticate(self, request):
        self.asked += 1
        return self.principal

    def unauthenticatedPrincipal(self):
        return self.anonymous


@pytest.fixture(params=['stock', 'speedups'])
def registry(request, clean_zope):
    installed = bool(zope_component._stock)
    if request.param == 'stock':
        zope_component.uninstall()
    else:
        zope_component.install()
    setHooks()
    gsm = getGlobalSiteManager()
    gsm.registerHandler(objectEventNotify)
    yield gsm
    setSite(None)
    if installed:
        zope_component.install()
    else:
        zope_component.uninstall()


heard = []
#: The request of the hooks running now.
current = []


def record(ob, event):
    heard.append((ob, type(event).__name__, event.object,
                  event.request is current[-1]))


def notify_always(request, ob):
    """``before_traverse`` without its check: the event always sent."""
    zope.event.notify(BeforeTraverseEvent(ob, request))


def run_both(request_factory, ob, prepare=lambda: None):
    """What the hooks do for ``ob`` with the event always sent, then as
    they are: the events heard, the site entered, the request's
    principal."""
    outcomes = []
    for hooks in ([notify_always, authenticate_at_site],
                  [before_traverse, authenticate_at_site]):
        setSite(None)
        prepare()
        del heard[:], current[:]
        request = request_factory()
        current.append(request)
        for hook in hooks:
            hook(request, ob)
        outcomes.append((list(heard), getSite(), request.principal))
    assert outcomes[0] == outcomes[1]
    return outcomes[1]


ANONYMOUS = Anonymous()


def anonymous_request():
    request = BrowserRequest()
    request.setPrincipal(ANONYMOUS)
    return request


def site_with_manager():
    site = rootFolder()
    site.setSiteManager(LocalSiteManager(site))
    return site


def test_hooks_sends_the_event_to_a_handler_registered_later(registry):
    thing = Thing()
    assert run_both(BrowserRequest, thing)[0] == []
    registry.registerHandler(record, (IThing, IBeforeTraverseEvent))
    events = run_both(BrowserRequest, thing)[0]
    assert events == [(thing, 'BeforeTraverseEvent', thing, True)]


def test_hooks_makes_no_event_when_no_handler_hears_it(registry):
    registry.unregisterHandler(objectEventNotify)
    registry.registerHandler(record, (IThing, IBeforeTraverseEvent))
    assert run_both(BrowserRequest, Thing())[0] == []
    registry.registerHandler(objectEventNotify)
    assert len(run_both(BrowserRequest, Thing())[0]) == 1


def test_hooks_sends_the_event_to_an_interface_given_to_an_instance(
        registry):
    class IMarked(Interface):
        pass

    registry.registerHandler(record, (IMarked, IBeforeTraverseEvent))
    ob = Folder()
    assert run_both(BrowserRequest, ob)[0] == []
    alsoProvides(ob, IMarked)
    assert len(run_both(BrowserRequest, ob)[0]) == 1
    noLongerProvides(ob, IMarked)
    assert run_both(BrowserRequest, ob)[0] == []


def test_hooks_reads_the_interfaces_of_a_proxied_object(registry):
    registry.registerHandler(record, (IThing, IBeforeTraverseEvent))
    proxied = ProxyFactory(Thing(), NamesChecker(()))
    events = run_both(BrowserRequest, proxied)[0]
    assert len(events) == 1 and events[0][0] is proxied


def test_hooks_sends_the_event_to_a_handler_of_the_event_alone(
        registry):
    def handler(event):
        heard.append((event.object, 'alone', event.object,
                      event.request is current[-1]))

    registry.registerHandler(handler, (IBeforeTraverseEvent,))
    thing = Thing()
    events = run_both(BrowserRequest, thing)[0]
    assert events == [(thing, 'alone', thing, True)]


def test_hooks_sends_the_event_through_zope_event_when_it_has_another_subscriber(  # noqa: E501
        registry):
    def subscriber(event):
        if IBeforeTraverseEvent.providedBy(event):
            heard.append((event.object, 'zope.event', None, None))

    zope.event.subscribers.append(subscriber)
    try:
        thing = Thing()
        assert run_both(BrowserRequest, thing)[0] == [
            (thing, 'zope.event', None, None)]
    finally:
        zope.event.subscribers.remove(subscriber)


def test_hooks_without_zope_components_site_hook(registry):
    registry.registerHandler(record, (IThing, IBeforeTraverseEvent))
    resetHooks()
    try:
        assert len(run_both(BrowserRequest, Thing())[0]) == 1
        site = site_with_manager()
        site.getSiteManager().registerUtility(Authentication(),
                                              IAuthentication)
        # without the hook the global registry answers: no local utility
        assert isinstance(run_both(anonymous_request, site)[2], Anonymous)
    finally:
        setHooks()


def test_hooks_enters_a_local_site_and_hears_its_handlers(registry):
    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    site = site_with_manager()
    assert run_both(BrowserRequest, site)[1] is site
    # a handler registered in the local site is heard once it is current
    site.getSiteManager().registerHandler(record,
                                          (IThing, IBeforeTraverseEvent))
    thing = Thing()
    assert run_both(BrowserRequest, thing)[0] == []
    events = run_both(BrowserRequest, thing, prepare=lambda: setSite(site))[0]
    assert len(events) == 1


def test_hooks_enters_an_instance_that_provides_isite_itself(registry):
    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    site = site_with_manager()
    noLongerProvides(site, ISite)
    assert not ISite.providedBy(site)
    assert run_both(BrowserRequest, site)[1] is None
    alsoProvides(site, ISite)
    assert run_both(BrowserRequest, site)[1] is site


def test_hooks_authenticates_at_a_site_with_its_own_utility(registry):
    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    site = site_with_manager()
    alice = Principal('alice')
    # no utility of its own yet: the principal is kept
    assert isinstance(run_both(anonymous_request, site)[2], Anonymous)
    auth = Authentication(alice)
    site.getSiteManager().registerUtility(auth, IAuthentication)
    assert run_both(anonymous_request, site)[2] is alice
    assert auth.asked == 2
    # an authenticated principal is not asked about again
    bob = Principal('bob')

    def bob_request():
        request = BrowserRequest()
        request.setPrincipal(bob)
        return request

    assert run_both(bob_request, site)[2] is bob
    # not a site: not asked
    assert isinstance(run_both(anonymous_request, Thing(),
                               prepare=lambda: setSite(site))[2], Anonymous)
    assert auth.asked == 2
    # the site's own unauthenticated principal when it knows nobody
    auth.principal = None
    assert run_both(anonymous_request, site)[2] is auth.anonymous
    # unregistered: the principal is kept again
    site.getSiteManager().unregisterUtility(auth, IAuthentication)
    assert isinstance(run_both(anonymous_request, site)[2], Anonymous)


def test_hooks_leaves_a_site_using_the_global_utility_alone(registry):
    global_auth = Authentication(Principal('global'))
    registry.registerUtility(global_auth, IAuthentication)
    site = site_with_manager()
    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    assert isinstance(run_both(anonymous_request, site)[2], Anonymous)
    # a site whose site manager is the global one
    setSite(None)
    other = rootFolder()
    other.getSiteManager = lambda: registry
    alsoProvides(other, ISite)
    assert isinstance(run_both(anonymous_request, other)[2], Anonymous)
    assert global_auth.asked == 0


def test_hooks_asks_a_site_manager_whose_query_utility_is_its_own(
        registry):
    alice = Principal('alice')

    class Manager(LocalSiteManager):
        def queryUtility(self, provided, name='', default=None):
            if provided is IAuthentication:
                return Authentication(alice)
            return super().queryUtility(provided, name, default)

    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    site = rootFolder()
    site.setSiteManager(Manager(site))
    assert run_both(anonymous_request, site)[2] is alice


def test_hooks_reads_a_principal_property_a_request_class_replaces(
        registry):
    anonymous = Anonymous()

    class Request(BrowserRequest):
        principal = property(lambda self: anonymous)

    site = site_with_manager()
    site.getSiteManager().registerUtility(Authentication(Principal('a')),
                                          IAuthentication)
    registry.registerHandler(threadSiteSubscriber,
                             (ISite, IBeforeTraverseEvent))
    request = Request()
    request.setPrincipal(Principal('set'))  # the property ignores it
    before_traverse(request, site)
    authenticate_at_site(request, site)
    assert request._principal.id == 'a'  # authenticated: it was anonymous
