"""A commit that reaches a read-only MySQL server (issue 44): RelStorage
with ``replica-conf`` fails over to the replica when the primary refuses
connections, and a replica runs ``--read-only``.  Every write there fails
with MariaDB's 1290 ('... running with the --read-only option ...'):
while allocating an OID (a plain ``OperationalError``: it was a 500 with
a traceback in tests/integration/test_multi_host.py) or taking the commit
lock (``UnableToLockRowsToModifyError``, a conflict: it was retried at
once, four times in vain).  It is the database being unavailable for
writes until RelStorage goes back to the primary: one 503 with
Retry-After, one log line without a traceback, not retried, nothing
stored.

The errors are mysqlclient's and RelStorage's own, raised by ZODB's
MappingStorage behind the real ZODB connection at ``tpc_finish`` (where
RelStorage's MySQL procedure locks, moves the rows and commits; the
pooled connections' own ``tpc_vote`` cannot be replaced).
"""

import logging

import pytest
from conftest import need

from zope.pipeline.http.errors import UNAVAILABLE_MESSAGE
from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable

from . import inner

try:
    import MySQLdb
    from relstorage.adapters.interfaces import UnableToLockRowsToModifyError
except ImportError:  # pragma: no cover - the mysql extra is installed
    MySQLdb = None

#: MariaDB's error, word for word, on a server started with --read-only.
READ_ONLY = (1290, 'The MariaDB server is running with the --read-only '
                   'option so it cannot execute this statement')
#: MySQL's own for a server in super_read_only / read_only mode.
READ_ONLY_MODE = (1836, 'Running in read-only mode')


def lock_error_from(cause_args):
    """What RelStorage raises when taking its commit lock fails on the
    server (``reraise_commit_lock_error``: raised from the driver's)."""
    try:
        raise MySQLdb.OperationalError(*cause_args)
    except MySQLdb.OperationalError as cause:
        try:
            raise UnableToLockRowsToModifyError(
                'Acquiring a lock during commit failed: %s' % cause) \
                from cause
        except UnableToLockRowsToModifyError as error:
            return error


@pytest.fixture
def mysqlclient():
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')


@pytest.mark.parametrize('error, read_only', [
    (lambda: MySQLdb.OperationalError(*READ_ONLY), True),
    (lambda: MySQLdb.OperationalError(*READ_ONLY_MODE), True),
    (lambda: lock_error_from(READ_ONLY), True),
    # 1290 for another option (--secure-file-priv): not an outage.
    (lambda: MySQLdb.OperationalError(
        1290, 'The MariaDB server is running with the --secure-file-priv '
              'option so it cannot execute this statement'), False),
    (lambda: lock_error_from((1205, 'Lock wait timeout exceeded')), False),
    (lambda: MySQLdb.ProgrammingError(*READ_ONLY), False),
])
def test_which_errors_say_the_server_takes_no_writes(mysqlclient, error,
                                                     read_only):
    error = error()
    assert is_unavailable(error) is read_only
    if read_only:
        assert not is_transient(error)


@pytest.fixture
def app(make_testapp, tmp_path, mysqlclient):
    app = inner.build(make_testapp, tmp_path)
    app.get('/folder/doc/@@whoami')     # the database is open
    return app


@pytest.mark.parametrize('error', [
    lambda: MySQLdb.OperationalError(*READ_ONLY),
    lambda: lock_error_from(READ_ONLY),
], ids=['oid-allocation', 'commit-lock'])
def test_a_write_on_a_read_only_replica_is_one_503_not_retried(
        app, monkeypatch, caplog, error):
    db = inner.database()
    commits = []

    def tpc_finish(*args, **kw):
        commits.append(args)
        raise error()
    monkeypatch.setattr(db.storage, 'tpc_finish', tpc_finish)
    caplog.clear()
    caplog.set_level(logging.INFO)
    response = app.post('/folder/doc/@@touch', status=503)
    assert response.headers['Retry-After'] == '1'
    assert UNAVAILABLE_MESSAGE in response.text
    assert len(commits) == 1            # one attempt, no retry
    logged = [record for record in caplog.records
              if record.levelno >= logging.WARNING]
    assert len(logged) == 1, [record.getMessage() for record in logged]
    [record] = logged
    assert record.exc_info is None
    assert record.getMessage().startswith(
        'POST /folder/doc/@@touch: the database is read-only (')
    monkeypatch.undo()
    assert inner.read(lambda root: root['folder']['doc'].touched) == 0
    app.post('/folder/doc/@@touch', status=200)
