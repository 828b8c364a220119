"""Instructions per request of a page, counted by callgrind (in process).

Instruction counts do not depend on the load of a shared machine, so
they compare two versions of the code where CPU times cannot.  The site
is loaded, the page requested ``--warmup`` times (templates compiled,
caches filled), then ``--requests`` times inside ``operator.call``:
callgrind counts only what runs in that call
(``--collect-atstart=no --toggle-collect=_operator_call``).

``python -m benchmarks.instructions`` runs itself under valgrind and
prints the instructions per request; ``--inside`` is the part valgrind
runs.  ``--peer pipeline`` (or another app of ``benchmarks.peers``:
``pyramid``, ``pyramid-acl``, ``zope``, ``classic``, ``pipeline-checked``)
counts the peers' page instead, each app on its own RelStorage/SQLite
database in a scratch directory, so the peers compare by instructions too.

``--environ modwsgi`` gives each request the environ mod_wsgi passes in
daemon mode (``inprocess.modwsgi_environ``: 48 keys, against the 16 of
the minimal one): what a served request costs the application.
``--cache-sim`` has callgrind also simulate the caches and the branch
predictor, and prints per request the first-level instruction and data
cache misses and the mispredicted branches: why two counts of
instructions can take unequal times.

Python's string hashes are seeded at random in every process, which moves
the count of the same code by up to 1 % from run to run (the order of
sets and dicts, where a lookup probes): the counted process runs with
``PYTHONHASHSEED=0`` unless the environment sets it, and repeats its count
to 0.05 %.
"""

import argparse
import functools
import logging
import operator
import os
import re
import subprocess
import sys
import tempfile

#: The C function of ``operator.call``: callgrind counts inside it only.
TOGGLE = '_operator_call'


def callgrind_prefix(output):
    """valgrind's callgrind, counting inside ``operator.call`` only, its
    output in ``output``: the command before the counted Python's."""
    return ['valgrind', '--tool=callgrind', '--collect-atstart=no',
            '--toggle-collect=' + TOGGLE, '--callgrind-out-file=' + output]


#: callgrind's options simulating the caches and the branch predictor.
CACHE_SIM = ['--cache-sim=yes', '--branch-sim=yes']

#: The simulated events reported per request: (callgrind's name, ours).
MISSES = (('I1mr', 'instruction cache misses'),
          ('D1mr', 'data cache read misses'),
          ('D1mw', 'data cache write misses'),
          ('Bcm', 'conditional branches mispredicted'),
          ('Bim', 'indirect branches mispredicted'))


def valgrind_command(output, requests, warmup, path, site, peer=None,
                     environ='minimal', cache_sim=False):
    prefix = callgrind_prefix(output)
    if cache_sim:
        prefix[1:1] = CACHE_SIM
    command = prefix + [
        sys.executable, '-m', 'benchmarks.instructions', '--inside',
        '--requests', str(requests), '--warmup', str(warmup),
        '--path', path, '--site', site, '--environ', environ]
    if peer:
        command += ['--peer', peer]
    return command


def counted_environ(environ):
    """The environment of the counted process: a fixed hash seed (0)
    unless ``environ`` chooses one."""
    return dict(environ, PYTHONHASHSEED=environ.get('PYTHONHASHSEED', '0'))


def total_events(callgrind_output):
    """{event: total} from a callgrind output file's ``events:`` line and
    its ``totals:`` (or ``summary:``) line."""
    names = ['Ir']
    with open(callgrind_output) as output:
        for line in output:
            if line.startswith('events:'):
                names = line.split()[1:]
            match = re.match(r'(?:totals|summary):\s+([\d ]+)$', line)
            if match:
                return dict(zip(names, map(int, match.group(1).split())))
    raise ValueError('no totals line in %s' % callgrind_output)


def total_instructions(callgrind_output):
    """The instructions of a callgrind output file's totals line."""
    return total_events(callgrind_output)['Ir']


def site_request(site_name, path, environ='minimal'):
    """A function serving ``path`` of a benchmark site (in memory)."""
    from benchmarks.inprocess import ENVIRONS
    from benchmarks.inprocess import Bench
    from benchmarks.sites import discover
    site = discover(site_name)
    bench = Bench(site.site_zcml, site.settings_for('sqlite'), path)
    return functools.partial(bench.request, ENVIRONS[environ])


def peer_request(peer_name, path, workdir, environ='minimal'):
    """A function serving ``path`` of a peer's app, on RelStorage/SQLite
    in ``workdir``."""
    from benchmarks.inprocess import ENVIRONS
    from benchmarks.inprocess import call_app
    from benchmarks.peers import BY_NAME
    from benchmarks.storages import zconfig
    zodb_config = os.path.join(workdir, 'zodb.conf')
    with open(zodb_config, 'w') as output:
        output.write(zconfig('sqlite3', {
            'data-dir': os.path.join(workdir, 'data')}))
    app = BY_NAME[peer_name].make_app(zodb_config, workdir)
    return lambda: call_app(app, path, ENVIRONS[environ])


def run_requests(requests, warmup, path, site_name, peer=None,
                 environ='minimal'):
    """Serve ``path`` ``warmup`` times, then ``requests`` times inside
    ``operator.call``; returns the last status."""
    with tempfile.TemporaryDirectory() as workdir:
        request = (peer_request(peer, path, workdir, environ) if peer
                   else site_request(site_name, path, environ))
        return counted_calls(request, requests, warmup)[0]


def counted_calls(function, calls, warmup):
    """Call ``function`` ``warmup`` times, then ``calls`` times inside
    ``operator.call`` (what callgrind counts); returns what one more call
    returns."""
    for _ in range(warmup):
        function()

    def measured():
        for _ in range(calls):
            function()

    operator.call(measured)
    return function()


def peer_names():
    """The peers with an app (``benchmarks.peers``), in the table's order."""
    from benchmarks.peers import PEERS
    return [peer.name for peer in PEERS if peer.module]


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--path', default='/folder/page')
    parser.add_argument('--requests', type=int, default=50)
    parser.add_argument('--warmup', type=int, default=200)
    parser.add_argument('--site', default='auto',
                        choices=('auto', 'sample', 'minimal'))
    parser.add_argument('--peer', choices=peer_names(),
                        help="count a peer's app on the peers' page")
    parser.add_argument('--environ', default='minimal',
                        choices=('minimal', 'modwsgi'),
                        help="each request's environ: the minimal one, or "
                             "the one mod_wsgi passes")
    parser.add_argument('--cache-sim', action='store_true',
                        help='also count cache misses and mispredicted '
                             'branches per request')
    parser.add_argument('--output', help='keep the callgrind output here')
    parser.add_argument('--inside', action='store_true',
                        help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.disable(logging.CRITICAL)
    if args.inside:
        status = run_requests(args.requests, args.warmup, args.path,
                              args.site, args.peer, args.environ)
        return 0 if status.startswith('200') else 1
    with tempfile.TemporaryDirectory() as scratch:
        output = args.output or os.path.join(scratch, 'callgrind.out')
        completed = subprocess.run(
            valgrind_command(output, args.requests, args.warmup, args.path,
                             args.site, args.peer, args.environ,
                             args.cache_sim),
            capture_output=True, text=True,
            env=counted_environ(os.environ))
        if completed.returncode:
            raise SystemExit('valgrind failed:\n%s' % completed.stderr[-3000:])
        events = total_events(output)
    total = events['Ir']
    print('%s%s%s: %d instructions per request (%d requests, %d in all)'
          % (args.peer + ' ' if args.peer else '', args.path,
             '' if args.environ == 'minimal' else ' (%s environ)'
             % args.environ, total // args.requests, args.requests, total))
    for line in miss_lines(events, args.requests):
        print(line)
    return 0


def miss_lines(events, requests):
    """Lines of the simulated misses per request in ``events`` (none
    when callgrind did not simulate them)."""
    return ['  %s per request: %d' % (text, events[name] // requests)
            for name, text in MISSES if name in events]


if __name__ == '__main__':  # pragma: no cover - a command
    raise SystemExit(main())
