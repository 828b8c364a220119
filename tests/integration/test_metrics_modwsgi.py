"""Request metrics under mod_wsgi in daemon mode, 2 processes x 1 thread:
the Prometheus endpoint adds up both processes exactly, mod_wsgi's own
capacity utilisation is reported beside ours, and the per-process state
files are retired when the processes exit."""

import os
import pwd
import time

import pytest

from tests.exposition import key
from tests.exposition import samples
from tests.integration import support

pytestmark = pytest.mark.integration

REQUESTS = 200
STEP = 2


def scrape(port):
    status, headers, body = support.request(port, '/_metrics')
    assert status == 200, body
    return samples(body)


def requests_by_view(exposed):
    return {dict(labels)['view']: value
            for (name, labels), value in exposed.items()
            if name == 'zope_pipeline_requests_total' and
            dict(labels)['status'] == '200'}


def settled(port, condition=lambda samples: True, timeout=30):
    """Scrape until two scrapes a flush apart agree (and ``condition``)."""
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        samples = scrape(port)
        if previous is not None and requests_by_view(samples) == \
                requests_by_view(previous) and condition(samples):
            return samples
        previous = samples
        time.sleep(1.5)
    raise AssertionError('The metrics did not settle: %r' % previous)


def state_directory(site):
    """A directory the daemon processes (Apache's user) can write."""
    path = os.path.join(site.directory, 'metrics-state')
    os.makedirs(path)
    if os.geteuid() == 0:
        user = pwd.getpwnam('www-data')
        os.chown(path, user.pw_uid, user.pw_gid)
    return path


def test_prometheus_counts_exactly_the_requests_of_both_processes():
    support.need_mod_wsgi()
    support.need_ab()
    with support.sqlite_site() as site:
        state = state_directory(site)
        site = support.Site(site.directory, open(site.zconfig).read(), {
            'metrics.state_dir': state, 'metrics.step': STEP,
            'metrics.flush_interval': 0.5})
        server = support.ModWsgiServer(site, processes=2, threads=1)
        with support.running(server):
            before = requests_by_view(settled(server.port))
            figures = support.ab('http://127.0.0.1:%d%s' % (
                server.port, support.PAGE), REQUESTS, 4)
            assert figures['complete'] == REQUESTS, figures['text']
            assert figures['non_2xx'] == 0, figures['text']
            after = settled(server.port, lambda samples: samples.get(
                key('zope_pipeline_modwsgi_capacity_utilization')) is not None)
            files = sorted(os.listdir(state))
        retired = sorted(os.listdir(state))
    counts = requests_by_view(after)
    grown = {view: counts[view] - before.get(view, 0) for view in counts
             if counts[view] != before.get(view, 0)}
    assert list(grown.values()) == [REQUESTS], (before, counts)
    assert after[key('zope_pipeline_processes')] == 2
    assert 0 <= after[key('zope_pipeline_capacity_utilization')] <= 1
    assert 0 <= after[key('zope_pipeline_modwsgi_capacity_utilization')] <= 1
    assert len([name for name in files if name[0].isdigit()]) == 2, files
    assert [name for name in retired if name.endswith('.json')] == \
        ['retired.json'], retired
