"""_speedups.relstorage: SharedPoll's own methods for storages other
than RelStorage on MySQL, and the seam putting them back.  The poll in
one statement on MariaDB: tests/integration/test_relstorage_poll_speedup.py.
"""

import types

import pytest
import transaction

from zope.pipeline import _speedups
from zope.pipeline._speedups import relstorage as seam
from zope.pipeline.zodb.responsecache import SharedPoll
from zope.pipeline.zodb.responsecache import shared_poll_for


@pytest.fixture
def seam_restored():
    """The seams' state as it was (an application made before may have
    installed them): every module of the seam when they were, else this
    one as it was."""
    was_installed = bool(seam._saved)
    installed = _speedups.State.installed
    yield
    if installed:
        _speedups.State.installed = False
        _speedups.install()
    elif was_installed:
        seam.install()
    else:
        seam.uninstall()


def stock_methods():
    return {name: seam._saved.get(name, vars(SharedPoll)[name])
            for name in ('changes', 'sender', 'close')}


def test_install_replaces_the_poll_and_uninstall_puts_it_back(
        seam_restored):
    stock = stock_methods()
    seam.uninstall()
    assert vars(SharedPoll)['changes'] is stock['changes']
    seam.install()
    seam.install()                  # once
    assert vars(SharedPoll)['changes'] is seam.changes
    assert vars(SharedPoll)['sender'] is seam.sender
    assert vars(SharedPoll)['close'] is seam.close
    seam.uninstall()
    seam.uninstall()                # nothing of ours to take away
    for name, method in stock.items():
        assert vars(SharedPoll)[name] is method


def test_the_seam_installs_it(seam_restored):
    assert 'relstorage' in _speedups.MODULES
    seam.uninstall()
    _speedups.State.installed = False
    _speedups.install()
    try:
        assert vars(SharedPoll)['changes'] is seam.changes
    finally:
        _speedups.uninstall()
    assert vars(SharedPoll)['changes'] is not seam.changes


def test_relstorage_on_sqlite_polls_in_one_statement(tmp_path,
                                                     seam_restored):
    from zope.pipeline.zodb.storage import open_database

    from tests.functional.inner import sqlite_config
    seam.install()
    config = sqlite_config(tmp_path)
    db, other = open_database(config), open_database(config)
    poll = shared_poll_for(db)
    try:
        assert poll.changes() is None       # the first: every object
        reader = seam.reader_of(poll)
        assert isinstance(reader, seam.SqliteReader)
        assert not reader.connection.in_transaction     # no snapshot held
        manager = transaction.TransactionManager(explicit=True)
        connection = other.open(transaction_manager=manager)
        manager.begin()
        connection.root()['a'] = 1
        manager.commit()
        oid = connection.root()._p_oid
        connection.close()
        assert poll.changes() == {oid}
        assert poll.changes() == frozenset()
        assert not reader.connection.in_transaction
        # in process: nothing to overlap, nothing sent ahead
        assert poll.sender() is None
    finally:
        poll.close()
        db.close()
        other.close()
    assert reader.connection is None


def test_other_storages_poll_the_stock_way(seam_restored):
    class Poll:
        db = types.SimpleNamespace(storage=object())

        def __init__(self):
            self.asked = 0

    stock = stock_methods()
    seam.install()
    poll = Poll()
    assert seam.reader_of(poll) is None
    assert seam.sender(poll) is None
    # the stock methods are called with the poll
    seam._saved['changes'] = lambda poll: 'stock'
    try:
        assert seam.changes(poll) == 'stock'
    finally:
        seam._saved['changes'] = stock['changes']


class Cursor:
    """A DB-API cursor that answers ``fetchall`` with what it executed."""

    connection = 'connection'

    def __init__(self):
        self.executed = []

    def execute(self, statement, params=None):
        self.executed.append((statement, params))

    def fetchall(self):
        return (('ran',) + self.executed[-1],)


def test_the_statement_sent_ahead_is_answered_once_by_what_was_read():
    cursor = Cursor()
    answered = seam.Answered(cursor, 'SELECT poll', {'tid': 1}, ((7, 9),))
    assert answered.connection == 'connection'
    answered.execute('SELECT poll', {'tid': 1})
    assert answered.fetchall() == ((7, 9),) and cursor.executed == []
    # any other statement, or the same again, goes to the database
    answered.execute('SELECT newest')
    assert answered.fetchall() == (('ran', 'SELECT newest', None),)
    answered.execute('SELECT poll', {'tid': 1})
    assert answered.fetchall() == (('ran', 'SELECT poll', {'tid': 1}),)


def test_a_statement_other_than_the_one_sent_goes_to_the_database():
    cursor = Cursor()
    answered = seam.Answered(cursor, 'SELECT poll', {'tid': 1}, ())
    answered.execute('SELECT poll', {'tid': 2})
    assert answered.fetchall() == (('ran', 'SELECT poll', {'tid': 2}),)


def test_the_recorder_stops_a_poll_at_its_first_statement():
    recorder = seam.Recorder('connection')
    assert recorder.connection == 'connection'
    with pytest.raises(seam.Recorded) as stopped:
        recorder.execute('SELECT poll', {'tid': 1})
    assert stopped.value.args == ('SELECT poll', {'tid': 1})


def test_a_poller_that_executes_nothing_cannot_be_sent_ahead():
    class Poller:
        def poll_invalidations(self, connection, cursor, tid):
            return (), tid
    reader = seam.Reader(types.SimpleNamespace(poller=Poller()))
    reader.tid = 5
    with pytest.raises(RuntimeError):
        reader.statement()


def test_a_poll_whose_answer_cannot_be_read_closes_its_connection():
    closed = []

    class Connection:
        def read_query_result(self):
            raise ConnectionError('the server went away')

    class ConnectionManager:
        def close(self, connection, cursor):
            closed.append((connection, cursor))
    adapter = types.SimpleNamespace(connmanager=ConnectionManager())
    reader = seam.Reader(adapter)
    connection = reader.connection = Connection()
    reader.cursor = 'cursor'
    with pytest.raises(ConnectionError):
        reader.receive('SELECT poll', {'tid': 1})
    assert closed == [(connection, 'cursor')] and reader.connection is None
