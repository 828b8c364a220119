"""A database whose storage is full: one 503 that says so, with
Retry-After, one log line, never retried (issue 32, item 4).

The errors are the real ones: mysqlclient's ``OperationalError`` 1114
('The table ... is full') and 1021, RelStorage's
``UnableToAcquireCommitLockError`` raised from it (what its MySQL commit
procedure raises), SQLite's own 'database or disk is full' from a database
that reached its ``max_page_count``, ``OSError(ENOSPC)`` of a blob file.
The storage is ZODB's MappingStorage behind the real ZODB connection, its
``tpc_finish`` raising them (where RelStorage's MySQL procedure locks,
moves the rows and commits).  tests/integration/test_storage_full.py
fills a real disk under a private MariaDB.
"""

import errno
import logging
import sqlite3

import pytest
from conftest import need

from zope.pipeline.http.errors import STORAGE_FULL_MESSAGE
from zope.pipeline.http.errors import is_storage_full
from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.http.errors import is_unreachable

from . import inner

try:
    import MySQLdb
    from relstorage.adapters.interfaces import UnableToAcquireCommitLockError
except ImportError:  # pragma: no cover - the mysql extra is installed
    MySQLdb = None

TABLE_FULL = (1114, "The table 'object_state' is full")


def sqlite_full_error():
    """The error SQLite raises when a database reaches its size limit."""
    connection = sqlite3.connect(':memory:')
    try:
        connection.execute('PRAGMA max_page_count = 3')
        connection.execute('CREATE TABLE filler (b BLOB)')
        while True:
            connection.execute('INSERT INTO filler VALUES (zeroblob(4000))')
    except sqlite3.OperationalError as error:
        return error
    finally:
        connection.close()


def sqlite_locked_error():
    """SQLite's 'database is locked': a busy database, not a full one."""
    import tempfile
    with tempfile.TemporaryDirectory() as directory:
        path = directory + '/locked.sqlite3'
        holder = sqlite3.connect(path, isolation_level=None)
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            holder.execute('CREATE TABLE t (x)')
            holder.execute('BEGIN EXCLUSIVE')
            other.execute('SELECT * FROM t')
        except sqlite3.OperationalError as error:
            return error
        finally:
            holder.close()
            other.close()


def commit_lock_error_from(cause_args):
    """What RelStorage raises when its MySQL commit procedure fails
    (``reraise_commit_lock_error``: raised from the driver's error)."""
    try:
        raise MySQLdb.OperationalError(*cause_args)
    except MySQLdb.OperationalError as cause:
        try:
            raise UnableToAcquireCommitLockError(
                'Acquiring a lock during commit failed: %s' % cause) \
                from cause
        except UnableToAcquireCommitLockError as error:
            return error


@pytest.fixture
def mysqlclient():
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')


def test_sqlite_full_error_is_the_real_one():
    error = sqlite_full_error()
    assert str(error) == 'database or disk is full'
    assert error.sqlite_errorcode == sqlite3.SQLITE_FULL


@pytest.mark.parametrize('error, full', [
    (lambda: MySQLdb.OperationalError(*TABLE_FULL), True),
    (lambda: MySQLdb.OperationalError(1021, 'Disk full (/var/tmp); '
                                            'waiting for someone to free '
                                            'some space...'), True),
    (lambda: commit_lock_error_from(TABLE_FULL), True),
    (sqlite_full_error, True),
    (lambda: OSError(errno.ENOSPC, 'No space left on device'), True),
    (lambda: OSError(errno.EDQUOT, 'Disk quota exceeded'), True),
    (lambda: commit_lock_error_from((1213, 'Deadlock found')), False),
    (lambda: MySQLdb.OperationalError(2013, 'Lost connection'), False),
    (lambda: MySQLdb.ProgrammingError(1114, 'not an OperationalError'),
     False),
    (sqlite_locked_error, False),
    (lambda: OSError(errno.ENOENT, 'No such file or directory'), False),
    (lambda: UnableToAcquireCommitLockError('lock wait timeout'), False),
    (lambda: RuntimeError('boom'), False),
])
def test_which_errors_say_the_storage_is_full(mysqlclient, error, full):
    error = error()
    assert is_storage_full(error) is full
    if full:
        assert is_unavailable(error) and not is_unreachable(error)
        assert not is_transient(error)


@pytest.fixture
def app(make_testapp, tmp_path, mysqlclient):
    app = inner.build(make_testapp, tmp_path)
    app.get('/folder/doc/@@whoami')     # the database is open
    return app


def failing_commit(error, calls):
    def tpc_finish(*args, **kw):
        calls.append(args)
        raise error()
    return tpc_finish


@pytest.mark.parametrize('error', [
    lambda: commit_lock_error_from(TABLE_FULL),
    sqlite_full_error,
    lambda: OSError(errno.ENOSPC, 'No space left on device'),
], ids=['mysql-1114', 'sqlite-full', 'blob-enospc'])
def test_full_storage_at_commit_is_one_503_one_log_line_no_retry(
        app, monkeypatch, caplog, error):
    db = inner.database()
    commits = []
    monkeypatch.setattr(db.storage, 'tpc_finish',
                        failing_commit(error, commits))
    caplog.clear()
    caplog.set_level(logging.INFO)
    response = app.post('/folder/doc/@@touch', status=503)
    assert response.headers['Retry-After'] == '1'
    assert STORAGE_FULL_MESSAGE in response.text
    assert 'Traceback' not in response.text
    assert len(commits) == 1            # one attempt, no retry
    logged = [record for record in caplog.records
              if record.levelno >= logging.WARNING]
    assert len(logged) == 1, [record.getMessage() for record in logged]
    [record] = logged
    assert record.name == 'zope.pipeline.error'
    assert record.exc_info is None
    assert record.getMessage().startswith(
        'POST /folder/doc/@@touch: the database storage is full (')
    assert record.getMessage().endswith('); answered 503')
    monkeypatch.undo()
    assert inner.read(lambda root: root['folder']['doc'].touched) == 0
    app.post('/folder/doc/@@touch', status=200)


def test_other_commit_errors_keep_the_second_phase_critical_line(
        app, monkeypatch, caplog):
    monkeypatch.setattr(inner.database().storage, 'tpc_finish',
                        failing_commit(lambda: MySQLdb.OperationalError(
                            1054, "Unknown column 'x'"), []))
    caplog.clear()
    app.post('/folder/doc/@@touch', status=500)
    assert [record.name.split('.')[0] for record in caplog.records
            if record.levelno == logging.CRITICAL] == ['txn']


def test_full_storage_when_the_transaction_begins_is_503_from_retry(
        app, monkeypatch, caplog):
    # before handle_error (open_root): the retry stage answers, once
    db = inner.database()
    calls = []
    monkeypatch.setattr(db.storage, 'lastTransaction', failing_commit(
        lambda: MySQLdb.OperationalError(*TABLE_FULL), calls))
    caplog.clear()
    response = app.get('/folder/doc/@@whoami', status=503)
    assert STORAGE_FULL_MESSAGE in response.text
    assert len(calls) == 1
    assert [record.getMessage().split(':')[0] for record in caplog.records
            if record.levelno >= logging.WARNING] == \
        ['GET /folder/doc/@@whoami']


def test_the_second_phase_filter_lets_every_other_record_through():
    from zope.pipeline.http.errors import ReportedSecondPhaseFailure
    keep = ReportedSecondPhaseFailure().filter

    def record(level, message):
        return logging.LogRecord('txn.1', level, __file__, 1, message, (),
                                 None)

    second_phase = ('A storage error occurred during the second phase of '
                    'the two-phase commit.  Resources may be in an '
                    'inconsistent state.')
    assert keep(record(logging.ERROR, second_phase))
    assert keep(record(logging.CRITICAL, 'Something else'))
    assert keep(record(logging.CRITICAL, second_phase))  # nothing handled
    try:
        raise OSError(errno.ENOSPC, 'No space left on device')
    except OSError:
        assert not keep(record(logging.CRITICAL, second_phase))
