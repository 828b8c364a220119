"""Run a Python script in the site of an ini, as zconsole run does: the
site's ZCML loaded, its database open, and the script's globals holding
root (the root folder, also the local site), app, publisher, registry,
db, connection and transaction_manager.  The script's sys.argv is the
script and the arguments after it.

Nothing is published and no security applies. The script commits what it
wants kept (transaction_manager.commit(), or transaction.commit()); what
is left is aborted when it ends, and when it fails. Run by root on a
database another user can change (the daemon user's), it runs as that
user, or refuses (docs/security.md).
"""

import argparse
import os
import runpy
import sys

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands.console import opened_site

NAME = 'run'
HELP = "run a Python script with the site's root and transaction manager"


def add_arguments(parser):
    add_ini_arguments(parser)
    parser.add_argument('script', metavar='SCRIPT',
                        help='the Python file to run')
    parser.add_argument('arguments', nargs=argparse.REMAINDER,
                        metavar='ARGUMENT',
                        help="the script's arguments (its sys.argv[1:])")


def run(args):
    script = os.path.abspath(args.script)
    if not os.path.isfile(script):
        raise SystemExit('The script %s does not exist.' % script)
    with opened_site(args.ini, args.name, reads=[script]) as names:
        saved_argv = sys.argv
        sys.argv = [script] + list(args.arguments)
        try:
            runpy.run_path(script, init_globals=names, run_name='__main__')
        finally:
            sys.argv = saved_argv
    return 0
