"""An interactive Python prompt in the site of an ini, as pshell and
zconsole debug give: the site's ZCML loaded, its database open, and root
(the root folder, also the local site), app (the WSGI application),
publisher, registry (the global component registry), db, connection and
transaction_manager at hand.

Nothing is published and no security applies: the objects are not
proxied. Changes are kept only when committed with
transaction_manager.commit(); whatever is left is aborted at exit
(Ctrl-D). Stop the servers of a SQLite database first, or expect
conflicts with them. Run by root on a database another user can change
(the daemon user's), it runs as that user, or refuses
(docs/security.md).
"""

import code

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands.console import describe_names
from zope.pipeline.commands.console import opened_site

NAME = 'shell'
HELP = ('an interactive Python prompt with the site\'s root, application, '
        'registry and transaction manager')


def add_arguments(parser):
    add_ini_arguments(parser)


def run(args):
    with opened_site(args.ini, args.name) as names:
        banner = ('zope.pipeline shell for %s.  At hand:\n%s\nCommit with '
                  'transaction_manager.commit(); what is not committed is '
                  'aborted at exit (Ctrl-D).'
                  % (args.ini, describe_names()))
        code.interact(banner=banner, local=names, exitmsg='')
    return 0
