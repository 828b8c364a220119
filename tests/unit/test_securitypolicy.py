"""zope.pipeline's security policy answers as zope.securitypolicy's does:
zope.securitypolicy's own test suite passes with it in place of the stock
class, and on random trees of objects with random local grants both
policies decide the same for every object, principal and permission."""

import unittest

import pytest
import transaction
import transaction.interfaces
import ZODB.config
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from persistent import Persistent
from ZODB.DB import DB
from ZODB.MappingStorage import MappingStorage
from zope.annotation.attribute import AttributeAnnotations
from zope.annotation.interfaces import IAttributeAnnotatable
from zope.authentication.interfaces import IAuthentication
from zope.component import provideAdapter
from zope.component import provideUtility
from zope.component.hooks import resetHooks
from zope.component.hooks import setHooks
from zope.interface import classImplements
from zope.interface import implementer
from zope.security.management import endInteraction
from zope.security.management import newInteraction
from zope.security.management import queryInteraction
from zope.security.management import setSecurityPolicy
from zope.security.management import system_user
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import Allow
from zope.securitypolicy.interfaces import IPrincipalPermissionManager
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleManager
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRole
from zope.securitypolicy.interfaces import IRolePermissionManager
from zope.securitypolicy.principalpermission import (
    AnnotationPrincipalPermissionManager,
)
from zope.securitypolicy.principalpermission import principalPermissionManager
from zope.securitypolicy.principalrole import AnnotationPrincipalRoleManager
from zope.securitypolicy.principalrole import principalRoleManager
from zope.securitypolicy.role import Role
from zope.securitypolicy.rolepermission import AnnotationRolePermissionManager
from zope.securitypolicy.rolepermission import rolePermissionManager
from zope.securitypolicy.tests import test_zopepolicy

from zope.pipeline.security import policy as securitypolicy
from zope.pipeline.security.policy import ROOTED
from zope.pipeline.security.policy import PerRequestSecurityPolicy
from zope.pipeline.security.policy import ZopeSecurityPolicy
from zope.pipeline.security.policy import _shared
from zope.pipeline.security.policy import clear_shared_grants
from zope.pipeline.security.policy import global_decisions
from zope.pipeline.security.policy import grants_nothing
from zope.pipeline.security.policy import has_no_local_maps
from zope.pipeline.security.policy import shared_grants
from zope.pipeline.security.policy import snapshot_of
from zope.pipeline.security.policy import watch_global_maps

PRINCIPALS = ('alice', 'bob', 'group.staff', 'group.all')
PERMISSIONS = ('perm.view', 'perm.edit')
ROLES = ('role.reader', 'role.editor')
SETTINGS = ('allow', 'deny', 'unset')


def test_zope_securitypolicy_suite_passes_with_our_policy(monkeypatch):
    import zope.configuration.xmlconfig  # noqa: F401 - the suite needs it
    made = []

    class CountedPolicy(ZopeSecurityPolicy):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self)

    monkeypatch.setattr(zopepolicy, 'ZopeSecurityPolicy', CountedPolicy)
    suite = test_zopepolicy.test_suite()
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    assert result.testsRun >= 8
    assert result.wasSuccessful(), result.failures + result.errors
    assert len(made) >= 5  # the doctest and the unit tests used ours


@implementer(IAttributeAnnotatable)
class Annotatable:
    """An object that may hold local grants (in its annotations)."""

    def __init__(self, parent):
        self.__parent__ = parent


class Plain:
    """An object that cannot hold local grants (not annotatable)."""

    def __init__(self, parent):
        self.__parent__ = parent


class Principal:

    def __init__(self, id, groups=()):
        self.id = id
        self.groups = groups


class Participation:
    interaction = None

    def __init__(self, principal):
        self.principal = principal


class Authentication:
    """Groups are principals too: group.staff is in group.all."""

    def getPrincipal(self, id):
        return Principal(id, ('group.all',) if id == 'group.staff' else ())


@pytest.fixture
def grant_adapters(clean_zope):
    # zope.component's site hooks, as its configuration sets them (the
    # policy asks the site's adapter lookup directly then)
    setHooks()
    provideAdapter(AttributeAnnotations)
    provideAdapter(AnnotationPrincipalPermissionManager,
                   (IAttributeAnnotatable,), IPrincipalPermissionManager)
    provideAdapter(AnnotationPrincipalRoleManager,
                   (IAttributeAnnotatable,), IPrincipalRoleManager)
    provideAdapter(AnnotationRolePermissionManager,
                   (IAttributeAnnotatable,), IRolePermissionManager)
    provideUtility(Authentication(), IAuthentication)
    for role in ROLES:
        provideUtility(Role(role, role), IRole, role)
    yield
    endInteraction()
    resetHooks()


def apply_setting(setting, allow, deny, unset, *args):
    {'allow': allow, 'deny': deny, 'unset': unset}[setting](*args)


def grant(target, kind, first, second, setting):
    """One grant on an object (or the global managers when ``target`` is
    None): principal-permission, role-permission or principal-role."""
    if kind == 'prinper':
        manager = (principalPermissionManager if target is None
                   else IPrincipalPermissionManager(target))
        apply_setting(setting, manager.grantPermissionToPrincipal,
                      manager.denyPermissionToPrincipal,
                      manager.unsetPermissionForPrincipal, second, first)
    elif kind == 'roleper':
        manager = (rolePermissionManager if target is None
                   else IRolePermissionManager(target))
        apply_setting(setting, manager.grantPermissionToRole,
                      manager.denyPermissionToRole,
                      manager.unsetPermissionFromRole, second, first)
    else:
        manager = (principalRoleManager if target is None
                   else IPrincipalRoleManager(target))
        apply_setting(setting, manager.assignRoleToPrincipal,
                      manager.removeRoleFromPrincipal,
                      manager.unsetRoleForPrincipal, second, first)


def build_tree(shape):
    """Objects from (parent index, annotatable?) pairs: index 0 is the
    root; each object's parent comes before it."""
    objects = []
    for parent_index, annotatable in shape:
        parent = objects[parent_index % len(objects)] if objects else None
        objects.append((Annotatable if annotatable else Plain)(parent))
    return objects


def decide_with(policy, objects, principal):
    """Every decision on ``objects``, in one interaction of ``policy``."""
    setSecurityPolicy(policy)
    newInteraction(Participation(principal))
    try:
        return [interaction_check(permission, ob)
                for ob in objects for permission in PERMISSIONS]
    finally:
        endInteraction()


tree_shapes = st.lists(st.tuples(st.integers(0, 20), st.booleans()),
                       min_size=1, max_size=8)
grant_lists = st.lists(st.tuples(
    st.integers(-1, 7),
    st.sampled_from(['prinper', 'roleper', 'prinrole']),
    st.sampled_from(PRINCIPALS + ROLES), st.sampled_from(PERMISSIONS
                                                         + ROLES),
    st.sampled_from(SETTINGS)), max_size=8)


def valid_grant(kind, first, second):
    if kind == 'prinper':
        return first in PRINCIPALS and second in PERMISSIONS
    if kind == 'roleper':
        return first in ROLES and second in PERMISSIONS
    return first in PRINCIPALS and second in ROLES


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=tree_shapes, grants=grant_lists,
       principal_groups=st.sampled_from([(), ('group.staff',),
                                         ('group.all', 'group.all')]))
def test_random_local_grants_decide_as_the_stock_policy(
        grant_adapters, shape, grants, principal_groups):
    objects = build_tree(shape)
    try:
        for index, kind, first, second, setting in grants:
            if not valid_grant(kind, first, second):
                continue
            target = None if index < 0 else objects[index % len(objects)]
            if isinstance(target, Plain):
                continue
            grant(target, kind, first, second, setting)
        principal = Principal('alice', principal_groups)
        expected = decide_with(zopepolicy.ZopeSecurityPolicy, objects,
                               principal)
        assert decide_with(ZopeSecurityPolicy, objects,
                           principal) == expected
    finally:
        for manager in (principalPermissionManager, rolePermissionManager,
                        principalRoleManager):
            manager._clear()


def test_an_item_with_its_own_grant_is_decided_for_itself(grant_adapters):
    page = Annotatable(None)
    shared, own = Plain(page), Annotatable(page)
    IPrincipalPermissionManager(own).grantPermissionToPrincipal(
        'perm.view', 'alice')
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    assert not interaction_check('perm.view', page)
    assert not interaction_check('perm.view', shared)
    assert interaction_check('perm.view', own)


def test_a_grant_made_during_an_interaction_is_seen_at_once(grant_adapters):
    page = Annotatable(None)
    item = Plain(page)
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    assert not interaction_check('perm.view', item)
    IPrincipalPermissionManager(page).grantPermissionToPrincipal(
        'perm.view', 'alice')
    assert interaction_check('perm.view', item)
    IPrincipalPermissionManager(page).denyPermissionToPrincipal(
        'perm.view', 'alice')
    assert not interaction_check('perm.view', item)


def interaction_check(permission, ob):
    return queryInteraction().checkPermission(permission, ob)


# -- decisions on persistent objects, across transactions and connections

@implementer(IAttributeAnnotatable)
class PersistentNode(Persistent):
    """A persistent object that may hold local grants."""

    def __init__(self, parent=None):
        self.__parent__ = parent


class Site:
    """Two connections to one database, each with its own transaction
    manager (two requests, or two processes, reading one database)."""

    def __init__(self, db, size=3):
        self.db = db
        self.managers = [transaction.TransactionManager(explicit=True)
                         for _ in range(2)]
        self.connections = [self.db.open(transaction_manager=manager)
                            for manager in self.managers]
        with self.managers[0]:
            root = self.connections[0].root()
            parent = None
            for index in range(size):
                parent = root['node%d' % index] = PersistentNode(parent)

    def nodes(self, which):
        """The nodes as connection ``which`` reads them now (a new
        transaction, unless one is under way)."""
        manager = self.managers[which]
        try:
            manager.get()
        except transaction.interfaces.NoTransaction:
            manager.begin()
        root = self.connections[which].root()
        return [root['node%d' % index] for index in range(len(root))]

    def end(self, which):
        """Abort connection ``which``'s transaction, if one is under way."""
        manager = self.managers[which]
        try:
            manager.get()
        except transaction.interfaces.NoTransaction:
            return
        manager.abort()

    def close(self):
        for which, connection in enumerate(self.connections):
            self.end(which)
            connection.close()
        self.db.close()


RELSTORAGE_SQLITE = """
%%import relstorage
<zodb main>
  <relstorage>
    keep-history false
    <sqlite3>
      data-dir %s
    </sqlite3>
  </relstorage>
</zodb>
"""


@pytest.fixture(params=['MappingStorage', 'RelStorage on SQLite'])
def site(request, grant_adapters, tmp_path):
    clear_shared_grants()
    if request.param == 'MappingStorage':
        db = DB(MappingStorage())
    else:
        db = ZODB.config.databaseFromString(RELSTORAGE_SQLITE % tmp_path)
    site = Site(db)
    yield site
    site.close()
    clear_shared_grants()


def check_in_interaction(principal, permission, objects):
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal(principal)))
    try:
        return [interaction_check(permission, ob) for ob in objects]
    finally:
        endInteraction()


def shared_table(site):
    return _shared[site.db].table


def test_a_grant_committed_elsewhere_is_seen_at_the_next_transaction(
        site):
    nodes = site.nodes(0)
    assert check_in_interaction('alice', 'perm.view', nodes) == [False] * 3
    assert len(shared_table(site)) == 3  # every node grants nothing
    site.end(0)
    with site.managers[1]:
        other = site.nodes(1)
        IPrincipalPermissionManager(other[1]).grantPermissionToPrincipal(
            'perm.view', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False, True, True]
    site.end(0)
    with site.managers[1]:
        IPrincipalPermissionManager(site.nodes(1)[1]).unsetPermissionForPrincipal(
            'perm.view', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False, False, False]


def test_a_connection_reading_an_older_state_does_not_use_the_newer_table(
        site):
    stale = site.nodes(1)  # connection 1 reads the first state ...
    with site.managers[0]:  # ... connection 0 commits a grant after it
        IPrincipalPermissionManager(site.nodes(0)[0]).grantPermissionToPrincipal(
            'perm.view', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True, True, True]
    newer = dict(shared_table(site))
    assert check_in_interaction('alice', 'perm.view', stale) == [
        False, False, False]
    assert shared_table(site) == newer  # the older state wrote nothing


def test_a_changed_object_in_the_request_neither_reads_nor_writes_the_table(
        site):
    nodes = site.nodes(0)
    nodes[2].title = 'changed'  # the request has changed an object
    assert check_in_interaction('alice', 'perm.view', nodes) == [False] * 3
    assert shared_table_or_empty(site) == {}


def shared_table_or_empty(site):
    shared = _shared.get(site.db)
    return {} if shared is None else shared.table


def test_a_grant_made_in_the_interaction_turns_sharing_off_for_its_rest(site):
    nodes = site.nodes(0)
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    try:
        assert not interaction_check('perm.view', nodes[2])
        IPrincipalPermissionManager(nodes[0]).grantPermissionToPrincipal(
            'perm.view', 'alice')
        assert interaction_check('perm.view', nodes[2])
    finally:
        endInteraction()
    site.end(0)
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3


def test_a_new_registration_starts_a_new_table(site):
    nodes = site.nodes(0)
    check_in_interaction('alice', 'perm.view', nodes)
    before = _shared[site.db]

    class OtherRoleManager(AnnotationPrincipalRoleManager):
        pass

    provideAdapter(OtherRoleManager, (IAttributeAnnotatable,),
                   IPrincipalRoleManager)
    check_in_interaction('alice', 'perm.view', nodes)
    assert _shared[site.db] is not before


def test_objects_of_two_connections_checked_in_turn_use_each_ones_table(
        site):
    """Two jars in one interaction (two databases, or two connections):
    each object is decided with its own connection's table, whichever
    was used last; a change in one connection leaves the other sharing."""
    first, second = site.nodes(0), site.nodes(1)
    in_turn = [node for pair in zip(first, second) for node in pair]
    assert check_in_interaction('alice', 'perm.view', in_turn) == [
        False] * 6
    assert len(shared_table(site)) == 3  # one snapshot, one table
    IPrincipalPermissionManager(second[1]).grantPermissionToPrincipal(
        'perm.view', 'alice')  # connection 1 has changed objects now
    assert check_in_interaction('alice', 'perm.view', in_turn) == [
        False, False, False, True, False, True]


def test_an_unknown_storage_snapshot_shares_nothing():
    assert snapshot_of(object()) is None
    assert shared_grants(object(), None) is None


def test_participations_added_to_an_interaction_are_checked_again(site):
    node = site.nodes(0)[0]
    IPrincipalPermissionManager(node).grantPermissionToPrincipal(
        'perm.view', 'alice')
    setSecurityPolicy(ZopeSecurityPolicy)
    interaction = newInteraction(Participation(Principal('alice')))
    interaction = queryInteraction()
    try:
        assert interaction.checkPermission('perm.view', node)
        bob = Participation(Principal('bob'))
        interaction.add(bob)
        assert not interaction.checkPermission('perm.view', node)
        interaction.remove(bob)
        assert interaction.checkPermission('perm.view', node)
    finally:
        endInteraction()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(grant_lists, min_size=1, max_size=4),
       principal_groups=st.sampled_from([(), ('group.staff',)]))
def test_committed_random_grants_decide_as_the_stock_policy(
        site, rounds, principal_groups):
    """Grants committed by one connection, round after round; the other
    connection's decisions, with the shared tables, are the stock
    policy's."""
    principal = Principal('alice', principal_groups)
    try:
        for grants in rounds:
            with site.managers[1]:
                writer = site.nodes(1)
                for index, kind, first, second, setting in grants:
                    if valid_grant(kind, first, second) and index >= 0:
                        grant(writer[index % len(writer)], kind, first,
                              second, setting)
            reader = site.nodes(0)
            expected = decide_with(zopepolicy.ZopeSecurityPolicy, reader,
                                   principal)
            assert decide_with(ZopeSecurityPolicy, reader,
                               principal) == expected
            site.end(0)
    finally:
        with site.managers[1]:
            for node in site.nodes(1):
                if hasattr(node, '__annotations__'):
                    del node.__annotations__


# An object no local-map adapter applies to (a view, most content)

class View:
    """Not annotatable: no adapter gives it a local map."""

    def __init__(self, parent):
        self.__parent__ = parent


def test_an_object_no_local_map_adapter_applies_to_grants_nothing(
        grant_adapters, component_speedups):
    assert has_no_local_maps(View(None))
    assert grants_nothing(View(None))
    assert not has_no_local_maps(Annotatable(None))
    assert grants_nothing(Annotatable(None))  # empty maps


def test_an_interface_declared_later_is_seen_by_the_lookup(
        grant_adapters, component_speedups):
    # zope.interface's lookup cache follows the class's declaration
    class LaterView(View):
        pass

    view = LaterView(None)
    assert has_no_local_maps(view)
    classImplements(LaterView, IAttributeAnnotatable)
    assert not has_no_local_maps(view)
    IPrincipalPermissionManager(view).grantPermissionToPrincipal(
        'perm.view', 'alice')
    assert not grants_nothing(view)


def test_an_adapter_registered_later_is_seen_by_the_lookup(
        grant_adapters, component_speedups):
    class Granting:
        """A local map of another kind: it counts as granting."""

        def __init__(self, context):
            self.context = context

    view = View(None)
    assert has_no_local_maps(view)
    provideAdapter(Granting, (View,), IPrincipalRoleMap)
    assert not has_no_local_maps(view)
    assert not grants_nothing(view)


def test_an_object_that_conforms_or_other_hooks_are_asked_the_stock_way(
        grant_adapters):
    class Conforming(View):
        def __conform__(self, interface):
            return None

    assert not has_no_local_maps(Conforming(None))
    assert grants_nothing(Conforming(None))
    resetHooks()
    assert not has_no_local_maps(View(None))
    assert grants_nothing(View(None))


# -- decisions kept across requests: ROOTED objects, global decisions

def global_table():
    return securitypolicy._global_decisions.table


@pytest.fixture
def counted_decisions(monkeypatch):
    """How many decisions zope.securitypolicy's code has made."""
    made = []
    stock = zopepolicy.ZopeSecurityPolicy.cached_decision

    def cached_decision(self, *args):
        made.append(args)
        return stock(self, *args)

    monkeypatch.setattr(zopepolicy.ZopeSecurityPolicy, 'cached_decision',
                        cached_decision)
    return made


def test_an_object_whose_ancestors_grant_nothing_is_rooted(site):
    nodes = site.nodes(0)
    check_in_interaction('alice', 'perm.view', nodes[2:])
    assert set(shared_table(site).values()) == {ROOTED}
    assert len(shared_table(site)) == 3  # its ancestors were entered


def test_a_rooted_decision_of_an_earlier_request_is_reused(
        site, counted_decisions):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    assert len(counted_decisions) == 1  # the global one, once
    site.end(0)
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    assert len(counted_decisions) == 1  # the next request made none


def test_a_grant_committed_elsewhere_ends_the_rooted_entries(site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    site.end(0)
    with site.managers[1]:
        IPrincipalPermissionManager(site.nodes(1)[1]).grantPermissionToPrincipal(
            'perm.view', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False, True, True]
    assert list(shared_table(site).values()) == [ROOTED, False, True]


def test_a_local_grant_in_the_request_is_seen_after_a_shared_decision(
        site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    site.end(0)
    nodes = site.nodes(0)
    IPrincipalPermissionManager(nodes[0]).grantPermissionToPrincipal(
        'perm.view', 'alice')  # not committed: the connection has changed
    assert check_in_interaction('alice', 'perm.view', nodes) == [True] * 3


def test_a_global_grant_added_and_removed_outside_an_interaction_is_seen(
        site):
    assert queryInteraction() is None
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    principalPermissionManager.unsetPermissionForPrincipal('perm.view',
                                                           'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    principalPermissionManager.denyPermissionToPrincipal('perm.view',
                                                         'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3


def test_a_global_role_granted_and_assigned_outside_an_interaction_is_seen(
        site):
    rolePermissionManager.grantPermissionToRole('perm.view', 'role.reader')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    principalRoleManager.assignRoleToPrincipal('role.reader', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    rolePermissionManager.denyPermissionToRole('perm.view', 'role.reader')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    rolePermissionManager.grantPermissionToRole('perm.view', 'role.reader')
    principalRoleManager.removeRoleFromPrincipal('role.reader', 'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3


def test_a_global_map_cleared_is_seen(site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    principalPermissionManager._clear()
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3


def test_a_global_map_cleared_by_the_testing_cleanup_is_seen(site):
    import zope.testing.cleanup
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    nodes = site.nodes(0)
    assert check_in_interaction('alice', 'perm.view', nodes) == [True] * 3
    zope.testing.cleanup.cleanUp()  # holds the bound _clear, not ours
    setHooks()
    assert check_in_interaction('alice', 'perm.view', nodes) == [False] * 3


def test_a_global_grant_made_during_an_interaction_is_seen_at_once(site):
    nodes = site.nodes(0)
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    try:
        assert not interaction_check('perm.view', nodes[2])
        principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                              'alice')
        assert interaction_check('perm.view', nodes[2])
    finally:
        endInteraction()


def test_another_principal_is_decided_for_itself(site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    assert check_in_interaction('bob', 'perm.view', site.nodes(0)) == [
        False] * 3


def test_another_permission_is_decided_for_itself(site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3
    assert check_in_interaction('alice', 'perm.edit', site.nodes(0)) == [
        False] * 3


def check_as(principal, permission, objects):
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(principal))
    try:
        return [interaction_check(permission, ob) for ob in objects]
    finally:
        endInteraction()


def test_other_groups_of_the_same_principal_are_decided_for_themselves(
        site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'group.all')
    nodes = site.nodes(0)
    assert check_as(Principal('alice'), 'perm.view', nodes) == [False] * 3
    assert check_as(Principal('alice', ('group.staff',)), 'perm.view',
                    nodes) == [True] * 3  # group.staff is in group.all
    assert check_as(Principal('alice'), 'perm.view', nodes) == [False] * 3


class ChangingAuthentication:
    """Groups whose members change at run time (a group of a group)."""

    def __init__(self):
        self.member_of = {}

    def getPrincipal(self, id):
        return Principal(id, self.member_of.get(id, ()))


def test_a_group_joining_another_group_is_seen_by_the_next_request(site):
    authentication = ChangingAuthentication()
    provideUtility(authentication, IAuthentication)
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'group.all')
    alice = Principal('alice', ('group.staff',))
    nodes = site.nodes(0)
    assert check_as(alice, 'perm.view', nodes) == [False] * 3
    authentication.member_of['group.staff'] = ('group.all',)
    assert check_as(alice, 'perm.view', nodes) == [True] * 3
    del authentication.member_of['group.staff']
    assert check_as(alice, 'perm.view', nodes) == [False] * 3


def test_every_participation_is_in_the_key(site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    nodes = site.nodes(0)
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')),
                   Participation(system_user),
                   Participation(Principal('alice')))
    try:
        assert interaction_check('perm.view', nodes[2])
    finally:
        endInteraction()
    newInteraction(Participation(Principal('alice')),
                   Participation(Principal('bob')))
    try:
        assert not interaction_check('perm.view', nodes[2])
    finally:
        endInteraction()


def test_a_new_local_map_registration_is_seen_by_the_next_request(site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3

    class AliceMayView:
        def __init__(self, context):
            pass

        def getSetting(self, permission, principal, default=None):
            return Allow if principal == 'alice' else default

    site.end(0)
    provideAdapter(AliceMayView, (PersistentNode,), IPrincipalPermissionMap)
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        True] * 3


def test_an_object_under_a_plain_parent_is_not_rooted(site):
    nodes = site.nodes(0)
    page = PersistentNode(Plain(None))
    site.connections[0].add(page)
    site.managers[0].commit()
    assert check_in_interaction('alice', 'perm.view', [page]) == [False]
    assert shared_table(site)[page._p_oid] is True
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    assert check_in_interaction('alice', 'perm.view', [page]) == [True]
    assert check_in_interaction('alice', 'perm.view', nodes) == [True] * 3


def test_replaced_readers_of_the_global_maps_are_read_the_stock_way(
        site, monkeypatch):
    nodes = site.nodes(0)
    assert check_in_interaction('alice', 'perm.view', nodes) == [False] * 3
    monkeypatch.setattr(zopepolicy, 'globalPrincipalPermissionSetting',
                        lambda permission, principal, default: Allow)
    assert global_decisions() is None
    assert check_in_interaction('alice', 'perm.view', nodes) == [True] * 3


def test_the_per_request_policy_keeps_no_global_decision(site):
    securitypolicy.global_maps_changed()
    setSecurityPolicy(PerRequestSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    try:
        assert not interaction_check('perm.view', site.nodes(0)[2])
    finally:
        endInteraction()
    assert global_decisions() == {}


def test_global_decisions_are_forgotten_when_too_many(site, monkeypatch):
    monkeypatch.setattr(securitypolicy, 'MAX_GLOBAL_DECISIONS', 2)
    nodes = site.nodes(0)
    for principal in ('alice', 'bob', 'carol'):
        check_in_interaction(principal, 'perm.view', nodes)
    assert len(global_table()) == 1  # emptied before carol's


def test_watching_the_global_maps_twice_watches_them_once():
    before = principalPermissionManager._clear
    watch_global_maps()
    assert principalPermissionManager._clear is before


def test_a_change_that_fails_still_makes_a_new_state(monkeypatch):
    state = securitypolicy.maps_state

    def fails():
        raise RuntimeError('no interaction cache')

    watched = securitypolicy._then_changed(fails)
    with pytest.raises(RuntimeError):
        watched()
    assert securitypolicy.maps_state is not state


def test_a_participation_added_after_a_global_decision_is_checked_again(
        site):
    principalPermissionManager.grantPermissionToPrincipal('perm.view',
                                                          'alice')
    node = site.nodes(0)[2]
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal('alice')))
    interaction = queryInteraction()
    try:
        assert interaction.checkPermission('perm.view', node)
        bob = Participation(Principal('bob'))
        interaction.add(bob)
        assert not interaction.checkPermission('perm.edit', node)
        assert not interaction.checkPermission('perm.view', node)
        interaction.remove(bob)
        assert interaction.checkPermission('perm.view', node)
    finally:
        endInteraction()


def test_the_local_maps_are_asked_together_as_each_would_be_alone(
        grant_adapters, component_speedups):
    from zope.pipeline.components import hooked_factory
    from zope.pipeline.security.policy import LOCAL_MAPS

    @implementer(IPrincipalRoleMap)
    class ProvidesAMap(View):
        pass

    class Conforming(View):
        def __conform__(self, interface):
            return None

    assert len({type(interface) for interface in LOCAL_MAPS}) == 1
    objects = [View(None), Annotatable(None), ProvidesAMap(None),
               Conforming(None)]
    alone = [all(hooked_factory(ob, interface) is None
                 for interface in LOCAL_MAPS) for ob in objects]
    assert alone == [True, False, False, False]
    assert [has_no_local_maps(ob) for ob in objects] == alone


def test_a_full_shared_table_is_emptied_and_decides_the_same(
        site, monkeypatch):
    monkeypatch.setattr(securitypolicy, 'MAX_SHARED', 2)
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    assert len(shared_table(site)) <= 2


def test_an_object_changed_by_its_map_adapter_leaves_the_table_alone(
        site):
    from zope.securitypolicy.securitymap import SecurityMap

    def touching_map(context):
        context.touched = True  # the connection has changed objects now
        return SecurityMap()

    provideAdapter(touching_map, (PersistentNode,), IPrincipalRoleMap)
    nodes = site.nodes(0)
    assert check_in_interaction('alice', 'perm.view', nodes) == [False] * 3
    assert shared_table(site) == {}


# -- the shared table an interaction reads (``TableView``), asked again
# on every check

class AliceMayView:
    """A local map that lets alice view."""

    def __init__(self, context=None):
        pass

    def getSetting(self, permission, principal, default=None):
        return Allow if principal == 'alice' else default


def checks_in_one_interaction(principal='alice'):
    setSecurityPolicy(ZopeSecurityPolicy)
    newInteraction(Participation(Principal(principal)))
    return lambda ob: interaction_check('perm.view', ob)


def grant_elsewhere(site):
    """Alice may view node1 in a transaction of connection 1 (outside an
    interaction: the grant does not empty one)."""
    with site.managers[1]:
        IPrincipalPermissionManager(site.nodes(1)[1]).grantPermissionToPrincipal(
            'perm.view', 'alice')


def test_a_new_transaction_in_the_interaction_reads_its_snapshot(site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3  # every node is in the table
    site.end(0)
    nodes = site.nodes(0)
    grant_elsewhere(site)  # after connection 0's snapshot
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        site.managers[0].abort()  # as a view committing would
        nodes = site.nodes(0)  # a new transaction, a new snapshot
        assert check(nodes[2])
    finally:
        endInteraction()


def test_a_connection_reopened_in_the_transaction_reads_its_snapshot(site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    site.end(0)
    manager = transaction.TransactionManager(explicit=True)
    with manager:
        connection = site.db.open(transaction_manager=manager)
        node0 = connection.root()['node0']
        grant_elsewhere(site)
        check = checks_in_one_interaction()
        try:
            assert not check(node0)
            connection.close()
            reopened = site.db.open(transaction_manager=manager)
            assert reopened is connection  # the pool's, a new snapshot
            assert check(reopened.root()['node2'])
        finally:
            endInteraction()
            connection.close()


def test_a_site_entered_during_the_interaction_is_seen(site):
    from zope.component import getGlobalSiteManager
    from zope.component.hooks import setSite
    from zope.interface.registry import Components

    local = Components('local', bases=(getGlobalSiteManager(),))
    local.registerAdapter(AliceMayView, (PersistentNode,),
                          IPrincipalPermissionMap)

    class LocalSite:
        def getSiteManager(self):
            return local

    nodes = site.nodes(0)
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        setSite(LocalSite())
        assert check(nodes[2])
        setSite(None)
        assert not check(nodes[1])
    finally:
        setSite(None)
        endInteraction()


def test_a_registration_made_during_the_interaction_is_seen(site):
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    site.end(0)
    nodes = site.nodes(0)
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        provideAdapter(AliceMayView, (PersistentNode,),
                       IPrincipalPermissionMap)
        assert check(nodes[2])
    finally:
        endInteraction()


def test_a_global_registry_reset_during_the_interaction_is_seen(
        site, grant_adapters):
    from zope.component.globalregistry import base
    from zope.component.hooks import setSite
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3  # every node is in the table
    site.end(0)
    nodes = site.nodes(0)
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        base.__init__('base')  # zope.testing's cleanup: new adapters,
        setSite(None)  # the site hook's cache emptied
        provideAdapter(AliceMayView, (PersistentNode,),
                       IPrincipalPermissionMap)
        assert check(nodes[2])
    finally:
        endInteraction()


def test_an_object_changed_during_the_interaction_is_seen(site):
    provideAdapter(lambda node: getattr(node, 'local_map', None),
                   (PersistentNode,), IPrincipalPermissionMap)
    assert check_in_interaction('alice', 'perm.view', site.nodes(0)) == [
        False] * 3
    site.end(0)
    nodes = site.nodes(0)
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        nodes[2].local_map = AliceMayView()  # not committed
        assert check(nodes[2])
    finally:
        endInteraction()


def test_an_object_added_during_the_interaction_is_seen(site):
    nodes = site.nodes(0)
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        added = PersistentNode(nodes[2])
        site.connections[0].add(added)
        assert site.connections[0]._added
        assert not check(nodes[2])
        assert not check(added)
    finally:
        endInteraction()
    assert added._p_oid not in shared_table(site)


def test_objects_without_zope_components_hooks_share_nothing(site):
    nodes = site.nodes(0)
    resetHooks()
    try:
        assert check_in_interaction('alice', 'perm.view', nodes) == [
            False] * 3
    finally:
        setHooks()
    assert shared_table_or_empty(site) == {}


def test_objects_of_the_connection_without_an_oid_are_asked_anew(site):
    nodes = site.nodes(0)
    connection = site.connections[0]
    plain = Annotatable(nodes[2])
    plain._p_jar = connection  # not persistent, yet claims the connection
    unsaved = PersistentNode(nodes[2])
    unsaved._p_jar = connection  # no oid yet
    assert unsaved._p_oid is None
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])  # the table is read
        assert not check(plain)
        assert not check(unsaved)
    finally:
        endInteraction()
    IPrincipalPermissionManager(plain).grantPermissionToPrincipal(
        'perm.view', 'alice')
    check = checks_in_one_interaction()
    try:
        assert not check(nodes[0])
        assert check(plain)
    finally:
        endInteraction()
