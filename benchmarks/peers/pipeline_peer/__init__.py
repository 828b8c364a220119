"""The zope.pipeline peer: the standard stages (zope.pipeline's
``site.zcml``, security included), ``folder/page`` and its default view, a
``browser:page`` whose zope.pagetemplate template Chameleon compiles
(``zope.pipeline.publishing.templates``, included by ``site.zcml``)."""

import os

from benchmarks.peers import write_file
from benchmarks.scripts import bench_ini

SITE_ZCML = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         'site.zcml')

#: As etc/deploy.ini sets them.
SETTINGS = {
    'handle_error.debug': 'false',
    'retry.attempts': '4',
    'open_root.populate': 'benchmarks.peers.pipeline_peer.content.populate',
}


def write_ini(zodb_config, workdir, site_zcml=SITE_ZCML):
    return write_file(os.path.join(workdir, 'pipeline-peer.ini'),
                      bench_ini(site_zcml, SETTINGS, zodb_config))


def make_app(zodb_config, workdir, site_zcml=SITE_ZCML):
    """The publisher of ``site_zcml`` on the database of ``zodb_config``
    (opened, and bootstrapped at its first start, in this process)."""
    from paste.deploy import loadapp

    from zope.pipeline.serving.startup import open_databases
    publisher = loadapp('config:' + write_ini(zodb_config, workdir,
                                              site_zcml))
    open_databases(publisher)
    return publisher
