"""Subcommands of ``zope-pipeline`` (see zope.pipeline.cli), and what
several of them share: their ini arguments, loading the site, reading a
secret.

``zope-pipeline --help`` imports every command module
(``cli.build_parser``), so a command imports what only running it needs
(the engine, the ZODB, paste.deploy, bcrypt) inside the function that
uses it, marked ``# late: --help``; everything else at the top.
"""

import getpass
import os
import sys

from zope.pipeline.serving.layout import become_database_user


def add_ini_arguments(parser, example='etc/deploy.ini'):
    """The arguments every command that loads a site takes: the ini
    (``example`` in its help) and ``--name``, its application."""
    parser.add_argument('ini', help='paste.deploy ini file, e.g. ' + example)
    parser.add_argument('--name', default='main',
                        help='application name in the ini (default: main)')


def load_publisher(ini, name='main', opens_database=True, reads=()):
    """Load a paste.deploy ini and return the zope.pipeline Publisher in it
    (through any filters that wrap it); ``load_site_application``."""
    return load_site_application(ini, name, opens_database, reads)[1]


def load_site_application(ini, name='main', opens_database=True, reads=()):
    """Load a paste.deploy ini: (its WSGI application, with the filters
    the ini wraps it in, the zope.pipeline Publisher inside it).

    A command that opens the site's database (``opens_database``, the
    default) is run as the database's user when root runs it and another
    user can change the database (``zope.pipeline.serving.layout.
    become_database_user``; ``reads``: more files it reads): a command
    that loads the site some other way calls
    ``become_database_user`` itself, before it loads the site."""
    from paste.deploy import loadapp  # late: --help

    from zope.pipeline import app as app_module  # late: --help
    if opens_database:
        become_database_user(os.path.abspath(ini), name, reads)
    before = len(app_module.built)
    application = loadapp('config:' + os.path.abspath(ini), name=name)
    if len(app_module.built) == before:
        raise SystemExit('%s builds no zope.pipeline publisher.' % ini)
    return application, app_module.built[-1]


def read_secret(path, variable, prompt=None, confirm=True):
    """A secret from the first line of ``path``, else the environment
    variable, else a prompt (when ``prompt`` is given and there is a
    terminal); None when there is none."""
    if path:
        try:
            with open(path) as stream:
                return stream.readline().rstrip('\r\n')
        except OSError as error:
            raise SystemExit('Cannot read the password file %s: %s'
                             % (path, error.strerror)) from None
    if os.environ.get(variable):
        return os.environ[variable]
    if prompt is None:
        return None
    if not sys.stdin.isatty():
        raise SystemExit('No password: give it in a file (see --help), in '
                         '$%s, or run this on a terminal to be asked.'
                         % variable)
    first = getpass.getpass(prompt)
    if confirm and getpass.getpass('Again: ') != first:
        raise SystemExit('The two passwords differ.')
    return first
