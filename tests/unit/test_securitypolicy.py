"""zope.pipeline's security policy answers as zope.securitypolicy's does:
zope.securitypolicy's own test suite passes with it in place of the stock
class, and on random trees of objects with random local grants both
policies decide the same for every object, principal and permission."""

import unittest

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from zope.annotation.attribute import AttributeAnnotations
from zope.annotation.interfaces import IAttributeAnnotatable
from zope.authentication.interfaces import IAuthentication
from zope.component import provideAdapter
from zope.component import provideUtility
from zope.interface import implementer
from zope.security.management import endInteraction
from zope.security.management import newInteraction
from zope.security.management import queryInteraction
from zope.security.management import setSecurityPolicy
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import IPrincipalPermissionManager
from zope.securitypolicy.interfaces import IPrincipalRoleManager
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

from zope.pipeline.securitypolicy import ZopeSecurityPolicy

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
