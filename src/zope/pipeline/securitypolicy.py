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
  reads nor writes it;
- a check already made in an interaction (same object, same permission,
  same participations) is answered from the interaction.

Decisions themselves are never kept across requests, so global grants and
principals' groups are read as the stock policy reads them.  A grant made
during an interaction drops its caches (``invalidate_cache``), as the
stock policy does, and turns the shared table off for the rest of it.
docs/performance.md says what each shortcut buys.
"""

import threading
import weakref

from persistent import Persistent
from zope.component import getGlobalSiteManager
from zope.component import getSiteManager
from zope.interface import provider
from zope.security.checker import CheckerPublic
from zope.security.interfaces import ISecurityPolicy
from zope.security.proxy import removeSecurityProxy
from zope.securitypolicy import zopepolicy
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRolePermissionMap
from zope.securitypolicy.securitymap import SecurityMap

from zope.pipeline.components import hooked_factory
from zope.pipeline.components import query_adapter

#: The local maps the stock policy reads on every object of a path.
LOCAL_MAPS = (IPrincipalPermissionMap, IRolePermissionMap, IPrincipalRoleMap)

#: A shared table is emptied when it holds this many objects.
MAX_SHARED = 100000


def has_no_local_maps(ob):
    """True when no adapter to a local map applies to ``ob`` at all (a
    view, most content): the current site's adapter lookup, asked as
    zope.component's hook asks it (``components.hooked_factory``), has no
    factory for any of ``LOCAL_MAPS``.  False when one applies or when that
    cannot be told (a ``__conform__``, ``ob`` providing a map, hooks that
    are not zope.component's own: then ``query_adapter`` asks)."""
    for interface in LOCAL_MAPS:
        if hooked_factory(ob, interface) is not None:
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
    """What decides which local-map adapters apply: the current site
    manager (a persistent one by its oid) and the global registry's
    generation (bumped by every registration)."""
    oid = getattr(site_manager, '_p_oid', None)
    site = id(site_manager) if oid is None else oid
    return site, getGlobalSiteManager().adapters._generation


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


@provider(ISecurityPolicy)
class ZopeSecurityPolicy(zopepolicy.ZopeSecurityPolicy):
    """zope.securitypolicy's policy, with its decisions reused where they
    cannot differ (see the module's docstring)."""

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
        #: id(jar) -> (jar, site manager, table or None) of the last lookup
        self._tables = {}
        #: the entry of ``_tables`` used last
        self._last_table = (None, None, None)

    def invalidate_cache(self):
        super().invalidate_cache()
        self._sharing = False
        self._clear_shortcuts()

    def add(self, participation):
        super().add(participation)
        self._checked = {}

    def remove(self, participation):
        super().remove(participation)
        self._checked = {}

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
            decision = super().checkPermission(permission, object)
        # ``_objects`` holds the object since its ``_grants_nothing``
        # entry was made (None needs no holding)
        self._checked[key] = decision
        return decision

    def _shared_inherits(self, ob):
        """``grants_nothing(ob)``, from the shared table when ``ob`` is a
        persistent object of an unchanged database state."""
        jar = getattr(ob, '_p_jar', None) if self._sharing else None
        if jar is None or not issubclass(type(ob), Persistent):
            return grants_nothing(ob)
        oid = ob._p_oid
        if oid is None or not is_clean(jar):
            return grants_nothing(ob)
        site_manager = getSiteManager()
        entry = self._last_table
        if entry[0] is not jar or entry[1] is not site_manager:
            entry = self._tables.get(id(jar))
            if entry is None or entry[1] is not site_manager:
                entry = self._tables[id(jar)] = (
                    jar, site_manager,
                    shared_grants(jar, registry_key(site_manager)))
            self._last_table = entry
        table = entry[2]
        if table is None:
            return grants_nothing(ob)
        inherits = table.get(oid)
        if inherits is None:
            inherits = grants_nothing(ob)
            if is_clean(jar):  # the adapters may have loaded and changed
                if len(table) >= MAX_SHARED:
                    table.clear()
                table[oid] = inherits
        return inherits
