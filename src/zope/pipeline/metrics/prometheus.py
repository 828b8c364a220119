"""The Prometheus exposition of a group snapshot, through prometheus_client.

``GroupCollector`` is a prometheus_client collector that turns one
snapshot (``group.merge``) into metric families: the lifetime totals as
counters and a histogram by view, the last complete step's capacity
utilisation as gauges.  ``render`` writes them in the text format that
``CONTENT_TYPE`` names; the numbers stay ours (``group``), only the format
is the library's.
"""

from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

#: The text format 0.0.4 that ``generate_latest`` writes (prometheus_client's
#: CONTENT_TYPE_LATEST names format 1.0.0, which its own exposition answers
#: only to scrapers asking for it, with an escaping parameter).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4

NAN = float('nan')

#: Counters by view: (name, key in the totals, help text).
VIEW_COUNTERS = (
    ('zope_pipeline_response_bytes_total', 'bytes',
     'Bytes of response bodies, by view.'),
    ('zope_pipeline_response_blocks_total', 'blocks',
     'Blocks (iterations and write() calls) of response bodies.'),
    ('zope_pipeline_retries_total', 'retries',
     'Attempts retried after a transient error (e.g. a conflict).'),
)


class GroupCollector(Collector):
    """The metric families of one group snapshot."""

    def __init__(self, snapshot):
        self.snapshot = snapshot

    def collect(self):
        totals = self.snapshot['totals']
        views = sorted(totals)
        yield requests(totals, views)
        yield durations(self.snapshot['bounds'], totals, views)
        for name, key, text in VIEW_COUNTERS:
            yield view_counter(name, text, key, totals, views)
        yield response_cache(totals, views)
        yield from gauges(self.snapshot)


def render(snapshot):
    """Return the exposition text for ``snapshot`` (see group.merge)."""
    registry = CollectorRegistry()
    registry.register(GroupCollector(snapshot))
    return generate_latest(registry).decode('utf-8')


def requests(totals, views):
    family = CounterMetricFamily(
        'zope_pipeline_requests_total',
        'Requests answered, by published view and status.',
        labels=('view', 'status'))
    for view in views:
        for code, count in sorted(totals[view]['statuses'].items()):
            family.add_metric((view, code), count)
    return family


def durations(bounds, totals, views):
    family = HistogramMetricFamily(
        'zope_pipeline_request_duration_seconds',
        'Time from entering the pipeline to closing the response body.',
        labels=('view',))
    for view in views:
        family.add_metric((view,), cumulative_buckets(
            bounds, totals[view]['buckets']), totals[view]['duration'])
    return family


def cumulative_buckets(bounds, counts):
    """[(le, count of durations up to le)] of per-bucket ``counts``."""
    buckets = []
    cumulative = 0
    for bound, count in zip([repr(float(bound)) for bound in bounds] +
                            ['+Inf'], counts):
        cumulative += count
        buckets.append((bound, cumulative))
    return buckets


def response_cache(totals, views):
    """The response cache's events (hits, misses, invalidations, stores,
    evictions) by view; only those that happened."""
    family = CounterMetricFamily(
        'zope_pipeline_response_cache_events_total',
        'Response cache events, by view: hits, misses (a cacheable page '
        'rendered), invalidations (a stored page dropped because an object '
        'it read changed), stores and evictions.',
        labels=('view', 'event'))
    for view in views:
        for event, count in sorted(totals[view].get('cache', {}).items()):
            family.add_metric((view, event), count)
    return family


def view_counter(name, text, key, totals, views):
    family = CounterMetricFamily(name, text, labels=('view',))
    for view in views:
        family.add_metric((view,), totals[view][key])
    return family


def last_complete_step(snapshot):
    """The last step every process had closed, or None."""
    closed = snapshot['closed_until']
    if closed is None:
        return None
    start = closed - snapshot['step']
    for step in snapshot['steps']:
        if step['start'] == start:
            return step
    return None


def utilization(busy, capacity):
    return busy / capacity if capacity else None


def gauges(snapshot):
    """Capacity utilisation of the last complete step (NaN when unknown;
    mod_wsgi's only when it was measured) and the number of processes."""
    step = last_complete_step(snapshot)
    ours = server = None
    if step is not None:
        ours = utilization(step['busy'], step['capacity'])
        server = utilization(step['server_busy'], step['server_capacity'])
    yield GaugeMetricFamily(
        'zope_pipeline_capacity_utilization',
        'Busy thread-seconds over available thread-seconds of the group '
        'in the last complete step.',
        value=NAN if ours is None else ours)
    if server is not None:
        yield GaugeMetricFamily(
            'zope_pipeline_modwsgi_capacity_utilization',
            "mod_wsgi's own capacity utilisation in the same step.",
            value=server)
    yield GaugeMetricFamily(
        'zope_pipeline_processes',
        'Processes of the group with live metrics state.',
        value=snapshot['processes'])
