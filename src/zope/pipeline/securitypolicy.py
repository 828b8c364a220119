"""The Zope security policy with a cheaper per-interaction cache.

``ZopeSecurityPolicy`` here is zope.securitypolicy's policy, answering
exactly as it does, with one shortcut: an object that grants nothing
locally (no principal-permission, role-permission or principal-role map,
or only empty ones of zope.securitypolicy's own kinds) has, for every
principal and permission, the decision of its ``__parent__``.  The stock
policy reaches the same decision by walking up the parents once per
principal and group for each new object; this one decides once per
parent and reuses it for all its children (the ten items of a page share
the page's decision).  Decisions are still made per interaction and
dropped when a grant changes during it (``invalidate_cache``), as the
stock policy does.  On the sample site's /folder/page it cuts the
instructions per request by 11 % (docs/performance.md).
"""

from zope.interface import provider
from zope.security.interfaces import ISecurityPolicy
from zope.security.proxy import removeSecurityProxy
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRolePermissionMap
from zope.securitypolicy.securitymap import SecurityMap

#: The local maps the stock policy reads on every object of a path.
LOCAL_MAPS = (IPrincipalPermissionMap, IRolePermissionMap, IPrincipalRoleMap)


def grants_nothing(ob):
    """True when ``ob`` has no local map the stock policy would read a
    setting from.  A map of another kind than zope.securitypolicy's own
    counts as granting something, even when empty: the stock policy then
    decides for ``ob`` itself."""
    for interface in LOCAL_MAPS:
        local = interface(ob, None)
        if local is None:
            continue
        if isinstance(local, SecurityMap) and not local:
            continue
        return False
    return True


@provider(ISecurityPolicy)
class ZopeSecurityPolicy(zopepolicy.ZopeSecurityPolicy):
    """zope.securitypolicy's policy; objects that grant nothing share
    their parent's decisions within an interaction."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._clear_shortcuts()

    def _clear_shortcuts(self):
        #: (id(object), principal id, permission) -> decision
        self._decisions = {}
        #: id(object) -> does the object grant nothing locally?
        self._grants_nothing = {}
        #: id(object) -> object: keeps the ids above unique
        self._objects = {}

    def invalidate_cache(self):
        super().invalidate_cache()
        self._clear_shortcuts()

    def cached_decision(self, parent, principal, groups, permission):
        key = (id(parent), principal, permission)
        decision = self._decisions.get(key)
        if decision is not None:
            return decision
        if parent is not None and self._inherits(parent):
            decision = self.cached_decision(
                removeSecurityProxy(getattr(parent, '__parent__', None)),
                principal, groups, permission)
        else:
            decision = super().cached_decision(parent, principal, groups,
                                               permission)
        self._decisions[key] = decision
        return decision

    def _inherits(self, ob):
        """Does ``ob`` take its parent's decisions (it grants nothing)?"""
        key = id(ob)
        inherits = self._grants_nothing.get(key)
        if inherits is None:
            inherits = self._grants_nothing[key] = grants_nothing(ob)
            self._objects[key] = ob
        return inherits
