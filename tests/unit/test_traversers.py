"""zope.pipeline.publishing.traversers.namespace_lookup answers as
zope.traversing's
namespaceLookup: the same traverser, the same view, the same
LocationError."""

import pytest
from zope.component import provideAdapter
from zope.component.hooks import setHooks
from zope.interface import Interface
from zope.interface import implementer
from zope.location.interfaces import LocationError
from zope.publisher.browser import TestRequest as StockTestRequest
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.security.checker import NamesChecker
from zope.security.checker import defineChecker
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import ITraversable
from zope.traversing.namespace import namespaceLookup
from zope.traversing.namespace import resource
from zope.traversing.namespace import view

from zope.pipeline.publishing.traversers import namespace_lookup


class IContent(Interface):
    pass


@implementer(IContent)
class Content:
    pass


class Page:
    def __init__(self, context, request):
        self.context = context
        self.request = request


class Shouting:
    """A namespace traverser of its own."""

    def __init__(self, context, request):
        self.context = context

    def traverse(self, name, furtherPath):
        return name.upper()


@pytest.fixture
def registry(clean_zope):
    setHooks()
    provideAdapter(view, (Interface, IBrowserRequest), ITraversable,
                   name='view')
    provideAdapter(resource, (Interface, IBrowserRequest), ITraversable,
                   name='resource')
    provideAdapter(Shouting, (Interface, IBrowserRequest), ITraversable,
                   name='shout')
    provideAdapter(Page, (IContent, IBrowserRequest), Interface,
                   name='page.html')
    defineChecker(Content, NamesChecker(()))


def outcome(lookup, namespace, name, ob, request):
    try:
        found = lookup(namespace, name, ob, request)
    except LocationError as error:
        return 'LocationError', error.args
    if isinstance(found, Page):
        return type(found), found.context, found.request
    return found


@pytest.mark.parametrize('namespace,name', [
    ('view', 'page.html'),     # zope.traversing's @@ traverser: the view
    ('view', 'absent.html'),   # no such view
    ('resource', 'page.html'),  # a subclass of view traverses its own way
    ('shout', 'name'),         # another namespace's traverser
    ('nowhere', 'name'),       # no such namespace
])
@pytest.mark.parametrize('proxied', [False, True])
def test_a_namespace_is_looked_up_as_zope_traversing_looks_it_up(
        registry, namespace, name, proxied):
    ob = Content()
    if proxied:
        ob = Proxy(ob, NamesChecker(()))
    request = StockTestRequest()
    expected = outcome(namespaceLookup, namespace, name, ob, request)
    assert outcome(namespace_lookup, namespace, name, ob, request) == \
        expected


def test_the_view_receives_the_proxied_object_as_its_context(registry):
    ob = Proxy(Content(), NamesChecker(()))
    found = namespace_lookup('view', 'page.html', ob, StockTestRequest())
    assert type(found.context) is Proxy
    assert removeSecurityProxy(found.context) is removeSecurityProxy(ob)
