"""Conflict storm (issue 7, point 1; issue 45, point 2): 24 clients write
the same objects at once through mod_wsgi at the shipped concurrency (2
processes x the 4 threads of etc/deploy-mysql.ini) on MariaDB, with the
shipped retry settings (etc/deploy-mysql.ini's retry.attempts, backoff
0.05 s doubling to at most 0.5 s).

Every client POSTs increments to the one counter and comments to the one
page, interleaved, on a keep-alive connection.  Conflicts are retried by
the retry stage; a request whose attempts all conflicted is answered 503
with Retry-After, and the client repeats it after waiting that long (an
exhausted attempt committed nothing).  Afterwards the counter and the
page's comments are exact.  At most 1 % of the writes may be refused,
and no answer may take longer than 5 s (at 4 attempts, sized for 2x1,
7.8 to 12.8 % were refused at 2x4).  The figures (refused, conflicts
retried per 1000 requests, p99 and worst wait) go to docs/reliability.md.
"""

import concurrent.futures
import configparser
import http.client
import os
import re
import time

import pytest

from zope.pipeline.sample import COMMENTS_FORM

from tests.conftest import ROOT
from tests.integration import reliability_report
from tests.integration import support

pytestmark = pytest.mark.integration

CLIENTS = 24
WRITES_EACH = 40
#: The shipped deployment: 2 daemon processes (serve's default) x the
#: threads and retry attempts of etc/deploy-mysql.ini.
PROCESSES = 2
SHIPPED_INI = os.path.join(ROOT, 'etc', 'deploy-mysql.ini')
#: Writes refused (503 after every attempt), at most, and the longest
#: wait for one answer, in seconds (issue 45).
MOST_REFUSED = 0.01
LONGEST_ANSWER = 5.0
INCREMENT = '/counter/@@increment'
#: How many times one write may get a 503 before the test gives up.
REPEATS_PER_WRITE = 20
#: How many times one write may find its kept-alive connection closed.
RECONNECTS_PER_WRITE = 5
#: The longest Retry-After the client honours, in seconds.
LONGEST_WAIT = 5.0
FORM_HEADERS = {'Content-Type': 'application/x-www-form-urlencoded'}


class Client:
    """One client on one keep-alive connection; counts what it saw."""

    def __init__(self, port, number):
        self.port = port
        self.number = number
        self.connection = None
        self.attempts = []          # X-Pipeline-Attempt of every response
        self.waits = []             # seconds each response took
        self.repeated = 0           # 503s with Retry-After, repeated
        self.reconnects = 0         # idle keep-alive connections closed
        self.unexpected = []        # (status, path, body) of anything else

    def connect(self):
        self.connection = http.client.HTTPConnection('127.0.0.1', self.port,
                                                     timeout=60)

    def post(self, path, body, headers):
        """POST once; again on a new connection when Apache had closed the
        kept-alive one before reading the request (the event MPM closes
        idle keep-alive connections when its workers are all busy)."""
        for _ in range(RECONNECTS_PER_WRITE):
            started = time.monotonic()
            try:
                self.connection.request('POST', path, body=body,
                                        headers=headers)
                response = self.connection.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError):
                self.reconnects += 1
                self.connection.close()
                self.connect()
                continue
            data = response.read()
            self.waits.append(time.monotonic() - started)
            return response.status, response, data
        raise AssertionError('%s: the connection closed %d times'
                             % (path, RECONNECTS_PER_WRITE))

    def write(self, path, body, headers, ok):
        """POST until the server takes it; repeat 503s after Retry-After."""
        for _ in range(REPEATS_PER_WRITE):
            status, response, data = self.post(path, body, headers)
            self.attempts.append(int(response.getheader('X-Pipeline-Attempt',
                                                        '0')))
            if status == ok:
                return
            retry_after = response.getheader('Retry-After')
            if status != 503 or retry_after is None:
                self.unexpected.append((status, path, data[:300]))
                return
            self.repeated += 1
            # A fresh connection after the wait: the idle one may be gone.
            self.connection.close()
            time.sleep(min(float(retry_after), LONGEST_WAIT))
            self.connect()
        self.unexpected.append(('still 503 after %d repeats'
                                % REPEATS_PER_WRITE, path, b''))

    def run(self):
        path, fields = COMMENTS_FORM
        self.connect()
        try:
            for number in range(WRITES_EACH):
                self.write(INCREMENT, b'', {}, 200)
                comment = '&'.join('%s=%s' % (name, value.replace(' ', '+'))
                                   for name, value in fields)
                comment += '+%d-%d' % (self.number, number)
                self.write(path, comment.encode('ascii'), FORM_HEADERS, 303)
        finally:
            self.connection.close()
        return self


def storm(port):
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        futures = [pool.submit(Client(port, number).run)
                   for number in range(CLIENTS)]
        return [future.result(timeout=600) for future in futures]


def shipped():
    """(threads, retry attempts) of etc/deploy-mysql.ini."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(SHIPPED_INI)
    return (parser.getint('server:main', 'threads'),
            parser.getint('app:main', 'retry.attempts'))


THREADS, ATTEMPTS = shipped()


@pytest.fixture
def mysql_site():
    with support.initialized_mysql_site(
            settings={'retry.attempts': ATTEMPTS}) as site:
        yield site


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * fraction + 0.5) - 1)]


def test_conflict_storm_at_the_shipped_concurrency_is_absorbed_exactly(
        mysql_site):
    server = support.ModWsgiServer(mysql_site, processes=PROCESSES,
                                   threads=THREADS)
    started = time.monotonic()
    with support.running(server):
        clients = storm(server.port)
        status, headers, counter = support.request(server.port, '/counter')
    seconds = time.monotonic() - started
    log = server.log()
    texts, comment_count = support.stored_comments(mysql_site.zconfig)
    comments = len(texts), comment_count

    writes = 2 * CLIENTS * WRITES_EACH
    attempts = [attempt for client in clients for attempt in client.attempts]
    waits = [wait for client in clients for wait in client.waits]
    repeated = sum(client.repeated for client in clients)
    reconnects = sum(client.reconnects for client in clients)
    unexpected = [item for client in clients for item in client.unexpected]
    retried_in_log = log.count('Retrying POST ')
    retried = sum(attempt - 1 for attempt in attempts)
    per_1000 = 1000.0 * retried / len(attempts)
    refused = repeated / writes
    reliability_report.record(
        'Conflict storm (%d clients x %d increments of one counter + %d '
        'comments on one page, mod_wsgi %dx%d as shipped, MariaDB, retry '
        '%d x 0.05 s doubling to 0.5 s)'
        % (CLIENTS, WRITES_EACH, WRITES_EACH, PROCESSES, THREADS, ATTEMPTS),
        {'writes': writes,
         'requests': len(attempts),
         'conflicts retried': retried,
         'retried per 1000 requests': '%.1f' % per_1000,
         'refused (503, repeated by the client)': '%d (%.2f %%)'
            % (repeated, 100 * refused),
         'p99 wait': '%.2f s' % percentile(waits, 0.99),
         'worst wait': '%.2f s' % max(waits),
         'other errors': len(unexpected),
         'keep-alive connections closed by Apache, request resent':
             reconnects,
         'counter': counter,
         'comments': comments[0],
         'seconds': '%.0f' % seconds},
        ('exact' if (counter, comments) == (
            str(CLIENTS * WRITES_EACH), (CLIENTS * WRITES_EACH,) * 2)
         else 'NOT exact') +
        (', refused <= 1 %%, worst wait <= %g s' % LONGEST_ANSWER
         if refused <= MOST_REFUSED and max(waits) <= LONGEST_ANSWER
         else ', OVER BOUND'))

    assert unexpected == [], unexpected[:10]
    assert 0 not in attempts, 'a response without X-Pipeline-Attempt'
    assert len(attempts) == writes + repeated
    # Every exhausted request was a 503 after all its attempts, and the
    # log has one line for each conflict the retry stage retried.
    assert attempts.count(ATTEMPTS) >= repeated
    assert retried_in_log == retried, (retried_in_log, retried)
    # The only errors logged are the exhausted conflicts (one line
    # naming the conflict, no traceback, for each 503).
    assert len(re.findall(r'ERROR \[zope\.pipeline\.error\] pid \d+: '
                          r'POST \S+ failed on attempt %d: '
                          r'\w*ConflictError: [^\n]*; answered 503'
                          % ATTEMPTS, log)) == repeated, log[-3000:]
    assert log.count('Traceback (most recent call last)') == 0
    assert (status, counter) == (200, str(CLIENTS * WRITES_EACH))
    assert comments == (CLIENTS * WRITES_EACH, CLIENTS * WRITES_EACH)
    # Contention at the shipped concurrency is absorbed (issue 45).
    assert refused <= MOST_REFUSED, (repeated, writes)
    assert max(waits) <= LONGEST_ANSWER, sorted(waits)[-5:]
