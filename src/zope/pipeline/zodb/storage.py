"""The ZODB database of this process: opened after fork, closed at exit.

One ``ProcessDatabase`` per ZConfig file and process.  It opens lazily, on
first use, in the process that uses it (a process forked after the open
reopens its own), creates the root application when the database has none
(safely when several processes start at once), and closes at shutdown
(``mod_wsgi.subscribe_shutdown`` under mod_wsgi, ``atexit`` otherwise) so
RelStorage writes its persistent cache.  A database that cannot be opened
(its MySQL server is down) is not remembered: the next use tries again.
"""

import atexit
import contextlib
import fcntl
import io
import logging
import os
import threading
import time

import transaction
import ZConfig
import ZODB
import ZODB.config
from ZODB.MappingStorage import MappingStorage
from ZODB.POSException import ConflictError
from zope.configuration.exceptions import ConfigurationError
from zope.dottedname.resolve import resolve

from zope.pipeline.http.errors import describe_error
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.http.errors import report_outages_once
from zope.pipeline.zodb import compat
from zope.pipeline.zodb import responsecache

logger = logging.getLogger('zope.pipeline.zodb.storage')

#: The ProcessDatabase for each (config path, root name) in this process.
_databases = {}
_databases_lock = threading.Lock()


def create_root_folder():
    """The default root application: a folder that is a site."""
    # late: only to create a root (pack and check import this module)
    from zope.site.folder import rootFolder
    from zope.site.site import LocalSiteManager
    root = rootFolder()
    root.setSiteManager(LocalSiteManager(root))
    return root


def bootstrap(db, root_name, factory, populate=None, attempts=10):
    """Create ``root[root_name]`` unless it exists; exactly one process wins.

    Returns True when this call created the root.
    """
    for _ in range(attempts):
        manager = transaction.TransactionManager(explicit=True)
        connection = db.open(transaction_manager=manager)
        try:
            manager.begin()
            root = connection.root()
            if root_name in root:
                manager.abort()
                return False
            application = factory()
            root[root_name] = application
            if populate is not None:
                populate(application)
            manager.get().note('zope.pipeline: bootstrap %s' % root_name)
            manager.commit()
            logger.info('Created the root application %r', root_name)
            return True
        except ConflictError:
            manager.abort()
            logger.info('Another process is creating the root application; '
                        'looking again')
        finally:
            connection.close()
    raise RuntimeError('Could not create the root application %r'
                       % root_name)  # pragma: no cover - needs a live race


def check_config(config_path):
    """Fail, naming the setting, unless ``config_path`` is '' or a file."""
    if config_path and not os.path.isfile(config_path):
        raise ConfigurationError(
            'The ZODB configuration file %s (open_root.zodb_config) does not '
            'exist.' % os.path.abspath(config_path))


#: ZConfig storage sections that keep everything in memory.
MEMORY_STORAGES = ('mappingstorage',)


def is_in_memory(section):
    """Whether a parsed ``<zodb>`` section (None: no ZConfig file at all)
    keeps its data in memory: a mapping storage, or a demo storage whose
    changes go to memory."""
    if section is None:
        return True
    return storage_in_memory(section.config.storage)


def storage_in_memory(factory):
    kind = factory.config.getSectionType()
    if kind == 'demostorage':
        changes = [child for child in factory.config.factories
                   if child.name == 'changes']
        return not changes or storage_in_memory(changes[0])
    return kind in MEMORY_STORAGES


def open_database(config_path):
    """Open the DB a ZConfig file describes; '' means an in-memory DB.

    Its connections are ZODB's plain ``Connection``; ``ProcessDatabase``
    makes them record what they load when a response cache needs it
    (``responsecache.install``).
    """
    if not config_path:
        db = ZODB.DB(MappingStorage(), database_name='main')
    else:
        check_config(config_path)
        compat.apply()
        report_outages_once()
        db = ZODB.config.databaseFromConfig(
            load_database_config(config_path).database)
    return db


def load_database_config(config_path):
    """Parse a ZConfig database file; ``$here`` in it is its directory.

    (As ``%(here)s`` in a paste.deploy ini: data directories can be given
    relative to the configuration, e.g. ``data-dir $here/../var``.)
    """
    with open(config_path) as config_file:
        text = config_file.read()
    here = os.path.dirname(os.path.abspath(config_path))
    defined = '%%define here %s\n%s' % (here.replace('$', '$$'), text)
    config, _ = ZConfig.loadConfigFile(
        ZODB.config.getDbSchema(), io.StringIO(defined),
        url='file://' + os.path.abspath(config_path))
    return config


@contextlib.contextmanager
def first_open_lock(config_path):
    """Hold a lock, shared by every process of this machine, for one config.

    The first open of a new database is not safe to run twice at once:
    RelStorage's SQLite adapter creates its directory and schema without
    looking again, and ``ZODB.DB`` creates the root mapping, so two
    processes starting together fail with 'File exists', 'table already
    exists' or a ConflictError.  Opening (and bootstrapping) under this
    lock makes the second process find a complete database.

    The lock is the ZConfig file itself (``flock`` on a read-only
    descriptor): every process that opens the database can read it, and
    no lock file is made in a shared directory such as /tmp, where another
    user could prepare it.
    """
    if not config_path:
        yield
        return
    handle = open_lock_file(config_path)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def open_lock_file(path):
    """A read-only descriptor of ``path`` (an existing file) to flock."""
    return os.open(path, os.O_RDONLY | getattr(os, 'O_CLOEXEC', 0))


class ProcessDatabase:
    """The database of one ZConfig file, for the current process."""

    def __init__(self, config_path, root_name, factory, populate=None):
        check_config(config_path)
        self.config_path = config_path
        self.root_name = root_name
        self.factory = factory
        self.populate = populate
        self.db = None
        self.pid = None
        #: Whether its connections record what they load (``record()``).
        self.recording = False
        #: Whether this process created the root application (bootstrap).
        self.created_root = False
        self._lock = threading.Lock()
        self._shutdown_registered = False
        #: Whether it was closed (at the process's shutdown): the
        #: readiness answer never opens it again.
        self.closed = False

    def get(self):
        db = self.db
        if db is not None and self.pid == os.getpid():
            return db
        with self._lock:
            if self.db is None or self.pid != os.getpid():
                self._open()
        return self.db

    def is_open(self):
        """Whether this process has it open."""
        return self.db is not None and self.pid == os.getpid()

    def record(self):
        """Make its connections record what they load, for the response
        cache (``responsecache.install``): from its opening on, or from
        now when it is open already."""
        with self._lock:
            self.recording = True
            if self.db is not None and self.pid == os.getpid():
                responsecache.install(self.db)

    def open_at_start(self):
        """Open the database now, at the start of a process; return whether
        it is open.

        When its server cannot be reached (``errors.is_unavailable``), say
        so in one log line and leave it to the first request, which tries
        again (and is answered 503 while it cannot): a WSGI script that
        raised here would be imported again, and fail with a 500, at
        every request until the server is back.  Other errors propagate.
        """
        try:
            self.get()
        except Exception as error:
            if not is_unavailable(error):
                raise
            logger.warning('Process %s could not open the database of %s '
                           'at its start (%s); its requests will try again',
                           os.getpid(), self.config_path or 'memory',
                           describe_error(error))
            return False
        return True

    def _open(self):
        if self.db is not None:
            logger.info('Process %s inherited a database opened by process '
                        '%s: opening its own', os.getpid(), self.pid)
            self.db = None
        with first_open_lock(self.config_path):
            db = open_database(self.config_path)
            if self.recording:
                responsecache.install(db)
            try:
                self.created_root = bootstrap(db, self.root_name,
                                              self.factory, self.populate)
            except BaseException:
                db.close()
                raise
        self.db, self.pid = db, os.getpid()
        if not self._shutdown_registered:
            register_shutdown(self.close)
            self._shutdown_registered = True

    def close(self):
        with self._lock:
            self.closed = True
            db, self.db = self.db, None
            if db is not None and self.pid == os.getpid():
                wait_for_connections(db)
                db.close()
                logger.info('Closed the database of process %s', self.pid)

    def forget_after_fork(self):
        """In a child after fork: the parent's DB is not ours to use."""
        self._lock = threading.Lock()


#: How long closing a database waits for requests in flight to give their
#: connections back (a stopping mod_wsgi daemon process has 3 seconds in
#: all; DB.close() would abort their transactions).
CLOSE_WAIT = 2.5


def wait_for_connections(db, timeout=CLOSE_WAIT, interval=0.05):
    """Wait (at most ``timeout`` seconds) until no connection of ``db`` is
    in use; return how many still are."""
    deadline = time.monotonic() + timeout
    while True:
        in_use = len(db.pool.all) - len(db.pool.available)
        if in_use <= 0 or time.monotonic() >= deadline:
            return max(in_use, 0)
        time.sleep(interval)


def register_shutdown(callback):
    """Run ``callback`` at process shutdown (mod_wsgi's hook, or atexit)."""
    try:
        import mod_wsgi  # late: optional, and a server only inside mod_wsgi
        subscribe = mod_wsgi.subscribe_shutdown
    except (ImportError, AttributeError):
        atexit.register(callback)
        return 'atexit'
    subscribe(lambda event, **details: callback())
    return 'mod_wsgi'


def database_for(config_path, root_name='Application',
                 factory=create_root_folder, populate=None):
    """Return the shared ProcessDatabase for this config and root name."""
    key = (config_path, root_name)
    with _databases_lock:
        database = _databases.get(key)
        if database is None:
            database = _databases[key] = ProcessDatabase(
                config_path, root_name, factory, populate)
        return database


def process_databases():
    """Every database ``database_for`` made in this process."""
    with _databases_lock:
        return list(_databases.values())


def close_all():
    """Close every database of this process (tests, shutdown)."""
    with _databases_lock:
        databases = list(_databases.values())
        _databases.clear()
    for database in databases:
        database.close()


def resolve_callable(dotted, setting):
    if not dotted:
        return None
    try:
        return resolve(dotted)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError('Cannot import %r named by %s: %s'
                                 % (dotted, setting, exc)) from None


def _after_fork_in_child():
    for database in list(_databases.values()):
        database.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
