"""The benchmark command: ``python -m benchmarks`` (``make bench``).

Without options it runs the full plan and regenerates
``benchmarks/RESULTS.md``, ``benchmarks/results/results.json``, the charts
and the profile; ``--quick`` runs a subset (two server configurations,
``-c 8``, fewer requests) into ``benchmarks/results/quick/`` and prints the
tables.  ``--peers`` runs the peers comparison alone (the same page by
the ceiling, Pyramid, Zope, the classic Zope 3 publisher and
zope.pipeline), ``--paste`` the servers comparison alone (the classic
publisher and zope.pipeline under paste.httpserver and mod_wsgi 2x1); each
puts its part into the saved results and RESULTS.md.  ``--render
results.json`` redraws a saved run without measuring.
"""

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys

from benchmarks import charts
from benchmarks import harness
from benchmarks import peers
from benchmarks import report
from benchmarks import sites
from benchmarks.servers import MOD_WSGI_EXPRESS
from benchmarks.servers import parse_config
from benchmarks.workspace import server_user

BENCHMARKS = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(BENCHMARKS, 'results')
RESULTS_MD = os.path.join(BENCHMARKS, 'RESULTS.md')


def comma_list(convert=str):
    def parse(text):
        return [convert(item.strip()) for item in text.split(',')
                if item.strip()]
    return parse


def add_arguments(parser):
    parser.add_argument('--quick', action='store_true',
                        help='a subset that finishes in a few minutes and '
                             'prints the tables')
    parser.add_argument('--peers', action='store_true',
                        help='only the peers comparison: the same page by '
                             'the plain-WSGI ceiling, Pyramid, Zope, the '
                             'classic Zope 3 publisher and zope.pipeline, '
                             'interleaved round by round')
    parser.add_argument('--paste', action='store_true',
                        help='only the servers comparison: the classic '
                             'publisher and zope.pipeline on the peers\' '
                             'page under paste.httpserver (1x10) and '
                             'mod_wsgi 2x1, interleaved (with --peers: both)')
    parser.add_argument('--peer-apps', type=comma_list(),
                        help='apps of the peers (or servers) comparison, '
                             'of: %s; NAME@CHECKOUT serves NAME from the '
                             'code of another checkout of zope.pipeline '
                             '(two versions side by side in one run)'
                             % ', '.join(peers.BY_NAME))
    parser.add_argument('--site', choices=('auto', 'sample', 'minimal'),
                        default='auto',
                        help='the sample site if installed (auto), or the '
                             'benchmark-only minimal site')
    parser.add_argument('--configs', type=comma_list(parse_config),
                        help='server configurations, e.g. '
                             'waitress:1x4,mod_wsgi:2x1')
    parser.add_argument('--storages', type=comma_list(),
                        help='sqlite,mysql')
    parser.add_argument('--concurrency', type=comma_list(int),
                        help='ab -c values, e.g. 1,8')
    parser.add_argument('--keep-alive', choices=('off', 'on', 'both'),
                        help='ab without -k, with -k, or both')
    parser.add_argument('--requests', type=int, help='ab -n per run')
    parser.add_argument('--repeats', type=int, help='runs per measurement')
    parser.add_argument('--warmup', type=int,
                        help='requests before each measurement')
    parser.add_argument('--principals', type=int, metavar='N',
                        help='principals in the site\'s principals file '
                             '(default: none; the start-up part shows '
                             'whether they cost a worker time)')
    parser.add_argument('--only', type=comma_list(),
                        help='parts to run, of: %s' % ', '.join(
                            harness.PARTS))
    parser.add_argument('--output-dir',
                        help='where results.json, charts and the profile go')
    parser.add_argument('--results-md', help='the Markdown file to write')
    parser.add_argument('--keep-workspace', action='store_true',
                        help='keep the scratch directory (logs, server '
                             'roots) for inspection')
    parser.add_argument('--render', metavar='RESULTS_JSON',
                        help='render a saved results.json; measure nothing')


KEEP_ALIVE = {'off': [False], 'on': [True], 'both': [False, True]}
STORAGES = ('sqlite', 'mysql')


def make_plan(args):
    if args.peers or args.paste:
        plan = dataclasses.replace(harness.PEERS, mode=comparison_mode(args),
                                   parts=comparison_parts(args))
    else:
        plan = harness.QUICK if args.quick else harness.FULL
    changes = peer_changes(args)
    for name in ('configs', 'storages', 'requests', 'repeats', 'warmup',
                 'principals'):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.storages is not None and (
            not args.storages or set(args.storages) - set(STORAGES)):
        raise SystemExit('--storages takes one or more of: %s'
                         % ', '.join(STORAGES))
    if args.concurrency is not None:
        changes['concurrencies'] = args.concurrency
    if args.keep_alive is not None:
        changes['keep_alive'] = KEEP_ALIVE[args.keep_alive]
    if args.only is not None:
        unknown = set(args.only) - set(harness.PARTS)
        if unknown:
            raise SystemExit('Unknown parts %s; parts are: %s' % (
                ', '.join(sorted(unknown)), ', '.join(harness.PARTS)))
        changes['parts'] = tuple(args.only)
    return dataclasses.replace(plan, **changes)


def comparison_parts(args):
    return tuple(part for part, chosen in (('peers', args.peers),
                                           ('paste', args.paste)) if chosen)


def comparison_mode(args):
    return '+'.join(comparison_parts(args))


def peer_changes(args):
    """The peers comparison's plan as the options change it: ``--requests``
    (ab -n at every -c), ``--repeats`` (rounds), ``--warmup``,
    ``--concurrency``, ``--configs`` (the peers' one configuration, or the
    servers comparison's configurations) and ``--peer-apps``."""
    changes = {}
    for option, field in (('requests', 'peer_requests'),
                          ('repeats', 'peer_rounds'),
                          ('warmup', 'peer_warmup')):
        if getattr(args, option) is not None:
            changes[field] = getattr(args, option)
    if args.concurrency is not None:
        changes['peer_concurrencies'] = tuple(args.concurrency)
    if args.paste and args.configs:
        changes['paste_configs'] = tuple(args.configs)
    elif args.peers and args.configs:
        if len(args.configs) != 1:
            raise SystemExit('--peers runs one server configuration, e.g. '
                             '--configs mod_wsgi:2x1')
        changes['peer_config'] = args.configs[0]
    if args.peer_apps is not None:
        if not args.peer_apps:
            raise SystemExit('--peer-apps takes one or more of: %s'
                             % ', '.join(peers.BY_NAME))
        for name in args.peer_apps:
            try:
                peers.resolve(name)
            except KeyError:
                raise SystemExit('--peer-apps takes one or more of: %s '
                                 '(each may be NAME@CHECKOUT)'
                                 % ', '.join(peers.BY_NAME)) from None
            except ValueError as error:
                raise SystemExit('--peer-apps %s: %s' % (name, error)) \
                    from None
        changes['paste_apps' if args.paste and not args.peers
                else 'peer_apps'] = tuple(args.peer_apps)
    return changes


def output_paths(args):
    """(output directory, RESULTS.md path): a full run regenerates
    benchmarks/RESULTS.md; a quick run, or one given an output directory,
    writes its RESULTS.md there."""
    if args.output_dir:
        directory = args.output_dir
    elif args.quick:
        directory = os.path.join(RESULTS_DIR, 'quick')
    else:
        return RESULTS_DIR, args.results_md or RESULTS_MD
    return directory, args.results_md or os.path.join(directory,
                                                      'RESULTS.md')


# -- what the machine must have


def check_ab():
    if shutil.which('ab') is None:
        raise SystemExit('ab (ApacheBench, Debian package apache2-utils) is '
                         'not installed.')


def check_mod_wsgi():
    if not os.path.exists(MOD_WSGI_EXPRESS):
        raise SystemExit('mod_wsgi-express is not installed beside %s '
                         '(pip install mod_wsgi), or leave mod_wsgi out of '
                         '--configs.' % sys.executable)
    user = server_user()
    if user is None:
        return
    completed = subprocess.run(
        ['runuser', '-u', user[0], '--', sys.executable, '-c',
         'import zope.pipeline'], capture_output=True, text=True)
    if completed.returncode:
        raise SystemExit(
            'Apache runs its daemon processes as %s, who cannot run %s and '
            'import zope.pipeline:\n%s\nMake the Python installation, the '
            'virtualenv and the code readable by %s (for a Python under '
            '/root: chmod o+x /root).' % (user[0], sys.executable,
                                          completed.stderr.strip()[-600:],
                                          user[0]))


def check_mysql():
    from benchmarks.environment import mariadb_version
    if mariadb_version() is None:
        raise SystemExit('Cannot connect to MySQL/MariaDB as root through '
                         '/run/mysqld/mysqld.sock; start it, or run with '
                         '--storages sqlite.')


def check_peers():
    missing = peers.missing_modules()
    if missing:
        raise SystemExit(
            'The peers comparison needs %s: install the bench extra '
            "(.venv/bin/pip install -c constraints.txt -e '.[bench]'), or "
            'leave out the peers (--only without peers and paste).'
            % ', '.join(missing))


def check_machine(plan):
    if {'peers', 'paste'} & set(plan.parts):
        check_peers()
    if {'http', 'peers', 'paste', 'startup', 'write'} & set(plan.parts):
        check_ab()
        configs = list(plan.configs) + [plan.write_config]
        if 'peers' in plan.parts:
            configs.append(plan.peer_config)
        if 'paste' in plan.parts:
            configs.extend(plan.paste_configs)
        if 'startup' in plan.parts or any(
                config.server == 'mod_wsgi' for config in configs):
            check_mod_wsgi()
        if 'mysql' in plan.storages:
            check_mysql()


# -- running and writing


def write_outputs(results, directory, markdown_path):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, 'results.json'), 'w') as output:
        json.dump(results, output, indent=1)
    drawn = charts.draw(results, directory)
    links = [{'title': chart['title'], 'path': os.path.relpath(
        chart['file'], os.path.dirname(os.path.abspath(markdown_path)))}
        for chart in drawn]
    with open(markdown_path, 'w') as output:
        output.write(report.render_results(results, links))
    return drawn


def with_saved_results(results, saved_path):
    """A peers or servers comparison run alone put into the saved results
    of the last run (when there are some), so RESULTS.md keeps its other
    parts."""
    parts = [part for part in ('peers', 'paste') if part in results]
    for part in parts:
        results[part]['command'] = results['command']
    if not os.path.exists(saved_path):
        return results
    with open(saved_path) as saved_file:
        saved = json.load(saved_file)
    for part in parts:
        saved[part] = results[part]
    return saved


def command_line(argv):
    shown = ' '.join(argv if argv is not None else sys.argv[1:])
    return ('python -m benchmarks %s' % shown).strip()


def run(args, argv=None, log=print):
    directory, markdown_path = output_paths(args)
    if args.render:
        with open(args.render) as saved:
            results = json.load(saved)
    else:
        plan = make_plan(args)
        check_machine(plan)
        site = sites.discover(args.site)
        log('Benchmarking %s (%s run)' % (site.description, plan.mode))
        os.makedirs(directory, exist_ok=True)
        results = harness.Harness(plan, site, directory, log=log,
                                  keep=args.keep_workspace).run()
        results['command'] = command_line(argv)
        if args.peers or args.paste:
            results = with_saved_results(
                results, os.path.join(directory, 'results.json'))
    write_outputs(results, directory, markdown_path)
    log(report.render_console(results))
    log('Wrote %s and %s' % (markdown_path,
                             os.path.join(directory, 'results.json')))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks', description=__doc__.split('\n\n')[0])
    add_arguments(parser)
    return parser


def parse_args(*argv):
    """The options of ``python -m benchmarks ARGV...``."""
    return build_parser().parse_args(argv)


def main(argv=None):
    args = build_parser().parse_args(argv)
    return run(args, argv)
