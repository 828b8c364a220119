"""Start fast after a restart (issue 46, item 5): mod_wsgi 2x2 on MariaDB,
the sample page rendered (no response cache), one client.  The latency
of the first 100 requests after `zope-pipeline restart` (the rolling
restart: each daemon replaced once its successor loaded the site) is
compared with the steady state's (the same daemons, 300 requests after
200 more), p50 and p99:

- as deployed: the new daemons find RelStorage's persistent cache files
  (``cache-local-dir``, written by their predecessors at shutdown) and
  the templates compiled before (``templates-<uid>`` in the server's run
  directory);
- cold: both removed before the restart.

Every answer must be a 200 from a new daemon; the figures are printed
(``pytest -s``) and quoted in docs/performance.md.  No timing is
asserted beyond a generous bound: a restarted daemon's median within
five times the steady state's plus 50 ms, as deployed.
"""

import os
import shutil
import time

import pytest

from zope.pipeline.serving.modwsgi_express import run_directory

from tests.integration import support

pytestmark = pytest.mark.integration

WARMUP = 200
STEADY = 300
FIRST = 100


def latencies(port, count, replaced=()):
    """Seconds of ``count`` sequential GETs of the page (each a 200, from
    none of the ``replaced`` processes)."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        status, headers, body = support.request(port, support.PAGE)
        times.append(time.perf_counter() - start)
        assert status == 200, body[:500]
        assert headers['X-Pipeline-Pid'] not in replaced, headers
    return times


def percentile(times, fraction):
    ordered = sorted(times)
    return ordered[round(fraction * (len(ordered) - 1))]


def figures(times):
    return '%.1f ms p50, %.1f ms p99' % (percentile(times, 0.5) * 1000,
                                         percentile(times, 0.99) * 1000)


def restarted(server, site):
    """Roll the daemons (the command returns once each was replaced by a
    successor that loaded the site); return the pids replaced.  No
    request is made between the restart and the measure."""
    before = support.daemon_pids(server.port)
    result = support.zope_pipeline('restart', site.ini, '--server-root',
                                   server.server_root, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return before


def after_restart(server, site):
    """(the first FIRST requests' latencies, then STEADY's after WARMUP
    more) of the daemons a rolling restart started."""
    replaced = restarted(server, site)
    first = latencies(server.port, FIRST, replaced)
    latencies(server.port, WARMUP)
    return first, latencies(server.port, STEADY, replaced)


def forget_local_files(server, site):
    """Remove RelStorage's cache files and the compiled templates."""
    shutil.rmtree(os.path.join(site.var, 'relstorage-cache'),
                  ignore_errors=True)
    run = run_directory(server.server_root)
    for entry in os.listdir(run):
        if entry.startswith('templates-'):
            shutil.rmtree(os.path.join(run, entry), ignore_errors=True)


def test_first_requests_after_a_rolling_restart_against_steady_state():
    with support.initialized_mysql_site() as site:
        server = support.ModWsgiServer(site, processes=2, threads=2)
        with support.running(server):
            support.daemon_pids(server.port)
            latencies(server.port, WARMUP)
            warm, warm_steady = after_restart(server, site)
            forget_local_files(server, site)
            cold, cold_steady = after_restart(server, site)
    for name, first, steady in (('as deployed', warm, warm_steady),
                                ('cold', cold, cold_steady)):
        print('\n%s: first %d requests after a rolling restart %s; '
              'steady state (%d, after %d more) %s; first request %.1f ms'
              % (name, FIRST, figures(first), STEADY, WARMUP,
                 figures(steady), first[0] * 1000))
    assert percentile(warm, 0.5) <= 5 * percentile(warm_steady, 0.5) + 0.05
