"""zope.pipeline._speedups.zope_container: the stock traversers' steps
(zope.container's, our ``ViewTraverser``'s, zope.traversing's ``@@``)
answered without making them, only where the registered factory is the
stock one (tests/unit/test_traversal.py compares traversal with
zope.app.publication's both ways: ``traversal_steps``)."""

import pytest
from zope.component import getGlobalSiteManager
from zope.container.interfaces import ISimpleReadContainer
from zope.container.traversal import ContainerTraverser
from zope.container.traversal import ItemTraverser
from zope.interface import providedBy
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserPublisher
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.security.proxy import removeSecurityProxy
from zope.traversing.interfaces import ITraversable
from zope.traversing.namespace import view as ViewNamespace

from zope.pipeline._speedups import zope_container
from zope.pipeline.publishing.traversers import Traversal
from zope.pipeline.publishing.traversers import ViewTraverser

from .test_traversal import Other
from .test_traversal import container_speedups  # noqa: F401 - a fixture
from .test_traversal import make_request
from .test_traversal import register
from .test_traversal import root  # noqa: F401 - a fixture
from .test_traversal import stock_container  # noqa: F401 - a fixture


class Noting(Traversal):
    """The traversal policy, noting the traversers it was told an inline
    step stood in for, and those it made."""

    __slots__ = ('stood_in_for', 'made')

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.stood_in_for = []
        self.made = []

    def stands_in_for(self, factory):
        self.stood_in_for.append(factory)

    def publish_traverser(self, request, ob):
        traverser = super().publish_traverser(request, ob)
        self.made.append(type(traverser))
        return traverser

    def namespace_traverser(self, request, ob, namespace):
        traverser = super().namespace_traverser(request, ob, namespace)
        self.made.append(type(traverser))
        return traverser


def traverse(root, path, method='GET'):
    """The noting policy and what ``request.traverse`` gave it for
    ``path`` of ``root`` (or the error it raised)."""
    request = make_request(path, method)
    policy = Noting([], {}, 'context')
    request.setPublication(policy)
    try:
        found = request.traverse(root)
    except Exception as error:
        found = error
    return policy, found


# -- installing

def test_install_puts_the_steps_in_place_and_uninstall_takes_them_away(
        stock_container):
    stock = {name: vars(Traversal)[name] for _, name, _ in
             zope_container.swaps()}
    assert stock['publish'] is zope_container.STOCK_PUBLISH
    zope_container.install()
    zope_container.install()
    for owner, name, value in zope_container.swaps():
        assert vars(owner)[name] is value
    zope_container.uninstall()
    zope_container.uninstall()
    assert {name: vars(Traversal)[name] for name in stock} == stock


def test_the_seam_installs_this_module():
    from zope.pipeline import _speedups
    assert zope_container in _speedups.modules()


# -- the inline steps

@pytest.mark.parametrize('cls', [ItemTraverser, ContainerTraverser,
                                 ViewTraverser])
def test_a_stock_traverser_is_stood_in_for_not_made(
        root, container_speedups, cls):
    register(cls, (ISimpleReadContainer, IBrowserRequest), IBrowserPublisher)
    policy, found = traverse(root, '/other.html', 'PUT')
    assert policy.stood_in_for == [cls]
    assert policy.made == []
    assert type(removeSecurityProxy(found)) is Other
    assert removeSecurityProxy(found).context is root


def test_a_permission_wrapped_stock_traverser_is_stood_in_for(
        root, container_speedups):
    registered = getGlobalSiteManager().adapters.lookup(
        (providedBy(root), IBrowserRequest), IBrowserPublisher)
    assert registered is not ItemTraverser  # the root fixture's wrapper
    assert registered.factory is ItemTraverser
    policy, found = traverse(root, '/a/b', 'PUT')
    assert policy.stood_in_for == [ItemTraverser, ItemTraverser]
    assert removeSecurityProxy(found) is root['a']['b']


def test_a_sites_own_traverser_is_made_and_asked(root, container_speedups):

    class OwnItems(ItemTraverser):
        def publishTraverse(self, request, name):
            return 'own:' + name
    register(OwnItems, (ISimpleReadContainer, IBrowserRequest),
             IBrowserPublisher)
    policy, found = traverse(root, '/a', 'PUT')
    assert found == 'own:a'
    assert policy.stood_in_for == []
    assert policy.made == [OwnItems]


def test_the_view_namespace_is_stood_in_for_not_made(
        root, container_speedups):
    policy, found = traverse(root, '/a/@@other.html', 'PUT')
    assert policy.stood_in_for == [ItemTraverser, ViewNamespace]
    assert policy.made == []
    assert removeSecurityProxy(removeSecurityProxy(found).context) is \
        root['a']
    policy, found = traverse(root, '/a/@@missing.html', 'PUT')
    assert isinstance(found, NotFound)
    assert policy.stood_in_for == [ItemTraverser, ViewNamespace]


def test_another_namespace_is_made_as_stock(root, container_speedups):
    policy, found = traverse(root, '/a/++view++other.html', 'PUT')
    assert policy.stood_in_for == [ItemTraverser, ViewNamespace]
    policy, found = traverse(root, '/a/++etc++missing', 'PUT')
    assert isinstance(found, NotFound)
    assert policy.made == [type(None)]


def test_a_view_namespace_of_a_site_is_made(root, container_speedups):

    class Shouting(ViewNamespace):
        def traverse(self, name, ignored):
            return name.upper()
    register(Shouting, (ISimpleReadContainer, IBrowserRequest),
             ITraversable, 'view')
    policy, found = traverse(root, '/a/@@other.html', 'PUT')
    assert found == 'OTHER.HTML'
    assert policy.made == [Shouting]


def test_without_the_module_every_traverser_is_made(root, stock_container):
    policy, found = traverse(root, '/a/@@other.html', 'PUT')
    assert policy.stood_in_for == []
    assert policy.made == [ItemTraverser, ViewNamespace]
    assert removeSecurityProxy(removeSecurityProxy(found).context) is \
        root['a']
