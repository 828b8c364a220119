"""Per-process aggregation of request records into steps and totals.

The request thread does only what cannot wait: it makes a ``Record`` when
the request enters (``begin``) and hands it over when the body is closed
(``finish``): a set insert, a set removal and a deque append.  Everything
else happens in ``advance``, called from the background worker (or by the
pages that read the numbers): records are drained into per-step, per-view
amounts and into lifetime totals; known time is covered up to now when the
previous call is no longer ago than the heartbeat; and when steps end,
requests still in flight get their busy time up to the step's end, so a
closed step's busy thread-seconds (and capacity utilisation) are final
even while long requests stream on.
"""

import collections
import os
import threading
import time

from zope.pipeline import environ as keys
from zope.pipeline.metrics.histogram import DEFAULT_BOUNDS
from zope.pipeline.metrics.histogram import bound_index
from zope.pipeline.metrics.histogram import fine_bucket
from zope.pipeline.metrics.rrd import align
from zope.pipeline.metrics.rrd import has_value
from zope.pipeline.metrics.rrd import spread

#: The view label of requests that published no view (404s, early errors).
NO_VIEW = 'none'


class Record:
    """What one request did; filled by the metrics stages, read after close."""

    __slots__ = ('start', 'end', 'accounted', 'view', 'attempt', 'status',
                 'headers', 'bytes', 'blocks', 'cache')

    def __init__(self, start):
        self.start = self.accounted = start
        self.end = None
        self.view = None
        self.attempt = 1
        self.status = ''
        self.headers = ()
        self.bytes = 0
        self.blocks = 0
        #: What the response cache did for this request ({event: count}:
        #: hits, misses, invalidations, stores, evictions), or None.
        self.cache = None


#: The response cache's events, as counted by view (``Record.cache``).
CACHE_EVENTS = ('hits', 'misses', 'invalidations', 'stores', 'evictions')


def status_code(status):
    """The code of a WSGI status line ('200 OK' gives 200); 0 if none."""
    try:
        return int(status[:3])
    except ValueError:
        return 0


class ViewStep:
    """One view's amounts in one step."""

    __slots__ = ('requests', 'statuses', 'bytes', 'blocks', 'retries',
                 'duration', 'busy', 'latency')

    def __init__(self):
        self.requests = self.bytes = self.blocks = self.retries = 0
        self.duration = self.busy = 0.0
        self.statuses = {}
        self.latency = {}


class Step:
    """One step of this process: known seconds, busy seconds, per view."""

    __slots__ = ('start', 'known', 'busy', 'server_busy', 'server_capacity',
                 'views')

    def __init__(self, start):
        self.start = start
        self.known = self.busy = 0.0
        self.server_busy = self.server_capacity = 0.0
        self.views = {}

    def view(self, name):
        view = self.views.get(name)
        if view is None:
            view = self.views[name] = ViewStep()
        return view


class ViewTotals:
    """One view's lifetime counters, as Prometheus exposes them."""

    __slots__ = ('statuses', 'bytes', 'blocks', 'retries', 'duration',
                 'buckets', 'cache')

    def __init__(self, bucket_count):
        self.statuses = {}
        self.cache = {}
        self.bytes = self.blocks = self.retries = 0
        self.duration = 0.0
        self.buckets = [0] * bucket_count


class Progress:
    """What one ``advance`` did: the records drained, the steps closed."""

    __slots__ = ('records', 'closed')

    def __init__(self, records, closed):
        self.records = records
        self.closed = closed


class Collector:
    """Steps and totals of one process (see the module docstring)."""

    def __init__(self, step=10.0, rows=360, threads=4, heartbeat=None,
                 bounds=DEFAULT_BOUNDS, clock=time.time):
        self.step = float(step)
        self.rows = rows
        self.threads = threads
        self.heartbeat = float(heartbeat) if heartbeat else 2 * self.step
        self.bounds = tuple(bounds)
        self.clock = clock
        self.lock = threading.Lock()
        self.active = set()
        self.finished = collections.deque()
        self.steps = {}
        self.totals = {}
        self.seen = clock()
        self.closed_until = align(self.seen, self.step)

    # -- the request thread

    def begin(self, moment):
        """Return the Record of a request that entered at ``moment``."""
        record = Record(moment)
        self.active.add(record)
        return record

    def forget(self, record):
        """Drop a request that is not to be counted (a scrape)."""
        self.active.discard(record)

    def finish(self, record, moment):
        """Hand over a request whose body was closed at ``moment``."""
        record.end = moment
        self.active.discard(record)
        self.finished.append(record)

    def finish_by(self, record, clock):
        """``finish(record, clock())``: the callback of a page's body,
        one call when its ``close()`` comes."""
        self.finish(record, clock())

    # -- aggregation

    def advance(self, now=None):
        """Drain finished records, cover known time, close ended steps."""
        with self.lock:
            now = self.clock() if now is None else now
            records = self._drain()
            self._cover(now)
            closed = self._close_steps(now)
            self._prune()
            return Progress(records, closed)

    def _drain(self):
        records = []
        finished = self.finished
        while finished:
            record = finished.popleft()
            self._aggregate(record)
            records.append(record)
        return records

    def _aggregate(self, record):
        view_name = record.view or NO_VIEW
        start = record.start
        end = max(record.end, start)
        duration = end - start
        retries = record.attempt - 1
        code = status_code(record.status)
        step_start = align(end, self.step)
        step = self._step(step_start)
        view = step.view(view_name)
        view.requests += 1
        view.statuses[code] = view.statuses.get(code, 0) + 1
        view.bytes += record.bytes
        view.blocks += record.blocks
        view.retries += retries
        view.duration += duration
        bucket = fine_bucket(duration)
        view.latency[bucket] = view.latency.get(bucket, 0) + 1
        if start >= step_start:         # within one step: the usual case
            view.busy += duration
            step.busy += max(0.0, end - max(record.accounted, start))
        else:
            self._add_busy(record.accounted, end)
            for begin, seconds in spread(start, end, self.step):
                self._step(begin).view(view_name).busy += seconds
        self._add_totals(view_name, code, record, retries, duration)

    def _add_totals(self, view_name, code, record, retries, duration):
        totals = self.totals.get(view_name)
        if totals is None:
            totals = self.totals[view_name] = ViewTotals(len(self.bounds) + 1)
        totals.statuses[code] = totals.statuses.get(code, 0) + 1
        totals.bytes += record.bytes
        totals.blocks += record.blocks
        totals.retries += retries
        totals.duration += duration
        totals.buckets[bound_index(self.bounds, duration)] += 1
        if record.cache:
            cache = totals.cache
            for event, count in record.cache.items():
                cache[event] = cache.get(event, 0) + count

    def _add_busy(self, begin, end):
        for start, seconds in spread(begin, end, self.step):
            self._step(start).busy += seconds

    def _cover(self, now):
        if self.seen < now <= self.seen + self.heartbeat:
            for start, seconds in spread(self.seen, now, self.step):
                self._step(start).known += seconds
        self.seen = max(self.seen, now)

    def _close_steps(self, now):
        boundary = align(now, self.step)
        if boundary <= self.closed_until:
            return []
        for record in tuple(self.active):
            end = record.end
            until = boundary if end is None else min(end, boundary)
            if until > record.accounted:
                self._add_busy(record.accounted, until)
                record.accounted = until
        closed = [self.steps[start] for start in sorted(self.steps)
                  if self.closed_until <= start < boundary]
        self.closed_until = boundary
        return closed

    def _step(self, start):
        step = self.steps.get(start)
        if step is None:
            step = self.steps[start] = Step(start)
        return step

    def _prune(self):
        if len(self.steps) <= self.rows:
            return
        for start in sorted(self.steps)[:-self.rows]:
            del self.steps[start]

    def add_server_utilization(self, begin, end, utilization, threads):
        """Spread a server-measured utilisation (mod_wsgi's) over steps."""
        with self.lock:
            for start, seconds in spread(begin, end, self.step):
                step = self._step(start)
                step.server_busy += utilization * threads * seconds
                step.server_capacity += threads * seconds

    # -- reading

    def utilization(self, start):
        """Busy thread-seconds over (known seconds x threads), or None."""
        step = self.steps.get(start)
        if step is None or not has_value(step.known, self.step):
            return None
        return step.busy / (step.known * self.threads)

    def snapshot(self, steps=60):
        """This process's numbers as plain data (JSON-able): lifetime totals
        and the last ``steps`` closed steps, normalised to full steps."""
        with self.lock:
            return {
                'pid': os.getpid(),
                'written': self.clock(),
                'step': self.step,
                'threads': self.threads,
                'bounds': list(self.bounds),
                'closed_until': self.closed_until,
                'totals': {name: totals_data(totals)
                           for name, totals in self.totals.items()},
                'steps': [self._step_data(step) for step in self._recent(
                    steps) if has_value(step.known, self.step)],
            }

    def _recent(self, count):
        closed = sorted(start for start in self.steps
                        if start < self.closed_until)
        return [self.steps[start] for start in closed[-count:]]

    def _step_data(self, step):
        scale = self.step / step.known
        return {
            'start': step.start,
            'busy': step.busy * scale,
            'capacity': self.step * self.threads,
            'server_busy': step.server_busy,
            'server_capacity': step.server_capacity,
            'views': {name: view_step_data(view, scale)
                      for name, view in step.views.items()},
        }


def totals_data(totals):
    return {'statuses': {str(code): count
                         for code, count in totals.statuses.items()},
            'bytes': totals.bytes, 'blocks': totals.blocks,
            'retries': totals.retries, 'duration': totals.duration,
            'buckets': list(totals.buckets), 'cache': dict(totals.cache)}


def view_step_data(view, scale):
    return {'requests': view.requests * scale,
            'errors': sum(count for code, count in view.statuses.items()
                          if code >= 500) * scale,
            'client_errors': sum(count for code, count
                                 in view.statuses.items()
                                 if 400 <= code < 500) * scale,
            'bytes': view.bytes * scale, 'blocks': view.blocks * scale,
            'retries': view.retries * scale, 'busy': view.busy * scale,
            'duration': view.duration * scale,
            'latency': {str(index): count
                        for index, count in view.latency.items()}}


def count_retry(event):
    """IBeforeRetry subscriber: the record learns of every new attempt,
    even when the last one ends in the retry stage's own 503."""
    record = event.environ.get(keys.RECORD_KEY)
    if record is not None and record.attempt <= event.attempt:
        record.attempt = event.attempt + 1
