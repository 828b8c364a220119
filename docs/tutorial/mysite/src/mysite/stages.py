"""server_timing: a stage that tells the browser how long the site took,
in a ``Server-Timing`` header (shown by the browser's developer tools)."""

import time

from zope.interface import Interface
from zope.schema import ASCIILine

from zope.pipeline.engine.contract import Contract


class IServerTimingSettings(Interface):
    """The ini settings of the stage: ``server_timing.<name>``."""

    metric = ASCIILine(title='Name of the metric in the header',
                       default='app')


class ServerTimingStage:
    """Time the rest of the chain; add the header to the response."""

    settings_schema = IServerTimingSettings
    #: The stage contract: the environ keys it needs and those it sets
    #: (none: it only adds a header to the response).  zope.pipeline
    #: checks it when the chain compiles; show-pipeline prints it.
    contract = Contract()

    #: zope.pipeline calls a stage factory as ``factory(next_app,
    #: build=build, **settings)``: ``build`` is the chain being built
    #: (IBuildContext), which this stage does not need.
    def __init__(self, next_app, build=None, metric='app'):
        self.next_app = next_app
        self.metric = metric

    def __call__(self, environ, start_response):
        started = time.perf_counter()

        def timed_start_response(status, headers, exc_info=None):
            milliseconds = (time.perf_counter() - started) * 1000
            headers = list(headers) + [
                ('Server-Timing', '%s;dur=%.1f' % (self.metric,
                                                   milliseconds))]
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)

        return self.next_app(environ, timed_start_response)
