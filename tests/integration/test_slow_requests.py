"""Slow requests do not starve fast ones (issue 7, point 4), and a request
past its timeout gets a 504 and frees its thread: mod_wsgi 2x1 on MariaDB,
the slow test site (tests/integration/slow/: ``/@@slow?seconds=N``).

`zope-pipeline serve --mod-wsgi` runs the administrative URLs in their own
daemon process group (``--admin-urls``, here the slow view; 1 process x 2
threads by default).  With 4 slow requests (2 s each) kept in flight, the
p99 latency of the fast page stays within 2x its unloaded p99: the slow
requests hold only the administrative group's threads.  The same
measurement with ``--admin-processes 0`` (the slow requests in the site's
own 2 threads) is the contrast; it is reported, not asserted.

Figures go to docs/reliability.md.
"""

import concurrent.futures
import http.client
import os
import re
import threading
import time

import pytest

from tests.integration import reliability_report
from tests.integration import support

pytestmark = pytest.mark.integration

SLOW_URLS = r'/@@slow$'
#: The slow requests kept in flight, and how long each one takes.
SLOW_CLIENTS = 4
SLOW_SECONDS = 2
#: Fast page requests per measurement, from this many clients.
FAST_REQUESTS = 400
FAST_CLIENTS = 2
#: The contrast (fast requests wait for the slow ones): fewer requests,
#: and a bound on how long it measures.
CONTRAST_REQUESTS = 40
MEASURE_SECONDS = 60
#: The machine (2 cores) is shared with other test runs: an unloaded p99
#: of a few milliseconds doubles with a scheduling hiccup, so the bound
#: is the larger of 2x the unloaded p99 and the unloaded p99 + 20 ms (a
#: request waiting behind a 2 s slow one would take far longer).
SLACK = 0.020


class Server(support.ModWsgiServer):
    """`zope-pipeline serve --mod-wsgi` 2x1 with more serve options."""

    def __init__(self, site, options):
        super().__init__(site, processes=2, threads=1)
        self.options = list(options)

    def command(self):
        return super().command() + self.options


@pytest.fixture
def slow_site():
    with support.initialized_mysql_site(
            site_zcml=support.SLOW_SITE_ZCML) as site:
        yield site


def p99(latencies):
    ordered = sorted(latencies)
    return ordered[max(0, int(len(ordered) * 0.99 + 0.5) - 1)]


def fast_latencies(port, requests, clients=FAST_CLIENTS,
                   seconds=MEASURE_SECONDS):
    """Seconds each GET of the page took, from ``clients`` clients (one
    request after the other each), ``requests`` in all or until
    ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    each = requests // clients

    def client():
        latencies = []
        for _ in range(each):
            if time.monotonic() > deadline:
                break
            started = time.monotonic()
            status, headers, body = support.request(port, support.PAGE,
                                                    timeout=60)
            latencies.append(time.monotonic() - started)
            assert status == 200, body[:500]
        return latencies

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(client) for _ in range(clients)]
        return [latency for future in futures
                for latency in future.result(timeout=seconds + 120)]


class SlowLoad:
    """``SLOW_CLIENTS`` clients each requesting the slow view again and
    again until stopped (at most ``rounds`` times each)."""

    def __init__(self, port, rounds=60):
        self.port = port
        self.rounds = rounds
        self.stop = threading.Event()
        self.statuses = []
        self.pool = concurrent.futures.ThreadPoolExecutor(SLOW_CLIENTS)
        self.futures = []

    def client(self):
        for _ in range(self.rounds):
            if self.stop.is_set():
                break
            status, headers, body = support.request(
                self.port, '/@@slow?seconds=%d' % SLOW_SECONDS, timeout=120)
            self.statuses.append(status)

    def __enter__(self):
        self.futures = [self.pool.submit(self.client)
                        for _ in range(SLOW_CLIENTS)]
        # Let the slow requests reach their daemon processes.
        time.sleep(1)
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        try:
            for future in self.futures:
                future.result(timeout=180)
        finally:
            self.pool.shutdown(wait=True)


def measure(server):
    """(unloaded p99, p99 under slow load, slow statuses, fast count)."""
    fast_latencies(server.port, 40)          # warm the caches
    unloaded = fast_latencies(server.port, FAST_REQUESTS)
    with SlowLoad(server.port) as load:
        loaded = fast_latencies(server.port, FAST_REQUESTS)
    unloaded_after = fast_latencies(server.port, FAST_REQUESTS)
    return (max(p99(unloaded), p99(unloaded_after)), p99(loaded),
            load.statuses, len(loaded))


def contrast(server):
    """p99 of the page with the slow requests in the site's processes."""
    fast_latencies(server.port, 40)
    with SlowLoad(server.port) as load:
        loaded = fast_latencies(server.port, CONTRAST_REQUESTS)
    return p99(loaded), load.statuses, len(loaded)


def ms(seconds):
    return '%.1f ms' % (seconds * 1000)


def test_slow_admin_requests_in_their_own_group_leave_fast_pages_fast(
        slow_site):
    separate = Server(slow_site, ['--admin-urls', SLOW_URLS])
    with support.running(separate):
        unloaded, loaded, slow_statuses, count = measure(separate)
        separate_log = separate.log()
    shared = Server(slow_site, ['--admin-urls', SLOW_URLS,
                                '--admin-processes', '0'])
    with support.running(shared):
        shared_loaded, shared_statuses, shared_count = contrast(shared)
    bound = max(2 * unloaded, unloaded + SLACK)
    reliability_report.record(
        'Slow requests: fast page p99 with %d x %d s slow requests in '
        'flight (mod_wsgi 2x1 + admin group 1x2, MariaDB, %d clients)'
        % (SLOW_CLIENTS, SLOW_SECONDS, FAST_CLIENTS),
        {'unloaded p99': ms(unloaded),
         'p99 with slow requests, separate group': '%s (%d requests)'
            % (ms(loaded), count),
         'ratio': '%.2fx' % (loaded / unloaded),
         'bound max(2x, +20 ms)': ms(bound),
         'contrast without the group (--admin-processes 0), p99':
            '%s (%d requests)' % (ms(shared_loaded), shared_count),
         'slow requests answered': len(slow_statuses)},
        'within bound' if loaded <= bound else 'OVER bound')
    assert set(slow_statuses) == {200}, slow_statuses
    assert len(slow_statuses) >= SLOW_CLIENTS
    assert set(shared_statuses) == {200}, shared_statuses
    assert 'Traceback' not in separate_log
    assert loaded <= bound, (unloaded, loaded)


@pytest.mark.parametrize('group', ['admin', 'site'])
def test_a_request_past_its_timeout_gets_504_and_its_thread_serves_again(
        slow_site, group):
    """The administrative group (1 process x 2 threads) with a 1 s
    request timeout, or the site's group (2 x 1) with one: each of as many
    endless requests as the group has threads gets a 504; the same
    processes then serve again (the threads were freed by interrupting
    the requests, not by restarting the processes)."""
    if group == 'admin':
        options = ['--admin-urls', SLOW_URLS, '--admin-request-timeout', '1']
        quick, processes, threads = '/@@slow?seconds=0', 1, 2
    else:
        options = ['--admin-processes', '0', '--request-timeout', '1']
        quick, processes, threads = support.PAGE, 2, 1
    server = Server(slow_site, options)
    with support.running(server):
        before = support.daemon_pids(server.port, quick, wanted=processes)
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(
                processes * threads) as pool:
            endless = [pool.submit(support.request, server.port,
                                   '/@@slow?seconds=15', timeout=60)
                       for _ in range(processes * threads)]
            answers = [future.result(timeout=90) for future in endless]
        seconds = time.monotonic() - started
        after = support.daemon_pids(server.port, quick, wanted=processes)
        log = server.log()
    statuses = [status for status, headers, body in answers]
    reliability_report.record(
        'Request timeout: %d requests of 15 s in the %s group (%dx%d, '
        'request timeout 1 s, MariaDB)' % (len(answers), group, processes,
                                           threads),
        {'statuses': ' '.join(str(status) for status in statuses),
         'seconds until the last answer': '%.1f' % seconds,
         'same processes serve afterwards': before == after},
        '504, threads freed' if set(statuses) == {504} and before == after
        else 'NOT as expected')
    assert statuses == [504] * len(answers), answers
    for _status, _headers, body in answers:
        assert 'Traceback' not in body
    assert before == after, (before, after)
    assert len(before) == processes, before
    # A request whose input was gone when the daemon started it (Apache
    # had closed its side; seen once in 5 runs on this shared machine)
    # gets a 400 and one warning line from the retry stage, no traceback.
    assert 'Traceback' not in log, log[-5000:]


# -- slow clients (issue 32): bodies and headers sent a byte at a time

#: Clients sending a 100,000-byte body at one byte a second: more than
#: the daemons' 2 x 4 threads, fewer than Apache's workers.
SLOW_BODY_CLIENTS = 10
#: Connections sending one header line every 5 s: more than
#: mod_wsgi-express's Apache workers had (22).
SLOW_HEADER_CLIENTS = 190
#: Seconds the readers measure while the slow clients are at it (longer
#: than Apache's body and header timeouts, so the clients that are cut
#: reconnect within it).
ATTACK_SECONDS = 20
#: The readers' worst latency the slow clients may cause (issue 32).
MAX_LATENCY = 3.0
READERS = 2


def readers_under(server, attack):
    """The readers' TimedLoad over the page while ``attack`` runs."""
    with attack:
        time.sleep(2)     # the slow clients have their connections
        with support.TimedLoad(server.port, clients=READERS,
                               seconds=ATTACK_SECONDS) as readers:
            time.sleep(ATTACK_SECONDS)
    return readers


def slow_client_row(scenario, readers, attack,
                    server='serve --mod-wsgi 2x4 + admin 1x2, MariaDB'):
    """Record the readers' figures; (their statuses, worst latency)."""
    statuses = readers.statuses()
    worst = readers.worst_latency()
    reliability_report.record(
        'Slow clients: %s (%s, %d readers of the page for %d s)'
        % (scenario, server, READERS, ATTACK_SECONDS),
        {'reads': len(statuses),
         'reads not 200': len([status for status in statuses
                               if status != 200]),
         'worst read latency': '%.2f s' % worst,
         'slow clients cut and reconnected': attack.reconnects,
         'their answers': ' '.join(sorted(set(attack.answers))) or 'none'},
        'site answering' if worst < MAX_LATENCY else 'site STOPPED')
    return statuses, worst


def test_ten_slow_request_bodies_leave_readers_answered(slow_site):
    """Ten clients sending their bodies at a byte a second hold no daemon
    thread: Apache reads a body whole before the daemons see the request
    (`serve --mod-wsgi`'s buffering proxy), so the readers' worst
    latency stays under 3 s."""
    server = support.ModWsgiServer(slow_site, processes=2, threads=4)
    with support.running(server):
        attack = support.slow_bodies(server.port, SLOW_BODY_CLIENTS)
        readers = readers_under(server, attack)
        log = server.log()
    statuses, worst = slow_client_row(
        '%d request bodies sent at 1 byte/s' % SLOW_BODY_CLIENTS, readers,
        attack)
    assert set(statuses) == {200}, statuses
    assert worst < MAX_LATENCY, worst
    assert 'Traceback' not in log


def test_slow_headers_leave_readers_answered(slow_site):
    """190 connections sending a header line every 5 s: Apache's workers
    outnumber them and mod_reqtimeout cuts each within 10 s, so the
    readers' worst latency stays under 3 s."""
    server = support.ModWsgiServer(slow_site, processes=2, threads=4)
    with support.running(server):
        attack = support.slow_headers(server.port, SLOW_HEADER_CLIENTS)
        readers = readers_under(server, attack)
        log = server.log()
    statuses, worst = slow_client_row(
        '%d connections sending a header line every 5 s'
        % SLOW_HEADER_CLIENTS, readers, attack)
    assert set(statuses) == {200}, statuses
    assert worst < MAX_LATENCY, worst
    assert 'Traceback' not in log


def echo(port, method, body=None, source='127.0.0.2', headers=None,
         path='/folder/@@echo?x=%C3%A9&y=a%2Bb&z=%2F'):
    """(status, {key: value}) of what the echo view saw of a request
    from ``source`` (a loopback address)."""
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=30,
                                            source_address=(source, 0))
    try:
        connection.request(method, path, body=body, headers=dict(
            headers or {}, **({'Content-Type':
                               'application/x-www-form-urlencoded'}
                              if body else {})))
        response = connection.getresponse()
        text = response.read().decode('utf-8', 'replace')
    finally:
        connection.close()
    return response.status, dict(line.split('=', 1)
                                 for line in text.splitlines() if '=' in line)


def test_a_request_apache_read_the_body_of_looks_like_one_served_directly(
        slow_site):
    """A POST (proxied by Apache once it has read the body) and a GET
    (served directly) from 127.0.0.2: the site sees the same client
    address, host, port, path and query string, and no forwarding
    header; a client's own X-Zope-Pipeline-Client-Address is not
    believed."""
    server = support.ModWsgiServer(slow_site, processes=2, threads=2)
    with support.running(server):
        get_status, direct = echo(server.port, 'GET')
        post_status, proxied = echo(server.port, 'POST',
                                    body=b'a=1&b=%C3%A9')
        forged_headers = {'X-Zope-Pipeline-Client-Address': '10.9.8.7',
                          'X-Forwarded-For': '10.9.8.6'}
        forged_status, forged = echo(server.port, 'POST', body=b'a=2',
                                     headers=forged_headers)
        forged_get = echo(server.port, 'GET', headers=forged_headers)[1]
        # A client cannot claim TLS; the proxy can, to the daemons'
        # listener (the loopback port of body-buffering.conf).
        claimed = echo(server.port, 'POST', body=b'a=3',
                       headers={'X-Zope-Pipeline-Proxied':
                                '127.0.0.2 https'})[1]
        with open(os.path.join(server.server_root,
                               'body-buffering.conf')) as stream:
            inner = int(re.search(r'<VirtualHost 127\.0\.0\.1:(\d+)>',
                                  stream.read()).group(1))
        over_tls = echo(inner, 'POST', body=b'a=4', source='127.0.0.1',
                        headers={'X-Zope-Pipeline-Proxied':
                                     '127.0.0.3 https',
                                 'X-Zope-Pipeline-Client-Address':
                                     '127.0.0.3'})[1]
        log = server.log()
    assert (get_status, post_status, forged_status) == (200, 200, 200)
    assert proxied.pop('body') == "12 b'a=1&b=%C3%A9'"
    assert direct.pop('body') == "0 b''"
    assert direct == proxied, (direct, proxied)
    assert direct['REMOTE_ADDR'] == '127.0.0.2'
    assert direct['zope.pipeline.client_address'] == '127.0.0.2'
    assert direct['QUERY_STRING'] == 'x=%C3%A9&y=a%2Bb&z=%2F'
    assert direct['HTTP_HOST'] == '127.0.0.1:%d' % server.port
    assert direct['SERVER_PORT'] == str(server.port)
    assert direct['url'] == 'http://127.0.0.1:%d/folder/@@echo' % (
        server.port)
    for header in ('HTTP_X_FORWARDED_FOR', 'HTTP_X_FORWARDED_HOST',
                   'HTTP_X_ZOPE_PIPELINE_CLIENT_ADDRESS', 'HTTP_VIA'):
        assert direct[header] == '-', header
    # A client's own forwarding headers reach the site as they would
    # directly (its virtual_host stage believes them from trusted proxies
    # only); its address is its connection's.
    assert forged.pop('body') == "3 b'a=2'"
    forged_get.pop('body')
    assert forged == forged_get, (forged, forged_get)
    assert forged['REMOTE_ADDR'] == '127.0.0.2'
    assert forged['HTTP_X_ZOPE_PIPELINE_CLIENT_ADDRESS'] == '-'
    assert claimed['wsgi.url_scheme'] == 'http'
    assert claimed['url'].startswith('http://')
    assert over_tls['wsgi.url_scheme'] == 'https'
    assert over_tls['REMOTE_ADDR'] == '127.0.0.3'
    assert 'Traceback' not in log
