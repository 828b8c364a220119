"""metrics: time, bytes, blocks, status, attempts and view of every request.

The outermost stage.  It measures each request from entering the pipeline
until ``close()`` of the body it returns (so streaming counts), and counts
the bytes and blocks the server gets through the body and through the
``write()`` callable.  The request's ``Record`` goes into the environ
(``zope.pipeline.metrics.record``); the retry stage copies the environ per
attempt, but shallowly, so every attempt's environ holds the same record.
The published view's name is ``zope.pipeline.view`` (``environ.VIEW_NAME``),
which the call stage (or the response cache, for a page it answers)
declares as a result of its contract: the retry stage copies it back to
this stage's environ after each attempt.  Attempts come from
``zope.pipeline.attempt`` after the response and, for attempts that end
in the retry stage's own 503, from its ``IBeforeRetry`` event.

The body is wrapped so that ``close()`` is forwarded exactly once, but:

- a list body (an error page made by an outer stage) is counted at once
  and returned as it is, so the server still sees a list: it has no
  ``close()`` to wait for, and its time ends when the pipeline returns;
- a list inside ``ClosingIterator`` wrappers (a page: the inner stages
  release the request and its connection at ``close()``) is counted at
  once, and the server iterates the list itself (no Python call per
  chunk); its time still ends at ``close()``;
- a ``wsgi.file_wrapper`` body is returned as it is, so the server can
  still send the file with ``sendfile``; it is counted at once, its bytes
  from ``Content-Length`` and its time ending when the pipeline returns
  (the trade-off: the transfer itself is not timed).

Everything else (aggregation, exporting) happens after ``close()``, in
the background (see ``zope.pipeline.metrics``).  The Prometheus endpoint
is the stage ``metrics_endpoint`` (``stages/metrics_endpoint.py``), after
``virtual_host``; what it answers sets ``zope.pipeline.unmetered`` and is
not counted.  Requests that published no view (a 404 in traversal, an
error page of an outer stage) are counted under the view ``none``.
"""

import functools
import time

from zope.component import provideUtility
from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool
from zope.schema import Float
from zope.schema import Int
from zope.schema import TextLine

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.http.wsgi import listed_chunks
from zope.pipeline.metrics import IMetricsRuntime
from zope.pipeline.metrics import modwsgi as modwsgi_server
from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.group import group_directory
from zope.pipeline.metrics.group import group_state
from zope.pipeline.metrics.histogram import DEFAULT_BOUNDS
from zope.pipeline.metrics.histogram import parse_bounds
from zope.pipeline.metrics.runtime import MetricsRuntime
from zope.pipeline.metrics.statsd import StatsdExporter
from zope.pipeline.metrics.statsd import parse_address

#: Server threads assumed per process when neither the setting nor
#: mod_wsgi says (waitress's default).
DEFAULT_THREADS = 4


class IMetricsSettings(Interface):

    step = Float(title='Seconds per aggregation step (steps are aligned '
                       'to the epoch)', default=10.0, min=1.0)
    rows = Int(title='Steps kept in memory per process', default=360,
               min=2)
    heartbeat = Float(title='Longest gap between samples before time '
                            'counts as unknown; 0 for twice the step',
                      default=0.0, min=0.0)
    threads = Int(title='Server threads per process (capacity); 0 to ask '
                        'mod_wsgi, else 4', default=0, min=0)
    state_dir = TextLine(
        title='Directory the processes of a group share their numbers in; '
              "'' for this process only (automatic under mod_wsgi)",
        default='', required=False)
    statsd = ASCIILine(title="statsd host:port; '' for no statsd",
                       default='', required=False)
    statsd_prefix = ASCIILine(title='Prefix of statsd names',
                              default='zope.pipeline')
    buckets = ASCIILine(
        title='Upper bounds in seconds of the Prometheus duration histogram',
        default=' '.join(repr(bound) for bound in DEFAULT_BOUNDS))
    flush_interval = Float(title='Seconds between background exports',
                           default=1.0, min=0.01)
    chart_steps = Int(title='Steps shown by the admin page and shared in '
                            'state files', default=60, min=2)
    modwsgi = Bool(title="Read mod_wsgi's own request metrics too, where "
                         'mod_wsgi is the server', default=True)


def check_settings(statsd, buckets):
    """Convert the settings the schema cannot; fail naming the ini key."""
    try:
        bounds = parse_bounds(buckets)
    except ValueError as exc:
        raise ConfigurationError('metrics.buckets: %s' % exc) from None
    try:
        if statsd:
            parse_address(statsd)
    except ValueError as exc:
        raise ConfigurationError('metrics.statsd: %s' % exc) from None
    return bounds


def account_list(record, body):
    for chunk in body:
        if chunk:
            record.bytes += len(chunk)
            record.blocks += 1


def content_length(headers):
    for name, value in headers:
        if name.lower() == 'content-length' and value.strip().isdigit():
            return int(value)
    return 0


class MeteredBody(ClosingIterator):
    """The body as the server sees it: counts blocks and bytes, and hands
    the record over when ``close()`` is called (``ClosingIterator``: the
    body is closed exactly once, then the record is finished)."""

    __slots__ = ('_record',)

    def __init__(self, iterable, record, finish, clock):
        super().__init__(iterable, lambda: finish(record, clock()))
        self._record = record

    def __iter__(self):
        self._iterator = iter(self._iterable)
        return self

    def __next__(self):
        chunk = next(self._iterator)
        if chunk:
            record = self._record
            record.bytes += len(chunk)
            record.blocks += 1
        return chunk


class MetricsStage:
    """Measure every request."""

    settings_schema = IMetricsSettings
    contract = Contract(
        reads_if_present=(keys.UNMETERED, keys.ATTEMPT, keys.VIEW_NAME),
        writes=(keys.RECORD_KEY,))

    def __init__(self, next_app, step=10.0, rows=360, heartbeat=0.0,
                 threads=0, state_dir='', statsd='',
                 statsd_prefix='zope.pipeline',
                 buckets=IMetricsSettings['buckets'].default,
                 flush_interval=1.0, chart_steps=60, modwsgi=True,
                 clock=time.time, build=None):
        self.next_app = next_app
        bounds = check_settings(statsd, buckets)
        self.clock = clock
        self.collector = Collector(
            step, rows, threads or modwsgi_threads(modwsgi), heartbeat,
            bounds, clock)
        directory, parent = group_directory(state_dir)
        self.runtime = MetricsRuntime(
            self.collector,
            group_state(directory, parent) if directory else None,
            StatsdExporter(statsd, statsd_prefix) if statsd else None,
            modwsgi, flush_interval, chart_steps)
        provideUtility(self.runtime, IMetricsRuntime)

    def __call__(self, environ, start_response):
        if not self.runtime.running:
            self.runtime.start()
        clock = self.clock
        collector = self.collector
        record = collector.begin(clock())
        environ[keys.RECORD_KEY] = record

        def metered_start_response(status, headers, exc_info=None):
            record.status = status
            record.headers = headers
            write = start_response(status, headers, exc_info)

            def metered_write(data):
                if data:
                    record.bytes += len(data)
                    record.blocks += 1
                return write(data)
            return metered_write

        try:
            result = self.next_app(environ, metered_start_response)
        except BaseException:
            if not record.status:
                record.status = '500 Internal Server Error'
            record.view = environ.get(keys.VIEW_NAME)
            collector.finish(record, clock())
            raise
        if environ.get(keys.UNMETERED):
            collector.forget(record)
            return result
        record.view = environ.get(keys.VIEW_NAME)
        attempt = environ.get(keys.ATTEMPT)
        if attempt is not None and attempt > record.attempt:
            record.attempt = attempt
        if type(result) is list:
            account_list(record, result)
            collector.finish(record, clock())
            return result
        wrapper = environ.get('wsgi.file_wrapper')
        if wrapper is not None and isinstance(wrapper, type) and \
                isinstance(result, wrapper):
            record.bytes = content_length(record.headers)
            record.blocks = 1
            collector.finish(record, clock())
            return result
        chunks = listed_chunks(result)
        if chunks is not None:
            account_list(record, chunks)
            return ClosingIterator(result, functools.partial(
                collector.finish_by, record, clock))
        return MeteredBody(result, record, collector.finish, clock)


def modwsgi_threads(use_modwsgi):
    if not use_modwsgi:
        return DEFAULT_THREADS
    return modwsgi_server.threads_per_process(DEFAULT_THREADS)
