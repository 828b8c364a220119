"""zope.pipeline.security.failedlogins.SharedFailedLogins: the counts of
FailedLogins, kept in a private directory for every process using it."""

import logging
import os
import sqlite3

import pytest

from zope.pipeline.security import failedlogins
from zope.pipeline.security.failedlogins import STORE_FILE
from zope.pipeline.security.failedlogins import SharedFailedLogins
from zope.pipeline.stages.authenticate import IN_MEMORY
from zope.pipeline.stages.authenticate import failures_directory


class Clock:
    def __init__(self):
        self.now = 1_700_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def directory(tmp_path):
    return str(tmp_path / 'run' / 'failed-logins')


def rows(directory):
    with sqlite3.connect(os.path.join(directory, STORE_FILE)) as db:
        return db.execute('SELECT key, time FROM failures ORDER BY time'
                          ).fetchall()


def test_a_key_is_refused_after_limit_failures_until_the_oldest_expires(
        directory, clock):
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    for _ in range(3):
        assert failed.retry_after('k', 3) == 0
        failed.fail('k', 3)
        clock.now += 10
    assert failed.retry_after('k', 3) == 30
    clock.now += 29.5
    assert failed.retry_after('k', 3) == 1
    clock.now += 0.5
    assert failed.retry_after('k', 3) == 0


def test_two_stores_on_one_directory_count_together(directory, clock):
    first = SharedFailedLogins(directory, window=60, clock=clock)
    second = SharedFailedLogins(directory, window=60, clock=clock)
    key = ('login', 'admin')
    for store in (first, second, first):
        store.fail(key, 3)
    assert second.retry_after(key, 3) == 60
    assert first.retry_after(('login', 'other'), 3) == 0
    second.reset(key)
    assert first.retry_after(key, 3) == 0
    assert len(first) == 0


def test_the_directory_is_private_and_made_when_first_used(directory):
    failed = SharedFailedLogins(directory, window=60)
    assert not os.path.exists(directory)
    assert failed.retry_after('k', 1) == 0
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert os.stat(os.path.dirname(directory)).st_mode & 0o777 == 0o700


def test_only_the_last_limit_failures_of_a_key_are_kept(directory, clock):
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    for _ in range(8):
        clock.now += 1
        failed.fail('k', 5)
    assert len(rows(directory)) == 5
    clock.now += 1
    failed.fail('k', 2)
    assert rows(directory) == [('k', clock.now - 1), ('k', clock.now)]


def test_failures_that_left_the_window_and_the_oldest_rows_go(directory,
                                                              clock):
    failed = SharedFailedLogins(directory, window=60, max_rows=3,
                                clock=clock)
    failed.fail('old', 5)
    clock.now += 61
    for key in 'abcd':
        clock.now += 1
        failed.fail(key, 5)
    assert [key for key, _ in rows(directory)] == ['b', 'c', 'd']
    assert len(failed) == 3


def test_limit_zero_never_counts_nor_refuses(directory):
    failed = SharedFailedLogins(directory, window=60)
    failed.fail('k', 0)
    assert failed.retry_after('k', 0) == 0
    assert not os.path.exists(directory)


def test_a_clock_gone_back_refuses_no_longer_than_the_window(directory,
                                                             clock):
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    failed.fail('k', 1)
    clock.now -= 3600
    assert failed.retry_after('k', 1) == 60


def test_reset_of_a_key_without_failures_writes_nothing(directory, clock):
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    failed.fail('k', 2)
    before = os.stat(os.path.join(directory, STORE_FILE + '-wal')).st_size
    failed.reset('never-failed')
    assert os.stat(os.path.join(directory, STORE_FILE + '-wal')
                   ).st_size == before
    assert len(failed) == 1


def test_an_unusable_directory_falls_back_to_memory_and_says_so(
        tmp_path, caplog):
    other = tmp_path / 'open'
    other.mkdir(mode=0o777)
    other.chmod(0o777)  # writable by others: not private
    failed = SharedFailedLogins(str(other), window=60)
    with caplog.at_level(logging.ERROR, 'zope.pipeline.security.failedlogins'):
        failed.fail('k', 1)
        assert failed.retry_after('k', 1) > 0
        failed.reset('k')
        assert failed.retry_after('k', 1) == 0
        failed.fail('k', 1)
        fallback = failed._fallback
        failed._fall_back(OSError('another thread saw it too'))
    assert failed._fallback is fallback
    [record] = caplog.records
    assert 'in this process only' in record.getMessage()
    assert str(other) in record.getMessage()
    assert len(failed) == 1


def test_a_failing_write_falls_back_to_memory(directory, clock):
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    failed.fail('k', 2)
    assert failed.retry_after('k', 1) == 60
    failed._connection.execute('PRAGMA query_only = ON')
    failed.reset('k')  # found in the file; deleting it fails
    assert failed._fallback is not None
    assert failed.retry_after('k', 1) == 0
    failed.fail('k', 1)
    assert failed.retry_after('k', 1) == 60


def test_a_file_that_is_no_database_falls_back_to_memory(directory, clock,
                                                          caplog):
    os.makedirs(directory, mode=0o700)
    with open(os.path.join(directory, STORE_FILE), 'wb') as stream:
        stream.write(b'not a database' * 100)
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    with caplog.at_level(logging.ERROR, 'zope.pipeline.security.failedlogins'):
        assert failed.retry_after('k', 1) == 0
        failed.fail('k', 1)
    assert failed.retry_after('k', 1) == 60
    assert 'not a database' in caplog.records[0].getMessage()


def test_a_forked_process_opens_its_own_connection(directory, monkeypatch):
    failed = SharedFailedLogins(directory, window=60)
    failed.fail('k', 2)
    connection = failed._connection
    monkeypatch.setattr(os, 'getpid', lambda: -1)
    assert failed.retry_after('k', 1) > 0
    assert failed._connection is not connection


def test_the_directory_of_the_counts(monkeypatch):
    monkeypatch.delenv('ZOPE_PIPELINE_RUN_DIR', raising=False)
    assert failures_directory('') is None
    assert failures_directory(IN_MEMORY) is None
    assert failures_directory(' /srv/state ') == '/srv/state'
    monkeypatch.setenv('ZOPE_PIPELINE_RUN_DIR', '/srv/run')
    assert failures_directory('') == '/srv/run/failed-logins-%d' \
        % os.geteuid()
    assert failures_directory(IN_MEMORY) is None


def test_the_file_is_tried_again_after_the_retry_interval(directory, clock,
                                                          monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(failedlogins.time, 'monotonic', lambda: now[0])
    failed = SharedFailedLogins(directory, window=60, clock=clock)
    other = SharedFailedLogins(directory, window=60, clock=clock)
    failed.fail('k', 3)
    failed._connection.execute('PRAGMA query_only = ON')
    failed.fail('k', 3)  # the write fails: counted in memory
    assert failed._connection is None and len(rows(directory)) == 1
    other.fail('k', 3)
    failed.fail('k', 3)  # not tried before the interval is over
    assert len(rows(directory)) == 2
    assert failed.retry_after('k', 2) == 60  # two in memory
    assert failed.retry_after('k', 3) == 0
    now[0] += failedlogins.RETRY_INTERVAL
    assert failed.retry_after('k', 3) == 0  # the file again: two there
    failed.fail('k', 3)
    assert len(rows(directory)) == 3
    assert failed.retry_after('k', 3) == 60
    failed.reset('k')  # both forget it
    assert failed.retry_after('k', 1) == 0 and rows(directory) == []
