"""Slow clients do not stop the site (issue 32): the two attacks that did,
against a real `zope-pipeline serve --mod-wsgi` (SQLite, one daemon
process with one thread).

Each slow client is held by the server for as long as mod_reqtimeout
lets it (15 s), so a page answered while they are at it did not wait
for them.  The figures with more clients and readers are measured by
tests/integration/test_slow_requests.py.
"""

import time

import pytest

from tests.integration import support

pytestmark = pytest.mark.integration

#: Slow bodies: more than the daemon's one thread.
SLOW_BODIES = 3
#: Slow-header connections: more than the 22 Apache workers
#: mod_wsgi-express gives 1 x 1 daemon threads by itself, fewer than the
#: workers `serve --mod-wsgi` asks for.
SLOW_HEADERS = 100
#: Seconds a page may take while they are at it (the slow clients hold
#: what they hold for 15 s at least).
PATIENCE = 10


@pytest.fixture
def server():
    support.need_mod_wsgi()
    with support.sqlite_site() as site:
        server = support.ModWsgiServer(site, processes=1, threads=1)
        with support.running(server):
            yield server


def page_while(attack, server):
    with attack:
        time.sleep(1.5)     # the slow clients have their connections
        return support.request(server.port, support.PAGE,
                               timeout=PATIENCE)[0]


def test_slow_request_bodies_do_not_hold_the_daemon_threads(server):
    attack = support.slow_bodies(server.port, SLOW_BODIES)
    assert page_while(attack, server) == 200
    assert attack.reconnects == 0


def test_slow_headers_do_not_hold_every_apache_worker(server):
    attack = support.slow_headers(server.port, SLOW_HEADERS, interval=1)
    assert page_while(attack, server) == 200
    assert attack.reconnects == 0
