"""The zope.pipeline view-checked peer: the pipeline peer's page (same
content, security declarations, template and settings) with the
view-checked security model configured in its ZCML
(``<pipeline:security model="view-checked" />``) and the view class
trusted (``ITrustedView``): traversal hands the view back unproxied and
its permission is checked once, at the call."""

import os

from benchmarks.peers import pipeline_peer

SITE_ZCML = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         'site.zcml')


def make_app(zodb_config, workdir, site_zcml=SITE_ZCML):
    """The view-checked publisher of ``site_zcml`` on the database of
    ``zodb_config``."""
    return pipeline_peer.make_app(zodb_config, workdir, site_zcml)
