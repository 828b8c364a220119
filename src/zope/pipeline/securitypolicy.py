"""The Zope security policy, answering as zope.securitypolicy's does, for
less work per request.

``ZopeSecurityPolicy`` is zope.securitypolicy's policy with four
shortcuts, none of which changes an answer:

- an object that grants nothing locally (no principal-permission,
  role-permission or principal-role map, or only empty ones of
  zope.securitypolicy's own kinds) has its ``__parent__``'s decision,
  decided once per parent within an interaction; an object no local-map
  adapter applies to at all (a view) is told by the site's adapter lookup
  directly (``has_no_local_maps``);
- whether a *persistent* object grants nothing is remembered across
  requests, per database, for as long as the database has not changed
  (``SharedGrants``): a commit anywhere, by any process, is a new
  snapshot and starts afresh; a request that has changed objects neither
  reads nor writes it;
- a decision on a persistent object that grants something is kept in the
  same table, per permission and per principals with their groups, when
  every object from it to the root is a persistent object of the same
  connection whose local maps are zope.securitypolicy's annotation maps
  (or none): the table is keyed by the snapshot, the registrations and the
  global grants, whose maps are observed (``observe_global_maps``: every
  change made by their methods, even outside an interaction, and a
  ``_clear``, starts a new table).  ``PerRequestSecurityPolicy`` keeps
  none;
- a check already made in an interaction (same object, same permission,
  same participations) is answered from the interaction.

A grant made during an interaction drops its caches
(``invalidate_cache``), as the stock policy does, and turns the shared
table off for the rest of it.  docs/performance.md says what each
shortcut buys.
"""

import threading
import weakref

from persistent import Persistent
from zope.component import getGlobalSiteManager
from zope.component import getSiteManager
from zope.interface import providedBy
from zope.interface import provider
from zope.security.checker import CheckerPublic
from zope.security.interfaces import ISecurityPolicy
from zope.security.management import system_user
from zope.security.proxy import removeSecurityProxy
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRolePermissionMap
from zope.securitypolicy.principalpermission import (
    AnnotationPrincipalPermissionManager,
)
from zope.securitypolicy.principalpermission import principalPermissionManager
from zope.securitypolicy.principalrole import AnnotationPrincipalRoleManager
from zope.securitypolicy.principalrole import principalRoleManager
from zope.securitypolicy.rolepermission import AnnotationRolePermissionManager
from zope.securitypolicy.rolepermission import rolePermissionManager
from zope.securitypolicy.securitymap import SecurityMap

from zope.pipeline.components import hooked_lookup1
from zope.pipeline.components import query_adapter

#: The local maps the stock policy reads on every object of a path.
LOCAL_MAPS = (IPrincipalPermissionMap, IRolePermissionMap, IPrincipalRoleMap)

#: A shared table is emptied when it holds this many objects (or
#: decisions).
MAX_SHARED = 100000

#: zope.securitypolicy's global maps (the grants of ZCML and of code).
GLOBAL_MAPS = (principalPermissionManager, rolePermissionManager,
               principalRoleManager)

#: The local maps whose settings live in the object's annotations, in a
#: persistent map of the object's database (``reads_own_maps``).
ANNOTATION_MAPS = (AnnotationPrincipalPermissionManager,
                   AnnotationRolePermissionManager,
                   AnnotationPrincipalRoleManager)

#: How many times a global map has changed (``observe_global_maps``).
_global_changes = 0


def observe_global_maps():
    """Count every change of a global map: zope.securitypolicy's
    ``addCell`` and ``delCell`` tell the map's
    ``_invalidated_interaction_cache`` (which drops the current
    interaction's caches only); each global map's is wrapped, once, to
    count too.  ``_clear`` (zope.testing's clean-up) replaces the map's
    dicts, which ``global_grants_key`` holds."""
    for security_map in GLOBAL_MAPS:
        if '_invalidated_interaction_cache' in vars(security_map):
            continue
        original = security_map._invalidated_interaction_cache

        def counted(original=original):
            global _global_changes
            _global_changes += 1
            return original()

        security_map._invalidated_interaction_cache = counted


observe_global_maps()


def global_grants_key():
    """What the global grants are now: the count of changes and the dicts
    of the global maps themselves (held, so that a dict made by a later
    ``_clear`` is never taken for one of them; compared by identity
    first)."""
    return (_global_changes,) + tuple(
        security_map._byrow for security_map in GLOBAL_MAPS)


def has_no_local_maps(ob):
    """True when no adapter to a local map applies to ``ob`` at all (a
    view, most content): it has no ``__conform__``, provides none of
    ``LOCAL_MAPS`` and the current site's adapter lookup, asked as
    zope.component's hook asks it (``components.hooked_lookup1``), has no
    factory for its interfaces.  False when one applies or when the hooks
    are not zope.component's own (then ``query_adapter`` asks)."""
    if getattr(ob, '__conform__', None) is not None:
        return False
    spec = providedBy(ob)
    for interface in LOCAL_MAPS:
        lookup1 = hooked_lookup1(interface)
        if lookup1 is None or spec.isOrExtends(interface) \
                or lookup1(spec, interface, '') is not None:
            return False
    return True


def grants_nothing(ob):
    """True when ``ob`` has no local map the stock policy would read a
    setting from.  A map of another kind than zope.securitypolicy's own
    counts as granting something, even when empty: the stock policy then
    decides for ``ob`` itself."""
    if has_no_local_maps(ob):
        return True
    for interface in LOCAL_MAPS:
        local = query_adapter(ob, interface)
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


def registry_key(site_manager):
    """What decides which local-map adapters apply and what the global
    grants are: the current site manager (a persistent one by its oid),
    the global registry's generation (bumped by every registration) and
    ``global_grants_key``."""
    oid = getattr(site_manager, '_p_oid', None)
    site = id(site_manager) if oid is None else oid
    return (site, getGlobalSiteManager().adapters._generation,
            global_grants_key())


def reads_own_maps(ob, jar):
    """True when every local map the stock policy reads from ``ob`` is
    none or zope.securitypolicy's annotation map whose settings are a
    persistent map of ``jar`` (or none yet): its settings then change
    only by a commit (a new snapshot) or in the request (not clean)."""
    for interface in LOCAL_MAPS:
        local = query_adapter(ob, interface)
        if local is None:
            continue
        if type(local) not in ANNOTATION_MAPS:
            return False
        stored = local.map
        if stored is not None and not (isinstance(stored, Persistent)
                                       and stored._p_jar is jar):
            return False
    return True


class SharedGrants:
    """Which persistent objects of one database grant nothing, as of one
    snapshot and one registry key; a newer snapshot replaces it."""

    __slots__ = ('snapshot', 'registry', 'table', 'own_maps', 'decisions')

    def __init__(self, snapshot, registry):
        self.snapshot = snapshot
        self.registry = registry
        #: oid -> does the object grant nothing?
        self.table = {}
        #: oid -> ``reads_own_maps`` of an object that grants something
        self.own_maps = {}
        #: (oid, permission, principals) -> decision
        self.decisions = {}


#: database -> SharedGrants (the newest snapshot seen in this process)
_shared = weakref.WeakKeyDictionary()
_shared_lock = threading.Lock()


def shared_grants(jar, registry):
    """The ``SharedGrants`` of ``jar``'s snapshot, or None when ``jar``
    reads an older state than the table's (a slower thread), or cannot
    tell."""
    snapshot = snapshot_of(jar)
    if snapshot is None:
        return None
    database = jar.db()
    current = _shared.get(database)
    if current is not None and current.snapshot == snapshot \
            and current.registry == registry:
        return current
    with _shared_lock:
        current = _shared.get(database)
        if current is None or current.snapshot < snapshot or (
                current.snapshot == snapshot
                and current.registry != registry):
            current = _shared[database] = SharedGrants(snapshot, registry)
        elif current.snapshot != snapshot:
            return None
    return current


def clear_shared_grants():
    """Forget every shared table (tests)."""
    _shared.clear()


@provider(ISecurityPolicy)
class ZopeSecurityPolicy(zopepolicy.ZopeSecurityPolicy):
    """zope.securitypolicy's policy, with its decisions reused where they
    cannot differ (see the module's docstring)."""

    #: May decisions be kept across requests (``SharedGrants.decisions``)?
    share_decisions = True

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        #: May the shared tables be used in this interaction?
        self._sharing = True
        self._clear_shortcuts()

    def _clear_shortcuts(self):
        #: (id(object), permission) -> decision, for these participations
        self._checked = {}
        #: id(object) -> does the object grant nothing locally?
        self._grants_nothing = {}
        #: id(object) -> object: keeps the ids above unique
        self._objects = {}
        #: id(jar) -> (jar, site manager, SharedGrants or None) of the
        #: last lookup
        self._tables = {}
        #: the entry of ``_tables`` used last
        self._last_table = (None, None, None)
        #: the participations' principals and groups (``_principals_key``)
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
        # Does the object take its parent's decisions (it grants nothing)?
        inherits = self._grants_nothing.get(ob_id)
        if inherits is None and object is not None:
            inherits = self._grants_nothing[ob_id] = \
                self._shared_inherits(object)
            self._objects[ob_id] = object
        if inherits:
            # every principal's decision is the parent's (siblings find
            # it decided)
            parent = removeSecurityProxy(getattr(object, '__parent__', None))
            decision = self._checked.get((id(parent), permission))
            if decision is None:
                decision = self.checkPermission(permission, parent)
        else:
            decision = self._shared_decision(permission, object)
        # ``_objects`` holds the object since its ``_grants_nothing``
        # entry was made (None needs no holding)
        self._checked[key] = decision
        return decision

    def _shared_for(self, ob):
        """(jar, SharedGrants) for a persistent ``ob`` of a clean
        connection whose snapshot has a table; (None, None) otherwise."""
        jar = getattr(ob, '_p_jar', None) if self._sharing else None
        if jar is None or not issubclass(type(ob), Persistent) \
                or ob._p_oid is None or not is_clean(jar):
            return None, None
        site_manager = getSiteManager()
        entry = self._last_table
        if entry[0] is not jar or entry[1] is not site_manager:
            entry = self._tables.get(id(jar))
            if entry is None or entry[1] is not site_manager:
                entry = self._tables[id(jar)] = (
                    jar, site_manager,
                    shared_grants(jar, registry_key(site_manager)))
            self._last_table = entry
        if entry[2] is None:
            return None, None
        return jar, entry[2]

    def _shared_inherits(self, ob):
        """``grants_nothing(ob)``, from the shared table when ``ob`` is a
        persistent object of an unchanged database state."""
        jar, shared = self._shared_for(ob)
        if shared is None:
            return grants_nothing(ob)
        table = shared.table
        oid = ob._p_oid
        inherits = table.get(oid)
        if inherits is None:
            inherits = grants_nothing(ob)
            if is_clean(jar):  # the adapters may have loaded and changed
                if len(table) >= MAX_SHARED:
                    table.clear()
                table[oid] = inherits
        return inherits

    def _shared_decision(self, permission, ob):
        """The stock decision on ``ob`` (which grants something), kept in
        its snapshot's table when every object from ``ob`` to the root is
        a persistent object of the same clean connection whose local maps
        are zope.securitypolicy's own (``reads_own_maps``), or grants
        nothing: the decision then depends on the snapshot, the
        registrations, the global grants (``registry_key``), the
        permission and the principals and their groups."""
        jar, shared = (self._shared_for(ob) if self.share_decisions
                       else (None, None))
        if shared is None or not self._chain_is_shared(ob, jar, shared):
            return super().checkPermission(permission, ob)
        key = (ob._p_oid, permission, self._principals_key())
        decisions = shared.decisions
        decision = decisions.get(key)
        if decision is None:
            decision = super().checkPermission(permission, ob)
            if is_clean(jar):
                if len(decisions) >= MAX_SHARED:
                    decisions.clear()
                decisions[key] = decision
        return decision

    def _chain_is_shared(self, ob, jar, shared):
        """Is every object from ``ob`` up its ``__parent__``s a persistent
        object of ``jar`` that grants nothing or reads its own maps
        (``reads_own_maps``, remembered in ``shared``)?"""
        own_maps = shared.own_maps
        while ob is not None:
            if not issubclass(type(ob), Persistent) or ob._p_jar is not jar:
                return False
            oid = ob._p_oid
            if not shared.table.get(oid):  # not known to grant nothing
                own = own_maps.get(oid)
                if own is None:
                    own = reads_own_maps(ob, jar)
                    if not is_clean(jar):
                        return False
                    if len(own_maps) >= MAX_SHARED:
                        own_maps.clear()
                    own_maps[oid] = own
                if not own:
                    return False
            ob = removeSecurityProxy(getattr(ob, '__parent__', None))
        return True

    def _principals_key(self):
        """The participations' principals, each with its groups as the
        stock policy finds them in this interaction (``_groupsFor``)."""
        key = self._principals
        if key is None:
            key = self._principals = tuple(
                (None, None) if participation.principal is system_user
                else (participation.principal.id,
                      self._groupsFor(participation.principal))
                for participation in self.participations)
        return key


@provider(ISecurityPolicy)
class PerRequestSecurityPolicy(ZopeSecurityPolicy):
    """``ZopeSecurityPolicy`` keeping no decision across requests: for a
    site whose grants change by other means than zope.securitypolicy's
    maps (a local map of another kind is never shared anyway)."""

    share_decisions = False
