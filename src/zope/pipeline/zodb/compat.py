"""Compatibility fixes for RelStorage 4.3, applied before a storage opens.

1. **Its MySQL dialect on MariaDB.**  RelStorage parses the server version
   "10.11.19-MariaDB" as (10, 11, 19), so it believes it talks to MySQL
   >= 8.0.19 and emits MySQL-8-only SQL (``INSERT ... AS excluded ON
   DUPLICATE KEY UPDATE``, ``SELECT ... FOR SHARE NOWAIT``): the first
   commit fails with error 1064.  MariaDB speaks the MySQL 5.7 dialect (and
   still has ``@@tx_isolation``), so its version detector reports MySQL
   5.7.19 for a MariaDB server.  Upstream: "MariaDB 10.x is detected as
   MySQL >= 8.0.19 by MySQLVersionDetector._setup"; the fix there is to
   check for 'MariaDB' in ``SELECT version()`` before comparing version
   tuples.

2. **An outdated state served from the local cache.**  When RelStorage's
   MVCC index drops the record of a transaction no reader still needs, it
   removes, for each object changed again later, the object's cached
   states up to that transaction (``LocalClient.delitems``: "remove all
   cached values for OID that are older than TID").  For an object with a
   single cached state the C cache compares the other way round: it drops
   a *newer* state and keeps an *older* one.  When that older state is a
   "frozen" one (the state an object has had for a long time, served to any
   reader whose index has no entry for the object; every entry read back
   from the persistent cache file at start is frozen), a request already
   under way in another thread, whose index shared the record just
   dropped, no longer finds the object in its index and is served the
   frozen state: a state older than its own snapshot.  The sample site's
   comment count read 0 right after comments were acknowledged (two
   servers, one MariaDB, four processes of two threads each, about one run
   in fifty of ``tests/integration/test_two_servers.py``).  The fix removes
   a single state whose transaction is at or before the one given, as the
   docstring says, and leaves multiple states to RelStorage, whose
   comparison is right for them.  Upstream: ``SVCacheEntry::
   discarding_tids_before`` in ``relstorage/cache/c_cache.cpp`` should
   discard when ``this->_tid <= tid``.

``apply()`` is idempotent; ``zope.pipeline.zodb.storage.open_database`` calls
it
before any storage opens.
"""

#: The MySQL version whose SQL dialect MariaDB understands.
MARIADB_DIALECT = (5, 7, 19)


def is_mariadb(version_string):
    return 'mariadb' in (version_string or '').lower()


def apply():
    """Apply both fixes; return True if either was applied by this call."""
    try:
        # late: RelStorage loads when a storage opens, not for the
        # commands' --help
        from relstorage.adapters.mysql.schema import MySQLVersionDetector
        from relstorage.cache.local_client import LocalClient
    except ImportError:  # pragma: no cover - RelStorage is a dependency
        return False
    detector = patch_detector(MySQLVersionDetector)
    cache = patch_local_client(LocalClient)
    return detector or cache


def patch_detector(detector_class):
    if getattr(detector_class, '_zope_pipeline_mariadb', False):
        return False
    original_setup = detector_class._setup

    def _setup(self, cursor):
        original_setup(self, cursor)
        if is_mariadb(self._version) and \
                self._version_info > MARIADB_DIALECT:
            self._version_info = MARIADB_DIALECT
            self._major_version = MARIADB_DIALECT[0]

    detector_class._setup = _setup
    detector_class._zope_pipeline_mariadb = True
    return True


def discard_states_up_to(cache, oids_tids):
    """In RelStorage's C ``cache``, remove for each ``(oid, tid)`` the
    cached states of ``oid`` whose transaction is ``tid`` or older."""
    # late: RelStorage loads when a storage opens
    from relstorage._compat import iteroiditems
    from relstorage.cache.cache import MultipleValues
    for oid, tid in iteroiditems(oids_tids):
        entry = cache.peek(oid)  # no hit counted
        if entry is None:
            continue
        if isinstance(entry, MultipleValues):
            cache.delitems({oid: tid})  # right for several states
        elif entry.tid <= tid:
            del cache[oid]


def patch_local_client(local_client_class):
    """Make ``LocalClient.delitems`` do what its docstring says."""
    if getattr(local_client_class, '_zope_pipeline_delitems', False):
        return False

    def delitems(self, oids_tids):
        """For each OID/TID pair in the items, remove all cached values
        for OID that are not newer than TID (zope.pipeline.zodb.compat)."""
        discard_states_up_to(self._cache, oids_tids)

    local_client_class.delitems = delitems
    local_client_class._zope_pipeline_delitems = True
    return True
