"""What one app host asks of MySQL per request (issue 44, part 3), from
MariaDB's own status counters: one mod_wsgi server (1 process x 2
threads) on a private MariaDB whose counters see nothing else.

For each kind of request of the sample site (the page, the counter, an
increment, a comment) it sends REQUESTS of them one after the other
(warm caches: the same page again) and reads ``SHOW GLOBAL STATUS``
before and after: Questions and the Com_* counters (statements),
Bytes_received (what the host sent to MySQL) and Bytes_sent (what MySQL
sent back), per request; and the CPU seconds of mariadbd and of the
server's processes (Apache and its daemon) per request, from /proc.
From them docs/deployment.md ("Capacity") models how many app hosts one
primary feeds.  Re-measure with

    .venv/bin/python -m pytest -p no:cacheprovider -s \\
        tests/integration/test_db_traffic.py

(the figures also go to test-artifacts/reliability.md).
"""

import os

import pytest

from tests.integration import reliability_report
from tests.integration import support
from tests.integration.private_mariadb import PrivateMariaDB
from tests.integration.private_mariadb import need_private_mariadb

pytestmark = pytest.mark.integration

REQUESTS = 300
COUNTERS = ('Questions', 'Com_select', 'Com_insert', 'Com_update',
            'Com_delete', 'Com_commit', 'Com_rollback', 'Bytes_received',
            'Bytes_sent')
FORM = {'Content-Type': 'application/x-www-form-urlencoded'}
KINDS = (
    ('GET page', 'GET', support.PAGE, None, {}, 200),
    ('GET counter', 'GET', '/counter', None, {}, 200),
    ('POST increment', 'POST', '/counter/@@increment', b'', {}, 200),
    ('POST comment', 'POST', support.PAGE + '/@@add-comment',
     b'author=traffic&text=measured', FORM, 303),
)
TICKS = os.sysconf('SC_CLK_TCK')


def status(server):
    rows = server.execute('SHOW GLOBAL STATUS')
    found = dict(rows)
    return {name: int(found[name]) for name in COUNTERS}


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            with open('/proc/%d/stat' % pid) as stream:
                fields = stream.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


def session_pids(session):
    pids = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as stream:
                fields = stream.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            pids.append(int(name))
    return pids


def measure(server, mariadb, method, path, body, headers, ok):
    app = session_pids(server.process.pid)
    before = status(mariadb)
    overhead = status(mariadb)      # what SHOW GLOBAL STATUS itself costs
    cpu_before = (cpu_seconds([mariadb.process.pid]), cpu_seconds(app))
    for _ in range(REQUESTS):
        answer, _, text = support.request(server.port, path, method, body,
                                          headers=headers)
        assert answer == ok, text[:500]
    cpu_after = (cpu_seconds([mariadb.process.pid]), cpu_seconds(app))
    after = status(mariadb)
    figures = {name: (after[name] - overhead[name]
                      - (overhead[name] - before[name])) / REQUESTS
               for name in COUNTERS}
    figures['db cpu ms'] = 1000 * (cpu_after[0] - cpu_before[0]) / REQUESTS
    figures['host cpu ms'] = 1000 * (cpu_after[1] - cpu_before[1]) / REQUESTS
    return figures


def test_db_traffic_per_request_of_one_app_host():
    support.need_mod_wsgi()
    need_private_mariadb()
    with PrivateMariaDB() as mariadb, \
            support.scratch_directory() as directory:
        database = {'db': 'zp_traffic', 'password': os.urandom(12).hex()}
        mariadb.create_database(database['db'], database['password'])
        site = support.mysql_site(directory, database, port=mariadb.port)
        server = support.ModWsgiServer(site, processes=1, threads=2)
        with support.running(server):
            for _ in range(20):     # warm: the root made, caches loaded
                for kind in KINDS:
                    support.request(server.port, kind[2], kind[1], kind[3],
                                    headers=kind[4])
            results = {kind[0]: measure(server, mariadb, *kind[1:])
                       for kind in KINDS}
    for label, figures in results.items():
        shown = {name: '%.2f' % value for name, value in figures.items()}
        reliability_report.record(
            'DB traffic per request: %s (1 mod_wsgi process x 2 threads, '
            'private MariaDB, %d requests one at a time)'
            % (label, REQUESTS), shown, 'measured')
        print(label, shown)
    # Every request asked MySQL something (RelStorage polls at each
    # transaction's start), and a write committed.
    for figures in results.values():
        assert figures['Questions'] >= 1
    assert results['POST increment']['Com_commit'] >= 1
    assert results['POST comment']['Com_commit'] >= 1
