"""Maintenance of an ini's ZODB storages, online: packing them and
checking that every object reachable from the root loads (what
``zope-pipeline pack`` and ``zope-pipeline check`` run).

Both open the storages the ini's ``open_root.zodb_config`` describes,
beside the servers that use them: RelStorage packs while other processes
commit (it takes its commit lock only in short batches, and its pack lock
so that two packs never run at once), and a check only reads, in one
snapshot.  Both open the storages without the read and write timeouts of
``<mysql-with-timeouts>`` (``mysqltimeouts.without_timeouts``): their
statements (a pack's, counting the objects) legitimately run longer than
a request's.
"""

import collections
import contextlib
import importlib
import os
import time

from paste.deploy import appconfig
from ZODB.POSException import POSKeyError
from ZODB.serialize import referencesf
from ZODB.utils import get_pickle_metadata
from ZODB.utils import oid_repr
from ZODB.utils import z64

from zope.pipeline.zodb import compat
from zope.pipeline.zodb.mysqltimeouts import without_timeouts
from zope.pipeline.zodb.storage import load_database_config

__all__ = (
    'opened_storages',
    'pack',
    'check',
)

#: Seconds in a day (``--days``).
DAY = 86400
#: Problems of each kind a check lists (it counts them all).
LISTED = 20


def zodb_config_path(ini, name='main'):
    """The ZConfig file the ini's ``open_root.zodb_config`` names."""
    if not os.path.exists(ini):
        raise SystemExit('The ini file %s does not exist.' % ini)
    settings = appconfig('config:' + os.path.abspath(ini), name=name)
    path = settings.get('open_root.zodb_config')
    if not path:
        raise SystemExit('%s sets no open_root.zodb_config: its database is '
                         'in memory, nothing to maintain.' % ini)
    if not os.path.isfile(path):
        raise SystemExit('The ZODB configuration file %s '
                         '(open_root.zodb_config in %s) does not exist.'
                         % (path, ini))
    return path


@contextlib.contextmanager
def opened_storages(config_path, read_only=False):
    """Open every database's storage of a ZConfig file, without the
    statement timeouts of ``<mysql-with-timeouts>``; yield a list of
    (database name, storage); close them all afterwards."""
    compat.apply()
    config = load_database_config(config_path)
    without_timeouts(config)
    opened = []
    try:
        for database in config.database:
            storage_config = database.config.storage
            if read_only:
                storage_config.config.read_only = True
            opened.append((database.config.database_name or
                           database.name or 'main', storage_config.open()))
        yield opened
    finally:
        for _, storage in opened:
            storage.close()


def pack(storage, days=0, now=time.time):
    """Pack ``storage``, keeping ``days`` of history; return (objects
    before, objects after, seconds it took).  (A history-free storage
    keeps no history: its pack removes the objects no longer reachable
    from the root.)"""
    before = len(storage)
    started = time.monotonic()
    storage.pack(now() - days * DAY, referencesf)
    took = time.monotonic() - started
    sync = getattr(storage, 'sync', None)
    if sync is not None:
        sync()
    return before, len(storage), took


#: What a check found: object counts and the problems, each a tuple.
CheckReport = collections.namedtuple(
    'CheckReport', 'reachable stored dangling missing_classes unreadable')


def check(storage, importable=None):
    """Load every object reachable from the root (oid 0), in one snapshot;
    return a ``CheckReport``: the objects reached, the objects stored, and
    the problems: ``dangling`` (oid, referenced from) of references to
    objects that do not exist, ``missing_classes`` (oid, module.class) of
    objects whose class cannot be imported, ``unreadable`` (oid, error) of
    records whose pickle cannot be read."""
    importable = importable or ClassImports()
    dangling, missing, unreadable = [], [], []
    seen = {z64}
    queue = collections.deque([(z64, None)])
    while queue:
        oid, referrer = queue.popleft()
        try:
            data, _serial = storage.load(oid)
        except POSKeyError:
            dangling.append((oid_repr(oid), oid_repr(referrer)))
            continue
        try:
            module, name = get_pickle_metadata(data)
            references = referencesf(data)
        except Exception as error:
            unreadable.append((oid_repr(oid), '%s: %s'
                               % (type(error).__name__, error)))
            continue
        if not importable(module, name):
            missing.append((oid_repr(oid), '%s.%s' % (module, name)))
        for reference in references:
            if reference not in seen:
                seen.add(reference)
                queue.append((reference, oid))
    return CheckReport(len(seen) - len(dangling), len(storage), dangling,
                       missing, unreadable)


class ClassImports:
    """Whether ``module.name`` can be imported, remembered per class."""

    def __init__(self):
        self.known = {}

    def __call__(self, module, name):
        key = (module, name)
        if key not in self.known:
            self.known[key] = self.find(module, name)
        return self.known[key]

    @staticmethod
    def find(module, name):
        try:
            found = importlib.import_module(module)
        except ImportError:
            return False
        for part in name.split('.'):
            found = getattr(found, part, None)
            if found is None:
                return False
        return True
