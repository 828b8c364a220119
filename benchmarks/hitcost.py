"""A response cache hit's CPU time in process, with the CPU caches warm
and with them evicted between requests.

    python -m benchmarks.hitcost [--storage sqlite] [--requests 2000]
        [--rounds 5] [--evict-mb 16]

The peers' cached page (``benchmarks.peers``, ``pipeline-cached``) on a
fresh database, stored by its first two requests, is asked ``requests``
times a round through its publisher with the environ mod_wsgi passes
(``benchmarks.inprocess.modwsgi_environ``), beside the plain WSGI page
of the same bytes (``serverside.PlainPage``).  The CPU time of the
calling thread is taken around each request: back to back (warm), and
after ``evict-mb`` megabytes were written between two requests
(evicted), which is what a mod_wsgi daemon serving one client at a time
meets, its cores shared with ab, Apache and the database between two of
its requests.  Printed: per kind and app, the median over the rounds of
each round's median, in microseconds.  Thread CPU time leaves out the
wait for MySQL's answer, not the work of asking.
"""

import argparse
import statistics
import subprocess
import sys
import time

from benchmarks import serverside
from benchmarks.inprocess import call_app
from benchmarks.inprocess import modwsgi_environ
from benchmarks.peers import BY_NAME
from benchmarks.peers import page
from benchmarks.scripts import PROJECT_ROOT
from benchmarks.storages import MysqlStorage
from benchmarks.storages import SqliteStorage
from benchmarks.workspace import Workspace

PATH = '/folder/page'
STORAGES = {'sqlite': SqliteStorage, 'mysql': MysqlStorage}


def ask(app, headers=None):
    """One GET of the page, as mod_wsgi would pass it: (status, body)."""
    return call_app(app, PATH, modwsgi_environ, headers)


def timed(app, requests, evict):
    """The thread CPU microseconds of each of ``requests`` requests,
    ``evict`` (a bytearray, or None) written between two of them."""
    samples = []
    for _ in range(requests):
        if evict is not None:
            evict[::64] = bytes(len(evict) // 64)
        start = time.thread_time_ns()
        ask(app)
        samples.append((time.thread_time_ns() - start) / 1000)
    return samples


def cached_app(storage, workspace):
    """The cached peer's publisher on a fresh database of ``storage``,
    its page stored (the next request is a hit)."""
    zodb_config = storage.setup(workspace, 'hitcost')
    workdir = workspace.directory('work')
    subprocess.run([sys.executable, '-m', 'benchmarks.peers', 'populate',
                    'pipeline-cached', zodb_config, workdir], check=True,
                   cwd=PROJECT_ROOT, capture_output=True)
    app = BY_NAME['pipeline-cached'].make_app(zodb_config, workdir)
    headers = []
    for _ in range(3):
        status, _body = ask(app, headers)
    names = [name for name, _value in headers]
    if not status.startswith('200') or 'Age' not in names:
        raise RuntimeError('the page is not answered from the cache: %s %r'
                           % (status, sorted(names)))
    return app


def measure(storage='sqlite', requests=2000, rounds=5, evict_mb=16):
    """{(kind, app): median microseconds}, kinds 'warm' and 'evicted',
    apps 'cached' and 'ceiling'."""
    store = STORAGES[storage]()
    with Workspace() as workspace:
        try:
            apps = {'cached': cached_app(store, workspace),
                    'ceiling': serverside.PlainPage(body=page.expected_body())}
            evict = bytearray(evict_mb << 20)
            medians = {}
            for _ in range(rounds):
                for kind, between in (('warm', None), ('evicted', evict)):
                    for name, each in apps.items():
                        samples = timed(each, requests, between)
                        medians.setdefault((kind, name), []).append(
                            statistics.median(samples))
            return {key: statistics.median(values)
                    for key, values in medians.items()}
        finally:
            store.teardown()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--storage', choices=sorted(STORAGES),
                        default='sqlite')
    parser.add_argument('--requests', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--evict-mb', type=int, default=16)
    args = parser.parse_args(argv)
    results = measure(args.storage, args.requests, args.rounds,
                      args.evict_mb)
    print('CPU µs per request, %s, medians of %d rounds of %d requests'
          % (args.storage, args.rounds, args.requests))
    print('%-10s %10s %10s' % ('', 'warm', 'evicted'))
    for name in ('cached', 'ceiling'):
        print('%-10s %10.1f %10.1f' % (name, results['warm', name],
                                       results['evicted', name]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
