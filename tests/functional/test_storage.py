"""storage and compat: the database of each process, created once however
many processes start together, reopened after fork, closed at shutdown;
RelStorage's MySQL dialect made right for MariaDB."""

import os
import signal
import threading
import time
import types

import pytest
import transaction
import ZODB
from relstorage.adapters.mysql.schema import MySQLVersionDetector
from ZODB.MappingStorage import MappingStorage
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.zodb import compat
from zope.pipeline.zodb import storage

from . import inner


@pytest.fixture(autouse=True)
def close_databases():
    yield
    storage.close_all()


def has_root(db, root_name='Application'):
    connection = db.open(transaction_manager=transaction.TransactionManager())
    try:
        return root_name in connection.root()
    finally:
        connection.close()


# -- bootstrap

def test_two_process_databases_racing_on_one_sqlite_file_create_root_once(
        tmp_path):
    config = inner.sqlite_config(tmp_path)
    made = []

    def factory():
        made.append(threading.get_ident())
        return storage.create_root_folder()

    databases = [storage.ProcessDatabase(config, 'Application', factory)
                 for _ in range(2)]
    start = threading.Barrier(len(databases))
    errors = []

    def open_database(database):
        start.wait(timeout=10)
        try:
            database.get()
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=open_database, args=(database,))
               for database in databases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert errors == []
        assert sorted(database.created_root for database in databases) == \
            [False, True]
        assert len(made) == 1
        assert all(has_root(database.get()) for database in databases)
    finally:
        for database in databases:
            database.close()


def test_bootstrap_looks_again_when_another_process_committed_the_root_first():
    db = ZODB.DB(MappingStorage())
    made = []

    def factory():
        made.append('ours')
        commit_root_elsewhere(db)
        return storage.create_root_folder()

    try:
        assert storage.bootstrap(db, 'Application', factory) is False
        assert made == ['ours']
        assert has_root(db)
    finally:
        db.close()


def commit_root_elsewhere(db):
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    try:
        manager.begin()
        connection.root()['Application'] = storage.create_root_folder()
        manager.commit()
    finally:
        connection.close()


def test_bootstrap_runs_populate_on_a_new_root_only():
    db = ZODB.DB(MappingStorage())
    populated = []
    try:
        assert storage.bootstrap(db, 'Application',
                                 storage.create_root_folder,
                                 populated.append) is True
        assert storage.bootstrap(db, 'Application',
                                 storage.create_root_folder,
                                 populated.append) is False
        assert len(populated) == 1
    finally:
        db.close()


def test_failed_bootstrap_closes_the_database_it_opened():
    def factory():
        raise RuntimeError('no root for you')

    database = storage.ProcessDatabase('', 'Application', factory)
    with pytest.raises(RuntimeError):
        database.get()
    assert database.db is None


# -- fork

def wait_for_child(pid, timeout=60):
    """Return the child's exit status; kill it if it takes too long."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail('the forked child did not finish in %d seconds' % timeout)


def child_opens_its_own(database, parent_db):
    """In the child: 0 if ``get`` opened a database of the child's own
    that sees the root the parent created."""
    db = database.get()
    own = db is not parent_db and database.pid == os.getpid()
    sees_root = has_root(db) and database.created_root is False
    database.close()
    return 0 if own and sees_root else 3


def test_forked_child_opens_a_database_of_its_own(tmp_path):
    config = inner.sqlite_config(tmp_path)
    database = storage.ProcessDatabase(config, 'Application',
                                       storage.create_root_folder)
    parent_db = database.get()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - measured in the parent only
        status = 2
        try:
            status = child_opens_its_own(database, parent_db)
        finally:
            os._exit(status)
    assert wait_for_child(pid) == 0
    # the parent keeps its own, still open
    assert database.get() is parent_db
    assert has_root(parent_db)
    database.close()


def test_closing_a_database_inherited_from_another_process_leaves_it_open():
    database = storage.ProcessDatabase('', 'Application',
                                       storage.create_root_folder)
    db = database.get()
    database.pid = -1  # as if this process were a child of its opener
    database.close()
    assert database.db is None
    assert has_root(db)  # still usable: not closed here
    db.close()


# -- process life

def test_database_for_shares_one_process_database_per_config_and_root_name():
    first = storage.database_for('', 'Application')
    assert storage.database_for('', 'Application') is first
    assert storage.database_for('', 'Other') is not first


def test_close_all_closes_every_database_of_the_process():
    database = storage.database_for('', 'Application')
    db = database.get()
    storage.close_all()
    assert database.db is None
    assert storage.database_for('', 'Application') is not database
    with pytest.raises(AttributeError):  # a closed DB has no pool left
        db.open()


def test_shutdown_uses_mod_wsgi_when_it_runs_us(monkeypatch):
    subscribed = []
    fake = types.SimpleNamespace(subscribe_shutdown=subscribed.append)
    monkeypatch.setitem(__import__('sys').modules, 'mod_wsgi', fake)
    called = []
    assert storage.register_shutdown(lambda: called.append(1)) == 'mod_wsgi'
    subscribed[0]('process_stopping', shutdown_reason='test')
    assert called == [1]


def test_shutdown_uses_atexit_elsewhere(monkeypatch):
    registered = []
    monkeypatch.setitem(__import__('sys').modules, 'mod_wsgi',
                        types.SimpleNamespace())
    monkeypatch.setattr(storage.atexit, 'register', registered.append)
    callback = object()
    assert storage.register_shutdown(callback) == 'atexit'
    assert registered == [callback]


def test_shutdown_is_registered_once_per_process_database(monkeypatch):
    registered = []
    monkeypatch.setattr(storage, 'register_shutdown', registered.append)
    database = storage.ProcessDatabase('', 'Application',
                                       storage.create_root_folder)
    database.get()
    database.close()
    database.get()
    assert registered == [database.close]


def test_resolve_callable_names_the_setting_it_could_not_import():
    assert storage.resolve_callable('', 'open_root.populate') is None
    assert storage.resolve_callable('os.path.join', 'x') is os.path.join
    with pytest.raises(ConfigurationError) as caught:
        storage.resolve_callable('os.path.no_such_thing', 'open_root.populate')
    assert "named by open_root.populate" in str(caught.value)


# -- compat: RelStorage on MariaDB

class FakeCursor:
    """Answers ``SELECT version()`` with a fixed version string."""

    def __init__(self, version):
        self.version = version
        self.executed = []

    def execute(self, statement):
        self.executed.append(statement)

    def fetchone(self):
        return (self.version,)


def detected(version):
    compat.apply()
    detector = MySQLVersionDetector()
    return detector, FakeCursor(version)


def test_compat_makes_relstorage_speak_the_mysql_5_7_dialect_to_mariadb():
    detector, cursor = detected('10.11.19-MariaDB-0+deb12u1')
    assert detector.get_version_info(cursor) == (5, 7, 19)
    assert detector.get_major_version(cursor) == 5
    assert detector.supports_nowait(cursor) is False
    assert detector.supports_transaction_isolation(cursor) is False
    assert detector.supports_good_stored_procs(cursor) is True
    assert detector.get_version(cursor) == '10.11.19-MariaDB-0+deb12u1'
    assert cursor.executed == ['SELECT version()']


def test_compat_leaves_mysql_versions_alone():
    detector, cursor = detected('8.0.36')
    assert detector.get_version_info(cursor) == (8, 0, 36)
    assert detector.supports_nowait(cursor) is True


def test_compat_leaves_an_old_mariadb_alone():
    detector, cursor = detected('5.5.68-MariaDB')
    assert detector.get_version_info(cursor) == (5, 5, 68)


def test_compat_patches_a_detector_class_once():
    class Detector:
        def _setup(self, cursor):
            self._version = cursor
            self._version_info = (10, 6, 1)
            self._major_version = 10

    assert compat.patch_detector(Detector) is True
    assert compat.patch_detector(Detector) is False
    detector = Detector()
    detector._setup('10.6.1-MariaDB')
    assert detector._version_info == compat.MARIADB_DIALECT
    compat.apply()
    assert compat.apply() is False  # RelStorage's is patched already


def test_database_inherited_from_another_process_is_replaced_not_closed(
        caplog):
    database = storage.ProcessDatabase('', 'Application',
                                       storage.create_root_folder)
    inherited = database.get()
    database.pid = -1  # as ``get`` sees it in a child after fork
    with caplog.at_level('INFO', logger='zope.pipeline.zodb.storage'):
        own = database.get()
    try:
        assert own is not inherited
        assert database.pid == os.getpid()
        assert has_root(inherited)  # the other process's is left open
        assert 'inherited a database opened by process -1' in caplog.text
    finally:
        inherited.close()
        database.close()


def test_fork_handler_gives_every_database_a_new_lock():
    database = storage.database_for('', 'Application')
    lock = database._lock
    storage._after_fork_in_child()
    assert database._lock is not lock
    assert database.get() is not None


def test_waiting_for_connections_stops_at_its_timeout_with_the_count_in_use():
    db = ZODB.DB(MappingStorage())
    connection = db.open()
    try:
        assert storage.wait_for_connections(db, timeout=0.05,
                                            interval=0.01) == 1
    finally:
        connection.close()
    assert storage.wait_for_connections(db, timeout=0.05) == 0
    db.close()


MEMORY_CONFIGS = {
    'mapping': ('<zodb main>\n  <mappingstorage/>\n</zodb>\n', True),
    'demo over a file': (
        '<zodb main>\n  <demostorage>\n    <filestorage base>\n'
        '      path $here/base.fs\n    </filestorage>\n'
        '  </demostorage>\n</zodb>\n', True),
    'demo with changes to a file': (
        '<zodb main>\n  <demostorage>\n    <mappingstorage base/>\n'
        '    <filestorage changes>\n      path $here/changes.fs\n'
        '    </filestorage>\n  </demostorage>\n</zodb>\n', False),
    'file': ('<zodb main>\n  <filestorage>\n    path $here/data.fs\n'
             '  </filestorage>\n</zodb>\n', False),
}


@pytest.mark.parametrize('kind', sorted(MEMORY_CONFIGS))
def test_a_storage_is_in_memory_when_nothing_reaches_a_file(tmp_path, kind):
    text, in_memory = MEMORY_CONFIGS[kind]
    path = tmp_path / 'zodb.conf'
    path.write_text(text.replace('$here', str(tmp_path)))
    section = storage.load_database_config(str(path)).database[0]
    assert storage.is_in_memory(section) is in_memory
    assert storage.is_in_memory(None) is True
