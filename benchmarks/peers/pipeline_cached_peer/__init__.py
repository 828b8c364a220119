"""The zope.pipeline peer with its response cache on: the same site and
page as ``pipeline_peer``, the page's view declared cacheable
(``pipeline:cacheable``) and ``response_cache.enabled = true``.  After
the first two requests of the page, a request is answered from the
stored page once the objects it read are checked unchanged."""

import os

from benchmarks.peers import pipeline_peer
from benchmarks.peers import write_file
from benchmarks.scripts import bench_ini

SITE_ZCML = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         'site.zcml')

SETTINGS = dict(pipeline_peer.SETTINGS, **{'response_cache.enabled': 'true'})


def write_ini(zodb_config, workdir):
    return write_file(os.path.join(workdir, 'pipeline-cached-peer.ini'),
                      bench_ini(SITE_ZCML, SETTINGS, zodb_config))


def make_app(zodb_config, workdir):
    """The publisher of the cached peer on the database of
    ``zodb_config``."""
    from paste.deploy import loadapp

    from zope.pipeline.serving.startup import open_databases
    publisher = loadapp('config:' + write_ini(zodb_config, workdir))
    open_databases(publisher)
    return publisher
