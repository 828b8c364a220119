"""``zope-pipeline pack`` and ``zope-pipeline check`` while the site serves
(issue 32, item 7).

A scratch MariaDB database (made by ``init-db``) serves a site under
mod_wsgi (2 processes x 2 threads) while two clients POST comments; the
commands run against the same ini meanwhile.  Both succeed, the check
finds every object reachable, and every comment acknowledged during them
is stored exactly once: packing and checking are safe online.
"""

import time

import pytest

from tests.integration import support
from tests.integration.test_db_outage import Client
from tests.integration.test_db_outage import is_busy

pytestmark = pytest.mark.integration


def test_pack_and_check_while_comments_are_written():
    with support.initialized_mysql_site() as site:
        server = support.ModWsgiServer(site, processes=2, threads=2)
        clients = [Client(server.port, 'writer%d' % number, True)
                   for number in range(2)]
        with support.running(server):
            try:
                for client in clients:
                    client.start()
                time.sleep(1)
                pack = support.zope_pipeline('pack', site.ini, '--days', '0',
                                             timeout=120)
                check = support.zope_pipeline('check', site.ini,
                                              timeout=120)
                time.sleep(1)
            finally:
                for client in clients:
                    client.stopping.set()
                for client in clients:
                    client.join(60)
        assert not any(client.is_alive() for client in clients)
        stored, count = support.stored_comments(site.zconfig)

    assert pack.returncode == 0, pack.stderr
    assert 'Packed database main' in pack.stdout, pack.stdout
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith(': OK.'), check.stdout
    outcomes = [outcome for client in clients
                for outcome in client.outcomes]
    acknowledged = [o.text for o in outcomes if o.status == 303]
    assert len(acknowledged) > 10
    assert all(o.status == 303 or is_busy(o) for o in outcomes), [
        (o.status, o.error, o.body[:200]) for o in outcomes
        if o.status != 303][:5]
    assert sorted(stored) == sorted(acknowledged)
    assert count == len(acknowledged)
