"""Subcommands of ``zope-pipeline`` (see zope.pipeline.cli)."""

import os


def load_publisher(ini, name='main'):
    """Load a paste.deploy ini and return the zope.pipeline Publisher in it
    (through any filters that wrap it)."""
    from paste.deploy import loadapp

    from zope.pipeline import app as app_module
    before = len(app_module.built)
    loadapp('config:' + os.path.abspath(ini), name=name)
    if len(app_module.built) == before:
        raise SystemExit('%s builds no zope.pipeline publisher.' % ini)
    return app_module.built[-1]
