"""Run the benchmarks of a source checkout (``benchmarks/``): ab against
waitress and mod_wsgi on SQLite and MySQL, verified server-side, with the
plain-WSGI ceiling, the in-process cost of the pipeline and its stages,
worker start-up, the write path, and the peers comparison (the same page
by Pyramid, Zope, zope.pipeline and the ceiling, interleaved; ``--peers``
runs it alone).  ``--quick`` runs a subset and prints the tables; without
it RESULTS.md and the charts are regenerated."""

import os
import sys

NAME = 'bench'
HELP = 'run the benchmarks (benchmarks/ of a source checkout)'


def candidate_roots():
    """Where a checkout may be: the current directory, then the checkout
    this package is installed from (editable installs, src/ layout)."""
    yield os.getcwd()
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, '..', '..', '..', '..'))


def find_benchmarks():
    """The directory holding ``benchmarks/``, or None."""
    for root in candidate_roots():
        if os.path.exists(os.path.join(root, 'benchmarks', 'cli.py')):
            return root
    return None


def import_cli():
    """``benchmarks.cli`` of the checkout, or None outside a checkout."""
    root = find_benchmarks()
    if root is None:
        return None
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks import cli
    return cli


def add_arguments(parser):
    cli = import_cli()
    if cli is not None:
        cli.add_arguments(parser)


def run(args):
    cli = import_cli()
    if cli is None:
        raise SystemExit('No benchmarks/ directory here: run `zope-pipeline '
                         'bench` from a source checkout of zope.pipeline.')
    return cli.run(args, sys.argv[2:])
