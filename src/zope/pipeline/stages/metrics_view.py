"""metrics_view: tell the metrics stage which view was published.

Registered just around ``call``; see ``zope.pipeline.stages.metrics``.
"""

from zope.interface import Interface

from zope.pipeline import environ as keys


class IMetricsViewSettings(Interface):
    """metrics_view has no settings."""


class MetricsViewStage:
    """metrics_view: copy the published view's name to the record.

    Registered just around ``call`` (which sets ``zope.pipeline.view`` in
    this attempt's environ copy), so the outer metrics stage learns which
    view was published without the call stage knowing about metrics.
    """

    settings_schema = IMetricsViewSettings
    reads = ()
    reads_if_present = (keys.RECORD_KEY, keys.VIEW_NAME)
    writes = ()

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        try:
            return self.next_app(environ, start_response)
        finally:
            record = environ.get(keys.RECORD_KEY)
            if record is not None:
                record.view = environ.get(keys.VIEW_NAME)
