"""_speedups.relstorage on MariaDB: the response cache's shared poll in
one statement, on a connection of its own in autocommit, reports exactly
what another process committed, holds no snapshot, and after a lost
connection still reports what changed meanwhile."""

import secrets

import pytest

from zope.pipeline._speedups import relstorage as seam
from zope.pipeline.zodb.responsecache import shared_poll_for

from tests.functional.inner import commit_root
from tests.functional.inner import mysql_config
from tests.functional.inner import root_oid
from tests.integration import support

pytestmark = pytest.mark.integration

@pytest.fixture
def installed():
    """The seam's poll, then the seam as it was (an application made
    before may have installed it)."""
    was_installed = bool(seam._saved)
    seam.install()
    yield
    if not was_installed:
        seam.uninstall()


@pytest.fixture
def databases(tmp_path, installed):
    """(the process's database, commit(name, value) as another process's)
    on a scratch MariaDB database."""
    from zope.pipeline.zodb.storage import open_database
    support.need_mysql()
    name = 'zp_it_%s' % secrets.token_hex(4)
    admin = support.mysql_admin()
    admin.cursor().execute('CREATE DATABASE `%s`' % name)
    admin.close()
    config = mysql_config(tmp_path, name)
    db, other = open_database(config), open_database(config)

    def commit(key, value):
        commit_root(other, key, value)
    try:
        yield db, commit
    finally:
        db.close()
        other.close()
        support.drop_mysql_database(name)


@pytest.fixture
def polled(databases):
    """(db, commit, the db's SharedPoll after its first poll, its cache),
    the poll closed after."""
    from zope.pipeline.zodb.responsecache import ResponseCache
    db, commit = databases
    poll = shared_poll_for(db)
    cache = ResponseCache(1 << 20)
    try:
        poll.sync(cache, poll.arrival())
        yield db, commit, poll, cache
    finally:
        poll.close()


def lose_connection(reader):
    """The reader's connection killed on the server (a restart, a
    network gone)."""
    admin = support.mysql_admin()
    admin.cursor().execute('KILL %d' % reader.connection.thread_id())
    admin.close()


def session_value(reader, sql):
    reader.cursor.execute(sql)
    return reader.cursor.fetchall()[0][-1]


def test_the_poll_reports_another_process_commits_in_one_statement(
        databases):
    db, commit = databases
    poll = shared_poll_for(db)
    try:
        assert poll.changes() is None       # the first: every object
        reader = seam.reader_of(poll)
        assert reader is not None and reader.tid is not None
        assert poll.changes() == frozenset()
        commit('a', 1)
        assert poll.changes() == {root_oid(db)}
        assert poll.changes() == frozenset()
        # autocommit: no rollback asked, no transaction left open
        assert int(session_value(reader, 'SELECT @@autocommit')) == 1
        assert int(session_value(
            reader, "SHOW SESSION STATUS LIKE 'Com_rollback'")) == 0
    finally:
        poll.close()
    assert reader.connection is None


def test_a_poll_after_a_lost_connection_reports_what_changed_meanwhile(
        databases):
    db, commit = databases
    poll = shared_poll_for(db)
    try:
        poll.changes()
        reader = seam.reader_of(poll)
        lose_connection(reader)
        commit('b', 2)
        try:
            changed = poll.changes()
        except Exception:
            assert reader.connection is None    # dropped, reopened next
            changed = poll.changes()
        assert changed == {root_oid(db)}
    finally:
        poll.close()


def test_the_first_poll_is_not_sent_ahead(databases):
    from zope.pipeline.zodb.responsecache import ResponseCache
    db, commit = databases
    poll = shared_poll_for(db)
    try:
        assert poll.send(ResponseCache(1 << 20), poll.arrival()) is None
        assert poll.started == 0 and not poll.lock.locked()
    finally:
        poll.close()


def test_a_poll_sent_ahead_reports_what_was_committed_before_it_was_sent(
        polled):
    db, commit, poll, cache = polled
    reader = seam.reader_of(poll)
    commit('c', 1)
    arrived = poll.arrival()
    sent = poll.send(cache, arrived)
    assert sent is not None and poll.lock.locked()
    before = reader.tid
    assert reader.recorded[0] == before and reader.recorded[1][1]
    sent.complete()
    assert poll.done == arrived[0] + 1 and not poll.lock.locked()
    assert poll.log[-1][1] == {root_oid(db)} and reader.tid > before
    # the statement is recorded once per transaction id polled
    poll.send(cache, poll.arrival()).complete()
    recorded = reader.recorded
    assert recorded[0] == reader.tid
    poll.send(cache, poll.arrival()).complete()
    assert reader.recorded is recorded
    assert poll.log[-1][1] == frozenset()
    assert int(session_value(reader, 'SELECT @@autocommit')) == 1


def test_a_poll_sent_ahead_on_a_lost_connection_fails_and_the_next_reports(
        polled):
    db, commit, poll, cache = polled
    reader = seam.reader_of(poll)
    lose_connection(reader)
    commit('d', 1)
    try:
        poll.send(cache, poll.arrival()).complete()
    except Exception:
        assert reader.connection is None    # dropped, reopened next
        assert not poll.lock.locked()
        poll.sync(cache, poll.arrival())
    assert poll.log[-1][1] == {root_oid(db)}
