"""A database that cannot be reached: 503 with Retry-After at once, a short
page without a traceback, one log line, never retried, and the next request
served as soon as the database answers again.

The storage of these tests is ZODB's MappingStorage behind the real ZODB
connection and MVCC adapter; the methods RelStorage would run SQL in
(``lastTransaction`` when a transaction begins, ``loadBefore`` for a load,
``tpc_finish`` at commit, where RelStorage's MySQL procedure locks, moves
the rows and commits) raise what mysqlclient and RelStorage raise when
the MySQL server is gone.  One test opens real RelStorage on a port where
no MySQL server listens.
"""

import logging
import socket
import xmlrpc.client

import pytest
from conftest import need
from zope.publisher.interfaces import Retry

from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.zodb import storage

from . import inner

try:
    import MySQLdb
    from relstorage.adapters.interfaces import UnableToAcquireCommitLockError
except ImportError:  # pragma: no cover - the mysql extra is installed
    MySQLdb = None

REFUSED = (2002, "Can't connect to server on '127.0.0.1' (115)")
LOST = (2013, 'Lost connection to server during query')


@pytest.fixture
def app(make_testapp, tmp_path):
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    app = inner.build(make_testapp, tmp_path)
    app.get('/folder/doc/@@whoami')     # the database is open
    return app


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def outage_records(caplog, logger='zope.pipeline.error'):
    return [record for record in caplog.records
            if record.name == logger and record.levelno >= logging.ERROR]


def in_use(db):
    return len(db.pool.all) - len(db.pool.available)


def failing(error_args, calls=None, error=None):
    """A storage method raising mysqlclient's OperationalError."""
    def method(*args, **kw):
        if calls is not None:
            calls.append(args)
        raise error() if error else MySQLdb.OperationalError(*error_args)
    return method


def lock_error_from_lost_connection():
    """What RelStorage raises when the connection is lost while its MySQL
    procedure locks, moves and commits (``reraise_commit_lock_error``)."""
    try:
        raise MySQLdb.OperationalError(*LOST)
    except MySQLdb.OperationalError as lost:
        try:
            raise UnableToAcquireCommitLockError(
                'Acquiring a lock during commit failed: %s' % lost) from lost
        except UnableToAcquireCommitLockError as error:
            return error


def assert_unavailable_page(response, retry_after='1'):
    assert response.status_int == 503
    assert response.headers['Retry-After'] == retry_after
    assert 'The database is unavailable' in response.text
    assert 'Traceback' not in response.text
    assert 'OperationalError' not in response.text


def test_refused_connection_when_the_transaction_begins_is_503_at_once(
        app, monkeypatch, caplog):
    db = inner.database()
    monkeypatch.setattr(db.storage, 'lastTransaction', failing(REFUSED))
    caplog.clear()
    inner.reset()
    response = app.get('/folder/doc/@@whoami', status=503)
    assert_unavailable_page(response)
    assert inner.view_records('whoami') == []
    [record] = outage_records(caplog)
    assert record.exc_info is None
    assert record.getMessage() == (
        "GET /folder/doc/@@whoami: the database is unavailable "
        "(OperationalError: (2002, \"Can't connect to server on "
        "'127.0.0.1' (115)\")); answered 503")
    # not retried, and the connection went back to the pool
    assert not [record for record in caplog.records
                if record.name == 'zope.pipeline.retry']
    assert in_use(db) == 0


def test_view_is_not_called_while_the_database_is_unreachable(
        app, monkeypatch):
    inner.reset()
    monkeypatch.setattr(inner.database().storage, 'lastTransaction',
                        failing(REFUSED))
    app.post('/folder/doc/@@fail?kind=conflict', status=503)
    assert inner.view_records('fail') == []


def test_next_request_is_served_once_the_database_answers_again(
        app, monkeypatch):
    db = inner.database()
    original = db.storage.lastTransaction
    monkeypatch.setattr(db.storage, 'lastTransaction', failing(REFUSED))
    for _ in range(3):
        app.get('/folder/doc/@@whoami', status=503)
    monkeypatch.setattr(db.storage, 'lastTransaction', original)
    app.post('/folder/doc/@@touch', status=200)
    assert inner.read(lambda root: root['folder']['doc'].touched) == 1
    assert in_use(db) == 0


def test_connection_lost_while_loading_an_object_is_503(app, monkeypatch,
                                                        caplog):
    db = inner.database()
    db.cacheMinimize()      # the next request loads the root again
    monkeypatch.setattr(db.storage, 'loadBefore', failing(LOST))
    caplog.clear()
    assert_unavailable_page(app.get('/folder/doc/@@whoami', status=503))
    [record] = outage_records(caplog)
    assert 'Lost connection to server during query' in record.getMessage()
    assert in_use(db) == 0


def assert_outcome_unknown_page(response):
    """Issue 45: the database stopped answering during the commit, so the
    change may be stored: no Retry-After (a client must not send it again
    blindly), and a page that says so."""
    assert response.status_int == 503
    assert 'Retry-After' not in response.headers
    assert 'your change was being saved, so the change may have been ' \
        'saved' in response.text
    assert 'Reload the page' in response.text
    assert 'Traceback' not in response.text
    assert 'OperationalError' not in response.text


def test_connection_lost_when_the_commit_finishes_says_it_may_be_stored(
        app, monkeypatch, caplog):
    db = inner.database()
    commits = []
    monkeypatch.setattr(db.storage, 'tpc_finish', failing(LOST, commits))
    caplog.clear()
    assert_outcome_unknown_page(app.post('/folder/doc/@@touch', status=503))
    assert len(commits) == 1    # one attempt: a write is never repeated
    [record] = outage_records(caplog)
    assert record.exc_info is None
    assert record.getMessage() == (
        "POST /folder/doc/@@touch: the database is unavailable "
        "(OperationalError: (2013, 'Lost connection to server during "
        "query')); answered 503 (the commit was cut off: the change may be "
        "stored)")
    monkeypatch.undo()
    assert in_use(db) == 0
    app.post('/folder/doc/@@touch', status=200)


def fail_vote(monkeypatch, method):
    """The storage's tpc_vote replaced by ``method`` (ZODB's MVCC adapter
    of each connection keeps the storage's own once it used it)."""
    db = inner.database()
    monkeypatch.setattr(db.storage, 'tpc_vote', method)
    for connection in db.pool.all:
        monkeypatch.delitem(connection._storage.__dict__, 'tpc_vote',
                            raising=False)


def test_connection_lost_when_the_commit_votes_says_it_may_be_stored(
        app, monkeypatch):
    votes = []
    fail_vote(monkeypatch, failing(LOST, votes))
    assert_outcome_unknown_page(app.post('/folder/doc/@@touch', status=503))
    assert len(votes) == 1


def test_connection_lost_before_the_vote_is_an_outage_with_retry_after(
        app, monkeypatch):
    # tpc_begin: nothing can have been stored; the client may send again.
    monkeypatch.setattr(inner.database().storage, 'tpc_begin',
                        failing(LOST))
    assert_unavailable_page(app.post('/folder/doc/@@touch', status=503))
    monkeypatch.undo()
    assert inner.read(lambda root: root['folder']['doc'].touched) == 0


def test_commit_lock_error_caused_by_a_lost_connection_is_not_retried(
        app, monkeypatch):
    # RelStorage's MySQL procedure locks, moves the rows and commits in one
    # call: the commit may have happened, so a new attempt could store the
    # write twice, and the client is told it may be stored.
    db = inner.database()
    commits = []
    monkeypatch.setattr(db.storage, 'tpc_finish', failing(
        None, commits, error=lock_error_from_lost_connection))
    assert_outcome_unknown_page(app.post('/folder/doc/@@touch', status=503))
    assert len(commits) == 1


def test_a_full_storage_at_the_vote_refused_the_change(app, monkeypatch):
    # MySQL refused the rows (1114): nothing stored, an ordinary 503.
    fail_vote(monkeypatch, failing((1114, "The table 'object_state' is "
                                       "full")))
    response = app.post('/folder/doc/@@touch', status=503)
    assert response.headers['Retry-After'] == '1'
    assert 'storage is full' in response.text


def test_commit_lock_timeout_without_a_lost_connection_is_still_retried(
        make_testapp, tmp_path, monkeypatch):
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    app = inner.build(make_testapp, tmp_path, retry__attempts='3')
    app.get('/folder/doc/@@whoami')
    commits = []
    monkeypatch.setattr(inner.database().storage, 'tpc_finish', failing(
        None, commits,
        error=lambda: UnableToAcquireCommitLockError('timeout')))
    response = app.post('/folder/doc/@@touch', status=503)
    assert len(commits) == 3
    assert 'busy' in response.text


def test_xmlrpc_request_gets_the_503_too_not_a_fault(app, monkeypatch):
    # a fault would say the call was made; the client should try again
    monkeypatch.setattr(inner.database().storage, 'lastTransaction',
                        failing(REFUSED))
    body = xmlrpc.client.dumps((1, 2), 'adding')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'}, status=503)
    assert_unavailable_page(response)


def test_other_database_errors_are_still_500(app, monkeypatch, caplog):
    monkeypatch.setattr(inner.database().storage, 'tpc_finish',
                        failing((1054, "Unknown column 'x'")))
    caplog.clear()
    response = app.post('/folder/doc/@@touch', status=500)
    assert 'Retry-After' not in response.headers
    [record] = outage_records(caplog)
    assert record.exc_info is not None      # a real fault: traceback logged


def test_retry_after_of_the_unavailable_page_is_the_retry_setting(
        make_testapp, tmp_path, monkeypatch):
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    app = inner.build(make_testapp, tmp_path, retry__retry_after='9')
    app.get('/folder/doc/@@whoami')
    monkeypatch.setattr(inner.database().storage, 'lastTransaction',
                        failing(REFUSED))
    assert_unavailable_page(app.get('/folder/doc/@@whoami', status=503),
                            retry_after='9')


def test_database_that_cannot_be_opened_is_503_from_retry(
        make_testapp, tmp_path, caplog):
    # Real RelStorage and mysqlclient, on a port where nothing listens: the
    # process's database cannot be opened, in open_root, before
    # handle_error; the retry stage answers, and the next request tries to
    # open the database again.
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    config = unreachable_config(tmp_path)
    app = inner.build(make_testapp, tmp_path, open_root__zodb_config=config,
                      retry__retry_after='4')
    caplog.clear()
    for _ in range(2):
        response = app.get('/folder/doc/@@whoami', status=503)
        assert response.headers['Retry-After'] == '4'
        assert response.text == ('The database is unavailable; please try '
                                 'again in a moment.')
    records = outage_records(caplog, 'zope.pipeline.retry')
    assert len(records) == 2
    assert all(record.exc_info is None for record in records)
    assert 'GET /folder/doc/@@whoami: the database is unavailable ' \
        '(OperationalError: (200' in records[0].getMessage()
    assert storage.database_for(config, 'Application').db is None


@pytest.mark.parametrize('error, unavailable', [
    (lambda: MySQLdb.OperationalError(*REFUSED), True),
    (lambda: MySQLdb.OperationalError(2003, "Can't connect"), True),
    (lambda: MySQLdb.OperationalError(2006, 'Server has gone away'), True),
    (lambda: MySQLdb.OperationalError(*LOST), True),
    (lambda: MySQLdb.OperationalError(1053, 'Server shutdown'), True),
    (lambda: MySQLdb.OperationalError(1927, 'Connection was killed'), True),
    (lambda: MySQLdb.OperationalError(1317, 'Query execution was '
                                            'interrupted'), True),
    (lambda: MySQLdb.InterfaceError(0, ''), True),
    (lock_error_from_lost_connection, True),
    (lambda: MySQLdb.OperationalError(1213, 'Deadlock found'), False),
    (lambda: MySQLdb.OperationalError(), False),
    (lambda: MySQLdb.ProgrammingError(2006, 'not an OperationalError'),
     False),
    (lambda: UnableToAcquireCommitLockError('lock wait timeout'), False),
    (lambda: RuntimeError('boom'), False),
])
def test_which_errors_say_the_database_is_unavailable(error, unavailable):
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    error = error()
    assert is_unavailable(error) is unavailable
    if unavailable:
        assert not is_transient(error)


def test_a_long_chain_of_causes_is_not_followed_to_its_end():
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    error = MySQLdb.OperationalError(*LOST)
    for _ in range(10):
        wrapper = Retry()
        wrapper.__cause__ = error
        error = wrapper
    assert not is_unavailable(error)
    assert is_transient(error)


# -- opening the database at the start of a process

def unreachable_config(tmp_path):
    """A RelStorage ZConfig file naming a port where no MySQL listens."""
    config = tmp_path / 'zodb-mysql.conf'
    config.write_text(
        '%%import relstorage\n<zodb main>\n  <relstorage>\n'
        '    keep-history false\n    <mysql>\n      driver MySQLdb\n'
        '      host 127.0.0.1\n      port %d\n      db zp\n      user zp\n'
        '      passwd zp\n      connect_timeout 2\n    </mysql>\n'
        '  </relstorage>\n</zodb>\n' % free_port())
    return str(config)


def test_process_starting_while_the_database_is_unreachable_starts_anyway(
        make_testapp, tmp_path, caplog):
    # What a mod_wsgi daemon process does at its start (wsgi_application):
    # the database it cannot open is left to its requests (503 meanwhile)
    # instead of failing the WSGI script, which mod_wsgi would import again,
    # and fail with a 500, at every request.
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    from zope.pipeline.serving.startup import open_databases
    config = unreachable_config(tmp_path)
    app = inner.build(make_testapp, tmp_path, open_root__zodb_config=config)
    caplog.clear()
    open_databases(app.app, at_start=True)
    [record] = [record for record in caplog.records
                if record.name == 'zope.pipeline.zodb.storage']
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert 'could not open the database of %s at its start' % config in \
        record.getMessage()
    assert storage.database_for(config, 'Application').db is None
    app.get('/folder/doc/@@whoami', status=503)
    # Elsewhere (init-db, waitress), failing to open is an error.
    with pytest.raises(MySQLdb.OperationalError):
        open_databases(app.app)


def test_open_at_start_says_whether_the_database_is_open():
    database = storage.ProcessDatabase('', 'Application',
                                       storage.create_root_folder)
    try:
        assert database.open_at_start() is True
        assert database.db is not None
    finally:
        database.close()


def test_open_at_start_lets_other_errors_through():
    def broken_factory():
        raise RuntimeError('no root for you')
    database = storage.ProcessDatabase('', 'Application', broken_factory)
    with pytest.raises(RuntimeError, match='no root for you'):
        database.open_at_start()
    assert database.db is None


def test_a_last_attempt_conflict_whose_error_page_finds_the_database_gone(
        make_testapp, tmp_path, monkeypatch, caplog):
    """Issue 45: a conflict on the last attempt while the database went
    away.  Rendering its page needs the database (the site of the object
    the error happened at, loaded again after the abort): that load fails
    too.  An outage seen while handling an error is still an outage: 503
    with Retry-After and one log line, not a 500 with a traceback."""
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    app = inner.build(make_testapp, tmp_path, retry__attempts='1')
    app.get('/folder/doc/@@whoami')
    db = inner.database()
    loads = []
    monkeypatch.setattr(db.storage, 'loadBefore', failing(LOST, loads))
    caplog.clear()
    response = app.post('/folder/doc/@@fail?kind=conflict', status=503)
    assert loads, 'the error page did not load anything'
    assert_unavailable_page(response)
    [record] = outage_records(caplog)
    assert record.exc_info is None
    assert record.getMessage().startswith(
        'POST /folder/doc/@@fail: the database is unavailable '
        '(OperationalError: (2013, ')
    # No traceback of zope.pipeline's (ZODB's own record of the failed
    # load is put on one line by zope.pipeline.http.logtext.Formatter).
    assert not [record for record in caplog.records
                if record.name.startswith('zope.pipeline') and
                record.exc_info]
    assert in_use(db) == 0


def test_relstorage_connection_records_of_an_outage_are_left_to_the_503(
        tmp_path, caplog):
    """Issue 45: MySQL's max_connections reached, RelStorage logged each
    refused connection with its traceback on top of zope.pipeline's one
    line per 503 (4,450 ERROR lines for 2,622 503s).  Once a database is
    opened, its connections logger drops the records of an outage (the
    error is raised on to the request); other records stay."""
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    db = storage.open_database(inner.sqlite_config(str(tmp_path)))
    db.close()
    logger = logging.getLogger('relstorage.adapters.connections')
    caplog.set_level(logging.INFO, logger=logger.name)
    caplog.clear()
    for error in (MySQLdb.OperationalError(1040, 'Too many connections'),
                  MySQLdb.OperationalError(*LOST),
                  RuntimeError('a bug')):
        try:
            raise error
        except Exception:
            logger.exception('Failed to borrow a store connection: None')
    logger.info('Reconnected')
    assert [(record.levelname, record.exc_info[0].__name__
             if record.exc_info else None) for record in caplog.records
            if record.name == logger.name] == [
        ('ERROR', 'RuntimeError'), ('INFO', None)]
