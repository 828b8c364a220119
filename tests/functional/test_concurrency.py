"""Concurrency: 8 client threads each add one to a shared persistent
counter 50 times, by HTTP POSTs to the full pipeline served by waitress
(8 threads); every increment must count exactly once, no request may get a
5xx, and the conflicts that happened are retried (and logged)."""

import contextlib
import http.client
import logging
import threading
import time

import pytest
from conftest import need
from webtest.http import StopableWSGIServer

from zope.pipeline.zodb import storage

from . import inner
from .inner import mariadb
from .inner.content import Counter

CLIENTS = 8
INCREMENTS = 50
#: Wall-clock limit of one run (the clients' sockets time out before).
DEADLINE = 240
#: Retry settings for a hot spot: with 8 writers on one object a request
#: can lose many commits in a row.  Measured here (400 POSTs, SQLite):
#: with the defaults (4 attempts, 5 ms base backoff) 6 to 22 requests got
#: a 503; with 10 attempts and 5 ms still 1; with a 50 ms base backoff
#: and 10 attempts none.  20 attempts leave a wide margin; the backoff is
#: capped (retry.backoff_cap), so a request still ends in seconds.
RETRY_SETTINGS = {'retry__attempts': '20', 'retry__backoff': '0.05'}


@contextlib.contextmanager
def served(app, threads=8):
    """Serve ``app`` with waitress on a free port of 127.0.0.1 in a
    background thread; yield the port."""
    server = StopableWSGIServer(app, host='127.0.0.1', port=0,
                                threads=threads)
    server.runner = threading.Thread(target=server.run, daemon=True)
    server.runner.start()
    try:
        yield server.effective_port
    finally:
        server.shutdown()
        server.runner.join(timeout=10)


def increment_many(port, times, statuses, deadline):
    """POST ``times`` increments over one keep-alive connection."""
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    try:
        for _ in range(times):
            if time.monotonic() > deadline:
                statuses.append('deadline')
                return
            connection.request('POST', '/counter/@@increment', body=b'',
                               headers={'Content-Length': '0'})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
    except (OSError, http.client.HTTPException) as error:
        statuses.append(repr(error))
    finally:
        connection.close()


def run_clients(port):
    """Run the clients; return every status they got, by client."""
    deadline = time.monotonic() + DEADLINE
    statuses = [[] for _ in range(CLIENTS)]
    clients = [threading.Thread(target=increment_many,
                                args=(port, INCREMENTS, mine, deadline))
               for mine in statuses]
    for client in clients:
        client.start()
    for client in clients:
        client.join(timeout=DEADLINE + 60)
    assert not any(client.is_alive() for client in clients)
    return [status for mine in statuses for status in mine]


def counter_value(port):
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
    try:
        connection.request('GET', '/counter/@@value')
        return int(connection.getresponse().read())
    finally:
        connection.close()


def retried_conflicts(caplog):
    return [record for record in caplog.records
            if record.name == 'zope.pipeline.retry'
            and record.levelno == logging.INFO
            and 'ConflictError' in record.getMessage()]


def errors_logged(caplog):
    """What was logged at ERROR or above: why a request got a 5xx."""
    return [record.getMessage() for record in caplog.records
            if record.levelno >= logging.ERROR]


def hammer(make_testapp, tmp_path, caplog, config):
    """Run the clients against the pipeline on ``config``; check the
    counter and the statuses; return the number of retried conflicts."""
    caplog.set_level(logging.INFO, logger='zope.pipeline.retry')
    app = inner.build(make_testapp, tmp_path, open_root__zodb_config=config,
                      **RETRY_SETTINGS)
    with served(app.app) as port:
        statuses = run_clients(port)
        value = counter_value(port)
    assert len(statuses) == CLIENTS * INCREMENTS
    assert sorted(set(statuses), key=str) == [200], errors_logged(caplog)
    assert value == CLIENTS * INCREMENTS
    assert inner.read(lambda root: root['counter'].value, config) == value
    conflicts = retried_conflicts(caplog)
    print('%d conflicts retried for %d increments'
          % (len(conflicts), value))
    # 8 writers on one object always conflict (66 to 412 retried in every
    # run measured); each is logged in one line naming the object's class
    assert conflicts
    counter_class = 'class %s.%s' % (Counter.__module__, Counter.__name__)
    assert all(counter_class in record.getMessage() for record in conflicts)
    return len(conflicts)


@pytest.mark.integration
def test_concurrent_increments_on_sqlite_count_exactly_once_without_5xx(
        make_testapp, tmp_path, caplog):
    config = inner.sqlite_config(tmp_path)
    hammer(make_testapp, tmp_path, caplog, config)


@pytest.mark.integration
def test_concurrent_increments_on_mariadb_count_exactly_once_without_5xx(
        make_testapp, tmp_path, caplog):
    need(mariadb.available(), 'MariaDB is not running on this machine')
    with mariadb.scratch_database() as name:
        config = inner.mysql_config(tmp_path, name)
        try:
            hammer(make_testapp, tmp_path, caplog, config)
        finally:
            storage.close_all()
