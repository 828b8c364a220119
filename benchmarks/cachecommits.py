"""The cached page while another client commits: hits and requests per
second.

    python -m benchmarks.cachecommits [--storages sqlite,mysql]
        [--concurrency 8,1] [--requests 3000] [--rounds 3] [--rate 10]
        [--configs mod_wsgi:2x1]

Serves the peers' page (``benchmarks.peers``) by the cached peer
(``pipeline-cached``: its view declared cacheable,
``response_cache.enabled = true``) and by the plain-WSGI ceiling, under
mod_wsgi-express as the peers comparison does, and measures the cached
page in interleaved rounds while

- ``quiet``: nothing else commits;
- ``unrelated``: another process commits ``--rate`` times a second to an
  object the page does not read (a mapping of its own under the
  database's root);
- ``page``: another process commits ``--rate`` times a second to the page
  itself (its title set again: a new revision, the same bytes), so that
  every answer after a commit must be rendered again.

A run's hit rate is the share of its answers the server counted as
answered from a stored page (an ``Age`` header,
``serverside.CountingMiddleware``).  The committer is another process on
the same database (RelStorage tells the server's processes through their
polls); it starts, and the page is stored again, before the run.
Prints, per storage and concurrency, the medians of the rounds:
requests per second, the ratio to the ceiling's, the hit rate and the
commits made from the start of the run until the committer stopped.
"""

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time

from benchmarks import peers
from benchmarks.loadgen import Load
from benchmarks.loadgen import measure_once
from benchmarks.loadgen import warm_up
from benchmarks.peercompare import check_page
from benchmarks.peercompare import populate
from benchmarks.peers import page
from benchmarks.scripts import PROJECT_ROOT
from benchmarks.scripts import ceiling_body_script
from benchmarks.scripts import peer_script
from benchmarks.servers import parse_config
from benchmarks.servers import serving
from benchmarks.sites import discover
from benchmarks.storages import make_storage
from benchmarks.workspace import Workspace

SITUATIONS = ('quiet', 'unrelated', 'page')
#: The root key of the object the ``unrelated`` committer changes.
UNRELATED = 'bench-unrelated'
#: Requests that store the page again after a committer started.
REWARM = 300


# -- the committer (another process)


def commit_loop(zodb_config, target, rate, out=sys.stdout):
    """Commit ``rate`` times a second to ``target`` ('unrelated' or
    'page') until SIGTERM; print 'ready' once set up, the commits made
    at the end."""
    import transaction
    from persistent.mapping import PersistentMapping

    from zope.pipeline.zodb.storage import open_database
    stopped = []
    made = 0
    signal.signal(signal.SIGTERM, lambda *args: stopped.append(True))
    # SIGUSR1: print the commits made so far (when a measured run starts)
    signal.signal(signal.SIGUSR1, lambda *args: print(
        made, file=out, flush=True))
    db = open_database(zodb_config)
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    manager.begin()
    root = connection.root()
    if UNRELATED not in root:
        root[UNRELATED] = PersistentMapping()
    manager.commit()
    print('ready', file=out, flush=True)
    interval = 1.0 / rate
    due = time.monotonic()
    while not stopped:
        manager.begin()
        if target == 'unrelated':
            connection.root()[UNRELATED]['n'] = made
        else:
            the_page = connection.root()['Application'][page.FOLDER_NAME][
                page.PAGE_NAME]
            the_page.title = the_page.title
            the_page._p_changed = True
        manager.commit()
        made += 1
        due += interval
        time.sleep(max(0.0, due - time.monotonic()))
    connection.close()
    db.close()
    print(made, file=out, flush=True)


class Committer:
    """The committing process as the block sees it: ``start_run()`` before
    the measured run; ``made`` (after the block) the commits made since."""

    def __init__(self, process=None):
        self.process = process
        self.at_start = 0
        self.made = 0

    def start_run(self):
        if self.process is not None:
            self.process.send_signal(signal.SIGUSR1)
            self.at_start = int(self.process.stdout.readline())


@contextlib.contextmanager
def committing(zodb_config, target, rate):
    """Another process committing to ``target`` while the block runs;
    yields its Committer."""
    if target == 'quiet':
        yield Committer()
        return
    process = subprocess.Popen(
        [sys.executable, '-m', 'benchmarks.cachecommits', 'commit',
         zodb_config, target, str(rate)],
        stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT,
        env=dict(os.environ, PYTHONPATH=PROJECT_ROOT))
    committer = Committer(process)
    try:
        if process.stdout.readline().strip() != 'ready':
            raise RuntimeError('the committer did not start')
        yield committer
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    committer.made = int(output.split()[-1]) - committer.at_start


# -- the measurement


def measure_storage(storage_name, config, loads, rounds, rate, log=print):
    """{(situation or 'ceiling', concurrency): [run dicts]}."""
    cached = peers.BY_NAME['pipeline-cached']
    runs = {}
    # the storages the peers comparison makes (the site's ZConfig
    # templates)
    storage = make_storage(storage_name, discover())
    with Workspace() as workspace, contextlib.ExitStack() as stack:
        stack.callback(storage.teardown)
        label = 'cachecommits-%s' % storage_name
        zodb_config = storage.setup(workspace, label)
        workdir = workspace.directory(label + '-work')
        populate(cached, zodb_config, workdir)

        def cached_script(count_dir, log_dir):
            return peer_script(cached.name, zodb_config, workdir, count_dir,
                               log_dir)

        def ceiling_script(count_dir, log_dir):
            return ceiling_body_script(page.expected_body(), count_dir,
                                       log_dir)
        servers = {}
        for name, script in (('cached', cached_script),
                             ('ceiling', ceiling_script)):
            servers[name] = stack.enter_context(serving(
                config, workspace, '%s-%s' % (label, name), script,
                page.PAGE_PATH))
            check_page(name, servers[name])
            warm_up(servers[name], page.PAGE_PATH, 500, 8)
        for number in range(1, rounds + 1):
            for load in loads:
                run = measure_once(servers['ceiling'], page.PAGE_PATH, load)
                runs.setdefault(('ceiling', load.concurrency), []).append(
                    run_dict(run, 0))
                for situation in SITUATIONS:
                    with committing(zodb_config, situation,
                                    rate) as committer:
                        warm_up(servers['cached'], page.PAGE_PATH, REWARM,
                                load.concurrency)
                        committer.start_run()
                        run = measure_once(servers['cached'],
                                           page.PAGE_PATH, load)
                    entry = run_dict(run, committer.made)
                    runs.setdefault((situation, load.concurrency),
                                    []).append(entry)
                    log('  %s round %d %s -c %d: %.0f req/s, %.1f %% hits, '
                        '%d commits, %s' % (
                            storage_name, number, situation,
                            load.concurrency, entry['rps'],
                            entry['hit_rate'] * 100, entry['commits'],
                            run.verification.describe()))
    return runs


def run_dict(run, made):
    answered = run.served.s2xx
    return {'rps': run.result.requests_per_second if run.result else 0.0,
            'hit_rate': run.served.hits / answered if answered else 0.0,
            'commits': made,
            'verified': run.verification.valid}


def table(storage_name, runs, concurrencies):
    lines = ['', '%s: the cached page while another process commits '
             '(medians)' % storage_name,
             '| situation | -c | req/s | x ceiling | hits | commits | '
             'verified |', '| :-- | --: | --: | --: | --: | --: | --: |']
    for concurrency in concurrencies:
        ceiling = statistics.median(
            entry['rps'] for entry in runs[('ceiling', concurrency)])
        for situation in ('ceiling',) + SITUATIONS:
            entries = runs[(situation, concurrency)]
            rps = statistics.median(entry['rps'] for entry in entries)
            lines.append('| %s | %d | %.0f | %.2f | %s | %s | %d/%d |' % (
                situation, concurrency, rps, rps / ceiling if ceiling else 0,
                '-' if situation == 'ceiling' else '%.1f %%' % (
                    100 * statistics.median(
                        entry['hit_rate'] for entry in entries)),
                '-' if situation == 'ceiling' else '%.0f' % statistics.median(
                    entry['commits'] for entry in entries),
                sum(entry['verified'] for entry in entries), len(entries)))
    return '\n'.join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks.cachecommits',
        description=__doc__.split('\n\n')[0])
    parser.add_argument('--storages', default='sqlite,mysql')
    parser.add_argument('--concurrency', default='8,1')
    parser.add_argument('--requests', type=int, default=3000)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--rate', type=float, default=10.0,
                        help='commits a second of the other process')
    parser.add_argument('--configs', default='mod_wsgi:2x1',
                        help='the server configuration')
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['commit']:
        commit_loop(argv[1], argv[2], float(argv[3]))
        return
    args = build_parser().parse_args(argv)
    config = parse_config(args.configs)
    concurrencies = [int(value) for value in args.concurrency.split(',')]
    loads = [Load(args.requests, concurrency)
             for concurrency in concurrencies]
    for storage_name in args.storages.split(','):
        runs = measure_storage(storage_name, config, loads, args.rounds,
                               args.rate)
        print(table(storage_name, runs, concurrencies), flush=True)


if __name__ == '__main__':
    main()
