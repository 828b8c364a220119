"""Subcommands of ``zope-pipeline`` (see zope.pipeline.cli)."""

import os


def add_ini_arguments(parser, example='etc/deploy.ini'):
    """The arguments every command that loads a site takes: the ini
    (``example`` in its help) and ``--name``, its application."""
    parser.add_argument('ini', help='paste.deploy ini file, e.g. ' + example)
    parser.add_argument('--name', default='main',
                        help='application name in the ini (default: main)')


def load_publisher(ini, name='main'):
    """Load a paste.deploy ini and return the zope.pipeline Publisher in it
    (through any filters that wrap it)."""
    return load_site_application(ini, name)[1]


def load_site_application(ini, name='main'):
    """Load a paste.deploy ini: (its WSGI application, with the filters
    the ini wraps it in, the zope.pipeline Publisher inside it)."""
    from paste.deploy import loadapp

    from zope.pipeline import app as app_module
    before = len(app_module.built)
    application = loadapp('config:' + os.path.abspath(ini), name=name)
    if len(app_module.built) == before:
        raise SystemExit('%s builds no zope.pipeline publisher.' % ini)
    return application, app_module.built[-1]
