"""Subcommands of ``zope-pipeline`` (see zope.pipeline.cli)."""

import os


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
    user can change the database (``zope.pipeline.layout.
    become_database_user``; ``reads``: more files it reads): a command
    that loads the site some other way calls
    ``become_database_user`` itself, before it loads the site."""
    from paste.deploy import loadapp

    from zope.pipeline import app as app_module
    if opens_database:
        from zope.pipeline.layout import become_database_user
        become_database_user(os.path.abspath(ini), name, reads)
    before = len(app_module.built)
    application = loadapp('config:' + os.path.abspath(ini), name=name)
    if len(app_module.built) == before:
        raise SystemExit('%s builds no zope.pipeline publisher.' % ini)
    return application, app_module.built[-1]
