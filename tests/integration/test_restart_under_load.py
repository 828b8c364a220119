"""Restart under load (issue 7, point 3; issue 32, point 5): mod_wsgi 2x1
on MariaDB.  `zope-pipeline restart`, the rolling restart, under a timed
load: no time without an answer longer than 0.5 s, every answer a 200.
Then `ab -n 2000 -c 8` over the page, and once it is under way either

- the WSGI script is touched (a rolling restart, zope.pipeline.serving.rolling:
  the daemon processes restart gracefully one at a time, while Apache
  and its socket to the daemons stay), or
- `apachectl graceful` (Apache re-reads its configuration: the daemon
  processes belong to the old configuration and are stopped at once).

A daemon reload loses nothing: every request completes with a 2xx.  A
graceful restart of Apache may answer the requests waiting at the daemons
with 502/503 (mod_wsgi daemon mode; no timeout option changes it, see
etc/apache/zope-pipeline.conf): the test asserts what is guaranteed (every
request gets an HTTP response; the errors are Apache's 502/503, logged by
mod_wsgi as a daemon that closed its connection or a daemon socket that
was gone; the new daemons serve afterwards) and writes the figures into
docs/reliability.md.
"""

import concurrent.futures
import math
import os
import re
import subprocess
import time

import pytest

from tests.integration import reliability_report
from tests.integration import support

pytestmark = pytest.mark.integration

#: Enough for the load to outlast BEFORE_RESTART and the restart at the
#: speed the page is served here (up to about 2,000 pages a second).
REQUESTS = 8000
CONCURRENCY = 8
#: Seconds of load before the restart.
BEFORE_RESTART = 1.5

#: What mod_wsgi logs for each request Apache answers 502 or 503 because
#: of a daemon process that stopped (messages of wsgi_remote.c).
DAEMON_CLOSED = ('closed connection before sending complete response '
                 'headers',
                 'Error reading response headers from daemon process')
DAEMON_GONE = 'Unable to connect to WSGI daemon process'


def ab_figures(url, requests, concurrency, timeout=300):
    """ab (-r: a reset connection is counted, not fatal); its figures and
    the longest request in milliseconds."""
    result = subprocess.run(
        ['ab', '-r', '-n', str(requests), '-c', str(concurrency), '-s', '60',
         url], capture_output=True, text=True, timeout=timeout)
    figures = support.parse_ab(result.stdout + result.stderr)
    match = re.search(r'100%\s+(\d+) \(longest request\)', figures['text'])
    figures['longest_ms'] = int(match.group(1)) if match else None
    match = re.search(r'\(Connect: (\d+), Receive: (\d+), Length: \d+, '
                      r'Exceptions: (\d+)\)', figures['text'])
    if match:
        figures['connect'], figures['receive'], figures['exceptions'] = (
            int(value) for value in match.groups())
    return figures


def under_load(server, restart):
    """ab over the page; ``restart()`` once it is under way."""
    url = 'http://127.0.0.1:%d%s' % (server.port, support.PAGE)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        load = pool.submit(ab_figures, url, REQUESTS, CONCURRENCY)
        time.sleep(BEFORE_RESTART)
        assert not load.done(), 'ab ended before the restart: more requests'
        restart()
        return load.result(timeout=300)


@pytest.fixture
def mysql_site():
    support.need_ab()
    with support.initialized_mysql_site() as site:
        yield site


def record(scenario, figures, extra, verdict, threads=1):
    row = {'requests': figures.get('complete'),
           'failed': figures.get('failed'),
           'non-2xx': figures.get('non_2xx'),
           'longest request': '%s ms' % figures.get('longest_ms'),
           'requests per second': '%.0f' % figures.get('rps', 0)}
    row.update(extra)
    reliability_report.record(
        'Restart under load: %s (ab -n %d -c %d, mod_wsgi 2x%d, MariaDB)'
        % (scenario, REQUESTS, CONCURRENCY, threads), row, verdict)


def test_touching_the_script_under_load_reloads_daemons_losing_nothing(
        mysql_site):
    server = support.ModWsgiServer(mysql_site, processes=2, threads=1)
    with support.running(server):
        before = support.daemon_pids(server.port)
        figures = under_load(server, lambda: os.utime(server.script))
        after = support.replaced_pids(server.port, before)
        log = server.log()
    lost = figures.get('failed', 0) + figures.get('non_2xx', 0)
    record('daemon reload (touch the WSGI script)', figures,
           {'daemon processes replaced': len(before - after)},
           'nothing lost' if lost == 0 else '%d LOST' % lost)
    assert figures['complete'] == REQUESTS, figures['text']
    assert figures['failed'] == 0, figures['text']
    assert figures['non_2xx'] == 0, figures['text']
    # Both daemon processes were replaced, one at a time (a rolling
    # restart, zope.pipeline.serving.rolling; its gaps are measured below).
    assert len(before) == 2, before
    assert not before & after, (before, after)
    assert 'Traceback' not in log


#: Apache's event MPM with as many workers as the daemons have threads
#: (2 x 1): requests beyond them wait in Apache's listen backlog, which a
#: graceful restart keeps, instead of at the daemons' socket.
CAPPED_WORKERS = '''\
<IfModule mpm_event_module>
ServerLimit 4
ThreadLimit 2
ThreadsPerChild 2
MaxRequestWorkers 2
StartServers 1
MinSpareThreads 1
MaxSpareThreads 2
</IfModule>
'''


@pytest.mark.parametrize('threads, capped', [(1, False), (4, False),
                                             (1, True)])
def test_apachectl_graceful_under_load_answers_every_request(
        mysql_site, threads, capped):
    """2x1: up to 6 of the 8 clients' requests wait at the daemons'
    socket, and those waiting when the daemons stop get 502; 2x4 (as many
    daemon threads as clients), or 2x1 with Apache's workers capped at the
    daemons' 2 threads: none waits there, but a request an old Apache
    worker connects after the socket is removed gets 503 (0 to 6 per
    graceful measured in each case but the capped one, 0 or 1)."""
    extra = []
    if capped:
        include = os.path.join(mysql_site.directory, 'capped.conf')
        with open(include, 'w') as stream:
            stream.write(CAPPED_WORKERS)
        os.chmod(include, 0o644)
        extra.append('--include-file=' + include)
    server = support.ModWsgiServer(mysql_site, processes=2, threads=threads,
                                   extra=extra)
    with support.running(server):
        before = support.daemon_pids(server.port)
        results = []
        figures = under_load(
            server, lambda: results.append(server.apachectl('graceful')))
        server.wait_until_serving(60)
        after = support.daemon_pids(server.port)
        log = server.log()
    [graceful] = results
    assert graceful.returncode == 0, graceful.stdout + graceful.stderr
    closed = sum(log.count(message) for message in DAEMON_CLOSED)
    gone = log.count(DAEMON_GONE)
    lost = figures.get('non_2xx', 0)
    record('apachectl graceful, %d daemon threads for %d clients%s'
           % (2 * threads, CONCURRENCY,
              ', Apache workers capped at 2' if capped else ''), figures,
           {'502 (daemon stopped before answering)': closed,
            '503 (daemon socket gone)': gone},
           'nothing lost' if lost == 0 else
           '%d of %d answered 502/503 by Apache (inherent, see '
           'etc/apache/zope-pipeline.conf)' % (lost, REQUESTS),
           threads=threads)
    # Every request got an HTTP response: Apache kept accepting.
    assert figures['complete'] == REQUESTS, figures['text']
    assert figures.get('exceptions', 0) == 0, figures['text']
    assert figures.get('receive', 0) == 0, figures['text']
    # The errors are all Apache's, each explained by a stopped daemon.
    assert figures['non_2xx'] == closed + gone, (figures['text'],
                                                log[-5000:])
    assert 'Traceback' not in log
    # New daemon processes serve afterwards.
    assert not before & after, (before, after)


#: Clients of the timed load, and seconds of load before the restart.
GAP_CLIENTS = 4
BEFORE_ROLLING = 1.0
#: Seconds of load once the touch replaced every site process.
AFTER_TOUCH = 1
#: The longest time without any answer a restart may leave (issue 32).
MAX_GAP = 0.5


def timed_restart(server, restart, after=0.5, clients=GAP_CLIENTS):
    """The timed load over the page, ``restart()`` once it is under way;
    (the load, restart()'s result, the longest gap from the restart's
    start to the end of the load, seconds restart() took)."""
    with support.TimedLoad(server.port, clients=clients) as load:
        time.sleep(BEFORE_ROLLING)
        start = time.monotonic()
        result = restart()
        took = time.monotonic() - start
        time.sleep(after)
        end = time.monotonic()
    return load, result, load.longest_gap(start, end), took


def touch_and_wait(server, pids):
    """Touch the WSGI script, then wait (under the timed load) until none
    of ``pids`` answers: the daemons restart one after the other once a
    watcher noticed, 4 to 11 s here and longer on a busy machine (a
    fixed wait once saw the second one still loading). The daemon
    processes answering then."""
    os.utime(server.script)
    return support.replaced_pids(server.port, pids)


@pytest.mark.parametrize('threads, clients', [(1, GAP_CLIENTS), (4, 8)])
def test_rolling_restart_under_load_keeps_answering_losing_nothing(
        mysql_site, threads, clients):
    """`zope-pipeline restart`, and then a touch of the WSGI script,
    restart the 2 site processes (and the administrative one) one at a
    time, each after its successor has loaded the site: the page is
    answered throughout (no gap over 0.5 s), every answer a 200; with 1
    thread per process and with the shipped inis' 4."""
    server = support.ModWsgiServer(mysql_site, processes=2, threads=threads)
    with support.running(server):
        before = support.daemon_pids(server.port)
        load, result, gap, took = timed_restart(server, lambda: (
            support.zope_pipeline('restart', mysql_site.ini,
                                  '--server-root', server.server_root,
                                  timeout=300)), clients=clients)
        after = support.daemon_pids(server.port)
        touch_load, touched, touch_gap, _ = timed_restart(
            server, lambda: touch_and_wait(server, after), after=AFTER_TOUCH,
            clients=clients)
        log = server.log()
    statuses = load.statuses()
    lost = [status for status in statuses if status != 200]
    touch_lost = [status for status in touch_load.statuses()
                  if status != 200]
    reliability_report.record(
        'Rolling restart under load: `zope-pipeline restart`, then a touch '
        'of the WSGI script (%d clients '
        'requesting the page, mod_wsgi 2x%d + admin 1x2, MariaDB)'
        % (clients, threads),
        {'answers during the restart': len(statuses),
         'not 200': len(lost),
         'longest time without an answer': '%.3f s' % gap,
         'restart took': '%.1f s' % took,
         'site processes replaced': len(before - after),
         'then touching the script: longest time without an answer':
            '%.3f s' % touch_gap,
         'after the touch: not 200': len(touch_lost),
         'after the touch: site processes replaced': len(after - touched)},
        'answering throughout, nothing lost'
        if max(gap, touch_gap) <= MAX_GAP and not lost + touch_lost
        else 'GAP %.3f s, %d lost' % (max(gap, touch_gap),
                                      len(lost + touch_lost)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert lost == [], lost
    assert gap <= MAX_GAP, (gap, result.stdout)
    assert len(before) == 2, before
    assert not before & after, (before, after)
    assert 'replaced by' in result.stdout
    assert touch_lost == [], touch_lost
    assert touch_gap <= MAX_GAP, touch_gap
    assert len(touched) == 2 and not after & touched, (after, touched)
    assert 'Traceback' not in log


#: Issue 45: a rolling restart cut two 40 s requests (502 after 25.8 s)
#: while the site's limit let them run 143 s.  Here, at the shipped 4
#: threads, a request timeout of 12 s: a limit of 12 x (1 + ln 4) = 28.6 s.
#: mod_wsgi's own graceful-timeout and shutdown-timeout (15 and 5 s) end
#: a restarting process 20 s after it is asked, and 5 s after its only
#: requests have run 12 + 5 s: a 26 s request then gets 502 after about
#: 21 s.  With the timeouts of zope.pipeline.serving.modwsgi_express.timeouts
#: it
#: finishes.
LONG_REQUEST_TIMEOUT = 12
LONG_REQUEST = 26
LONG_REQUESTS = 2


class LongRequestServer(support.ModWsgiServer):
    """2x4 serving the slow test site, with a short request timeout and
    no administrative group."""

    def command(self):
        return super().command() + [
            '--request-timeout', str(LONG_REQUEST_TIMEOUT),
            '--admin-processes', '0']


def test_a_rolling_restart_lets_long_requests_finish_within_their_limit():
    """`zope-pipeline restart` while two requests run for 26 s, under a
    timed load on the page: both get their 200, the page is answered
    throughout, and the restart takes about as long as the requests."""
    with support.initialized_mysql_site(
            site_zcml=support.SLOW_SITE_ZCML) as site:
        server = LongRequestServer(site, processes=2, threads=4)
        with support.running(server), concurrent.futures.ThreadPoolExecutor(
                LONG_REQUESTS) as pool:
            before = support.daemon_pids(server.port)
            started = time.monotonic()

            def long_request():
                status, headers, body = support.request(
                    server.port, '/@@slow?seconds=%d' % LONG_REQUEST,
                    timeout=120)
                return status, time.monotonic() - started
            futures = [pool.submit(long_request)
                       for _ in range(LONG_REQUESTS)]
            load, result, gap, took = timed_restart(server, lambda: (
                support.zope_pipeline('restart', site.ini,
                                      '--server-root', server.server_root,
                                      timeout=300)), clients=2)
            answers = [future.result(timeout=120) for future in futures]
            after = support.daemon_pids(server.port)
            log = server.log()
    statuses = [status for status, seconds in answers]
    lost = [status for status in load.statuses() if status != 200]
    limit = LONG_REQUEST_TIMEOUT * (1 + math.log(4))
    reliability_report.record(
        'Rolling restart with long requests in flight: `zope-pipeline '
        'restart` while %d requests run %d s (request timeout %d s: limit '
        '%.1f s; mod_wsgi 2x4, 2 clients requesting the page, MariaDB)'
        % (LONG_REQUESTS, LONG_REQUEST, LONG_REQUEST_TIMEOUT, limit),
        {'long requests': ', '.join('%d after %.1f s' % answer
                                    for answer in answers),
         'restart took': '%.1f s' % took,
         'page answers during the restart': len(load.statuses()),
         'page not 200': len(lost),
         'longest time without an answer': '%.3f s' % gap},
        'long requests finished, nothing lost'
        if set(statuses) == {200} and not lost
        else 'long requests %s, %d page answers lost' % (statuses,
                                                         len(lost)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses == [200] * LONG_REQUESTS, (answers, log[-3000:])
    assert all(seconds >= LONG_REQUEST for status, seconds in answers)
    assert lost == [], lost
    assert gap <= MAX_GAP, gap
    assert not before & after, (before, after)
    # The restart waited for the long requests, and not much longer (each
    # process's successor loads in a few seconds).
    assert LONG_REQUEST - BEFORE_ROLLING - 1 < took < limit + 60, took
    assert 'Traceback' not in log
