"""The Zope security policy, answering as zope.securitypolicy's does, for
less work per request.

``ZopeSecurityPolicy`` is zope.securitypolicy's policy with three
shortcuts, none of which changes an answer:

- an object that grants nothing locally (no principal-permission,
  role-permission or principal-role map, or only empty ones of
  zope.securitypolicy's own kinds) has its ``__parent__``'s decision,
  decided once per parent within an interaction;
- whether a *persistent* object grants nothing is remembered across
  requests, per database, for as long as the database has not changed
  (``SharedGrants``): a commit anywhere, by any process, is a new
  snapshot and starts afresh; a request that has changed objects neither
  reads nor writes it.  An interaction reads the table of its
  connection's snapshot once (``TableView``) and asks on every check,
  with a few attribute reads, whether it still holds: the connection
  clean, not reopened, in the same transaction, the same current site
  manager (zope.component's hooks in place) and global registry;
- the same table says of a persistent object whose ancestors, up to the
  root (``__parent__`` None), are persistent objects of its connection
  that grant nothing either, that it is ``ROOTED``: every principal's
  decision on it is the global one, asked at once;
- the global decision (zope.securitypolicy's decision for ``None``: the
  global maps only) is remembered across requests per permission and
  participations (principal ids and their groups, found per interaction
  as the stock policy finds them) for as long as the three global maps
  are unchanged (``GlobalDecisions``): their mutating methods make a new
  ``maps_state`` (``watch_global_maps``);
- a check already made in an interaction (same object, same permission,
  same participations) is answered from the interaction.

Decisions on objects that grant something, and principals' groups, are
never kept across requests.  A grant made during an interaction drops its
caches (``invalidate_cache``), as the stock policy does, and turns the
shared table off for the rest of it.  ``share_decisions = False`` on a
subclass (``PerRequestSecurityPolicy``) keeps no decision across requests.
docs/performance.md says what each shortcut buys.
"""

import threading
import weakref

from persistent import Persistent
from zope.component import getGlobalSiteManager
from zope.component import getSiteManager
from zope.component import hooks
from zope.interface import provider
from zope.security.checker import CheckerPublic
from zope.security.interfaces import ISecurityPolicy
from zope.security.management import system_user
from zope.security.proxy import removeSecurityProxy
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRolePermissionMap
from zope.securitypolicy.principalpermission import principalPermissionManager
from zope.securitypolicy.principalrole import principalRoleManager
from zope.securitypolicy.rolepermission import rolePermissionManager
from zope.securitypolicy.securitymap import SecurityMap

from zope.pipeline import components

__all__ = (
    'ZopeSecurityPolicy',
    'PerRequestSecurityPolicy',
)

#: The local maps the stock policy reads on every object of a path (of
#: one class: ``has_no_factory`` asks for them together).
LOCAL_MAPS = (IPrincipalPermissionMap, IRolePermissionMap, IPrincipalRoleMap)

#: A shared table is emptied when it holds this many objects.
MAX_SHARED = 100000

#: The global decisions are forgotten when this many are kept.
MAX_GLOBAL_DECISIONS = 10000

#: A shared table's value for an object that grants nothing and whose
#: ancestors, up to the root, are persistent objects of its connection
#: that grant nothing either (truthy: it grants nothing).
ROOTED = 'rooted'


def has_no_local_maps(ob):
    """True when no adapter to a local map applies to ``ob`` at all (a
    view, most content): the current site's adapter lookup, asked as
    zope.component's hook asks it (``components.hooked_factory``), has no
    factory for any of ``LOCAL_MAPS``.  False when one applies or when that
    cannot be told (a ``__conform__``, ``ob`` providing a map, hooks that
    are not zope.component's own: then ``query_adapter`` asks)."""
    return components.has_no_factory(ob, LOCAL_MAPS)


def grants_nothing(ob):
    """True when ``ob`` has no local map the stock policy would read a
    setting from.  A map of another kind than zope.securitypolicy's own
    counts as granting something, even when empty: the stock policy then
    decides for ``ob`` itself."""
    if has_no_local_maps(ob):
        return True
    for interface in LOCAL_MAPS:
        local = components.query_adapter(ob, interface)
        if local is None:
            continue
        if isinstance(local, SecurityMap) and not local:
            continue
        return False
    return True


def snapshot_of(jar):
    """The transaction id of the database state ``jar`` (a ZODB
    connection) reads, or None when it cannot be told.

    RelStorage says it as ``highest_visible_tid``; ZODB's MVCC adapter
    (FileStorage, MappingStorage) keeps the start of its snapshot.
    """
    storage = getattr(jar, '_storage', None)
    tid = getattr(storage, 'highest_visible_tid', None)
    if tid:  # RelStorage: an int, 0 before the first poll
        return tid
    start = getattr(storage, '_start', None)  # ZODB's MVCCAdapterInstance
    if isinstance(start, bytes):
        return int.from_bytes(start, 'big')
    return None


def is_clean(jar):
    """Has the request's transaction left ``jar``'s objects unchanged?
    (Unknown counts as changed.)"""
    return not (getattr(jar, '_registered_objects', True)
                or getattr(jar, '_added', True))


def registry_key(site_manager, adapters):
    """What decides which local-map adapters apply: the current site
    manager (a persistent one by its oid) and the global registry's
    ``adapters`` and their generation (bumped by every registration).
    Objects, not their ids: the key holds them."""
    oid = getattr(site_manager, '_p_oid', None)
    return (site_manager if oid is None else oid), adapters, \
        adapters._generation


#: A ``TableView``'s transaction when its connection's cannot be told,
#: and the connection of ``NO_VIEW`` (no object's).
UNKNOWN = object()

#: zope.component's own ``getSiteManager`` hook (``setHooks``): it
#: answers zope.component's thread-local ``siteinfo.sm``.
SITE_MANAGER_HOOK = hooks.getSiteManager

#: The global registry (never rebound: zope.testing's cleanup
#: reinitialises it, which makes new ``adapters``).
GLOBAL_SITE_MANAGER = getGlobalSiteManager()


class TableView:
    """What one interaction reads of a connection's shared table (the
    ``table``), and what it holds for: the connection (``jar``) clean, as
    it was opened (``opened``), in the same transaction (a new one reads
    a new snapshot), the same current site manager (read where
    zope.component's hook answers, ``SITE_MANAGER_HOOK``) and the same
    global registry and generation.  ``ZopeSecurityPolicy`` asks that on
    every check, inline; ``table`` is None when the view cannot hold, and
    for a connection that records the objects it loads
    (``responsecache.RecordingConnection.reads``, for the response cache:
    a page must load the grant maps it depends on, not read the table)."""

    __slots__ = ('jar', 'opened', 'transaction', 'site_manager',
                 'adapters', 'generation', 'table')

    def __init__(self, jar):
        self.jar = jar
        self.table = None
        self.opened = getattr(jar, 'opened', None)
        self.transaction = getattr(
            getattr(jar, 'transaction_manager', None), '_txn', UNKNOWN)
        self.adapters = adapters = GLOBAL_SITE_MANAGER.adapters
        self.generation = adapters._generation
        self.site_manager = None
        if getSiteManager.implementation is SITE_MANAGER_HOOK \
                and self.opened is not None \
                and self.transaction is not UNKNOWN and is_clean(jar) \
                and getattr(jar, 'reads', None) is None:
            self.site_manager = hooks.siteinfo.sm
            self.table = shared_grants(
                jar, registry_key(self.site_manager, adapters))


#: The view of an interaction that has read no table yet.
NO_VIEW = TableView(UNKNOWN)


class SharedGrants:
    """Which persistent objects of one database grant nothing, as of one
    snapshot and one registry key; a newer snapshot replaces it."""

    __slots__ = ('snapshot', 'registry', 'table')

    def __init__(self, snapshot, registry):
        self.snapshot = snapshot
        self.registry = registry
        self.table = {}


#: database -> SharedGrants (the newest snapshot seen in this process)
_shared = weakref.WeakKeyDictionary()
_shared_lock = threading.Lock()


def shared_grants(jar, registry):
    """The table for ``jar``'s snapshot, or None when ``jar`` reads an
    older state than the table's (a slower thread), or cannot tell."""
    snapshot = snapshot_of(jar)
    if snapshot is None:
        return None
    database = jar.db()
    current = _shared.get(database)
    if current is not None and current.snapshot == snapshot \
            and current.registry == registry:
        return current.table
    with _shared_lock:
        current = _shared.get(database)
        if current is None or current.snapshot < snapshot or (
                current.snapshot == snapshot
                and current.registry != registry):
            current = _shared[database] = SharedGrants(snapshot, registry)
        elif current.snapshot != snapshot:
            return None
    return current.table


def clear_shared_grants():
    """Forget every shared table (tests)."""
    _shared.clear()


# -- the global maps and the decisions read from them alone

#: The maps zope.securitypolicy's policy reads for the root's parent.
GLOBAL_MAPS = (principalPermissionManager, rolePermissionManager,
               principalRoleManager)

#: What zope.securitypolicy's policy reads them with (bound at its import).
GLOBAL_READERS = (zopepolicy.globalPrincipalPermissionSetting,
                  zopepolicy.globalRolesForPermission,
                  zopepolicy.globalRolesForPrincipal)

#: A new object whenever a global map has changed (compared by identity:
#: never the same twice, and no lock needed to make one).
maps_state = object()


def global_maps_changed():
    """Called after a global map has changed: a new ``maps_state``."""
    global maps_state
    maps_state = object()


def watch_global_maps(maps=GLOBAL_MAPS):
    """Make every change of ``maps`` (``addCell``/``delCell`` through
    any of their grant methods, which call ``_invalidated_interaction_cache``
    after a change, and ``_clear``) call ``global_maps_changed``, inside
    an interaction or not.  The bound ``_clear`` zope.testing's cleanup
    holds is followed by ``global_maps_changed`` (registered after it)."""
    for security_map in maps:
        if '_clear' in vars(security_map):
            continue  # watched already
        security_map._invalidated_interaction_cache = _then_changed(
            security_map._invalidated_interaction_cache)
        security_map._clear = _then_changed(security_map._clear)


def _then_changed(method):
    def changed(*args):
        try:
            return method(*args)
        finally:
            global_maps_changed()
    return changed


watch_global_maps()
try:
    from zope.testing.cleanup import addCleanUp
except ModuleNotFoundError:  # pragma: no cover - zope.testing is absent
    pass
else:
    addCleanUp(global_maps_changed)


def global_maps_are_read_as_watched():
    """Does zope.securitypolicy's policy still read the watched maps?
    (A test may replace its readers.)"""
    return (zopepolicy.globalPrincipalPermissionSetting is GLOBAL_READERS[0]
            and zopepolicy.globalRolesForPermission is GLOBAL_READERS[1]
            and zopepolicy.globalRolesForPrincipal is GLOBAL_READERS[2])


class GlobalDecisions:
    """Global decisions as of one ``maps_state``: (permission,
    participations' key) -> bool."""

    __slots__ = ('state', 'table')

    def __init__(self, state):
        self.state = state
        self.table = {}


_global_decisions = GlobalDecisions(None)


def global_decisions():
    """The table of the current ``maps_state``, or None when the
    policy's readers are not the watched maps'."""
    global _global_decisions
    if not global_maps_are_read_as_watched():
        return None
    state = maps_state
    current = _global_decisions
    if current.state is not state:
        current = _global_decisions = GlobalDecisions(state)
    elif len(current.table) >= MAX_GLOBAL_DECISIONS:
        current.table.clear()
    return current.table


#: The ``_checked`` key of the global decision (the root's parent, None).
NONE_ID = id(None)


@provider(ISecurityPolicy)
class ZopeSecurityPolicy(zopepolicy.ZopeSecurityPolicy):
    """zope.securitypolicy's policy, with its decisions reused where they
    cannot differ (see the module's docstring)."""

    #: Keep global decisions across requests (``GlobalDecisions``)?
    share_decisions = True

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        #: May the shared tables be used in this interaction?
        self._sharing = True
        self._clear_shortcuts()

    def _clear_shortcuts(self):
        #: (id(object), permission) -> decision, for these participations
        self._checked = {}
        #: id(object) -> does the object grant nothing locally (or ROOTED)?
        self._grants_nothing = {}
        #: id(object) -> object: keeps the ids above unique
        self._objects = {}
        #: the ``TableView`` read last (its table is not None)
        self._view = NO_VIEW
        #: the participations' part of a global decision's key
        self._principals = None

    def invalidate_cache(self):
        super().invalidate_cache()
        self._sharing = False
        self._clear_shortcuts()

    def add(self, participation):
        super().add(participation)
        self._checked = {}
        self._principals = None

    def remove(self, participation):
        super().remove(participation)
        self._checked = {}
        self._principals = None

    def checkPermission(self, permission, object):
        if permission is CheckerPublic:
            return True
        object = removeSecurityProxy(object)
        ob_id = id(object)
        key = (ob_id, permission)
        decision = self._checked.get(key)
        if decision is not None:
            return decision
        if object is None:
            decision = self._checked[key] = self._global_decision(permission)
            return decision
        # Does the object take its parent's decisions (it grants nothing)?
        inherits = self._grants_nothing.get(ob_id)
        if inherits is None:
            jar = getattr(object, '_p_jar', None)
            view = self._view
            # the last shared table read, while its ``TableView`` holds
            # for the object's connection (inline: every check asks)
            if jar is view.jar and not jar._registered_objects \
                    and not jar._added and jar.opened == view.opened \
                    and jar.transaction_manager._txn is view.transaction \
                    and getSiteManager.implementation is SITE_MANAGER_HOOK \
                    and hooks.siteinfo.sm is view.site_manager \
                    and GLOBAL_SITE_MANAGER.adapters is view.adapters \
                    and view.adapters._generation == view.generation:
                inherits = view.table.get(getattr(object, '_p_oid', None))
                if inherits is None \
                        or not issubclass(type(object), Persistent):
                    inherits = self._table_inherits(object, view)
            else:
                inherits = self._new_view_inherits(object, jar)
            self._grants_nothing[ob_id] = inherits
            self._objects[ob_id] = object
        if inherits is ROOTED:
            # so does every ancestor: the decision is the global one
            decision = self._checked.get((NONE_ID, permission))
            if decision is None:
                decision = self.checkPermission(permission, None)
        elif inherits:
            # every principal's decision is the parent's (siblings find
            # it decided)
            parent = removeSecurityProxy(getattr(object, '__parent__', None))
            decision = self._checked.get((id(parent), permission))
            if decision is None:
                decision = self.checkPermission(permission, parent)
        else:
            decision = super().checkPermission(permission, object)
        # ``_objects`` holds the object since its ``_grants_nothing``
        # entry was made
        self._checked[key] = decision
        return decision

    def _global_decision(self, permission):
        """zope.securitypolicy's decision for ``None`` (the global maps
        only), from ``GlobalDecisions`` when it may be shared."""
        table = global_decisions() if self.share_decisions else None
        if table is None:
            return super().checkPermission(permission, None)
        principals = self._principals
        if principals is None:
            principals = self._principals = self._participations_key()
        key = (permission, principals)
        decision = table.get(key)
        if decision is None:
            decision = table[key] = super().checkPermission(permission, None)
        return decision

    def _participations_key(self):
        """What a global decision depends on beyond the maps: the policy's
        class and each principal's id and groups (the stock policy's
        ``_groupsFor``), as the stock ``checkPermission`` reads them:
        the system user left out, a principal id counted once."""
        groups = {}
        for participation in self.participations:
            principal = participation.principal
            if principal is system_user or principal.id in groups:
                continue
            groups[principal.id] = self._groupsFor(principal)
        return (type(self), tuple(groups.items()))

    def _table_inherits(self, ob, view):
        """``grants_nothing(ob)`` (or ROOTED) from ``view``'s table, which
        holds for ``ob``'s connection, where ``ob`` has no entry yet or is
        not a persistent object."""
        oid = getattr(ob, '_p_oid', None)
        if oid is None or not issubclass(type(ob), Persistent):
            return grants_nothing(ob)
        return table_entry(view.table, view.jar, oid, ob)

    def _new_view_inherits(self, ob, jar):
        """``grants_nothing(ob)``, from a new ``TableView`` of ``ob``'s
        connection (``jar``) when ``ob`` is a persistent object of an
        unchanged database state (there ROOTED when its ancestors grant
        nothing either)."""
        if jar is None or not self._sharing \
                or not issubclass(type(ob), Persistent) or ob._p_oid is None:
            return grants_nothing(ob)
        view = TableView(jar)
        if view.table is None:
            return grants_nothing(ob)
        self._view = view
        return table_entry(view.table, jar, ob._p_oid, ob)


def table_entry(table, jar, oid, ob):
    """The shared table's entry for ``ob`` (persistent, of ``jar``, clean,
    whose snapshot ``table`` is), made if missing: False (it grants
    something), ROOTED (see ``rooted``) or True."""
    inherits = table.get(oid)
    if inherits is None:
        inherits = grants_nothing(ob) and rooted(table, jar, ob)
        if is_clean(jar):  # the adapters may have loaded and changed
            if len(table) >= MAX_SHARED:
                table.clear()
            table[oid] = inherits
    return inherits


def rooted(table, jar, ob):
    """For ``ob``, which grants nothing: ROOTED when its parent is None, or
    a persistent object of ``jar`` whose entry is ROOTED; else True."""
    parent = removeSecurityProxy(getattr(ob, '__parent__', None))
    if parent is None:
        return ROOTED
    if getattr(parent, '_p_jar', None) is not jar \
            or not issubclass(type(parent), Persistent) \
            or parent._p_oid is None:
        return True
    if table_entry(table, jar, parent._p_oid, parent) is ROOTED:
        return ROOTED
    return True


@provider(ISecurityPolicy)
class PerRequestSecurityPolicy(ZopeSecurityPolicy):
    """``ZopeSecurityPolicy`` keeping no decision across requests (name it
    in ``<securityPolicy component="..."/>`` to opt out of
    ``GlobalDecisions``)."""

    share_decisions = False
