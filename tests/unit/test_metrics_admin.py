"""The administrator page's charts, from group snapshots."""

import re

import pytest

from zope.pipeline.metrics import admin
from zope.pipeline.metrics.charts import Line
from zope.pipeline.metrics.charts import LogScale
from zope.pipeline.metrics.charts import chart
from zope.pipeline.metrics.charts import nice_maximum
from zope.pipeline.metrics.charts import segments
from zope.pipeline.metrics.charts import tick_label
from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.group import merge


class FakeClock:

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def history(views=('Page:index.html',), steps=6, gap_at=None,
            with_server=False):
    """A snapshot of ``steps`` steps of load; step ``gap_at`` unknown."""
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, heartbeat=10, clock=clock)
    for index in range(steps):
        start = 1000 + index * 10
        if index == gap_at:
            collector.advance(start + 10.5)     # longer than the heartbeat
            continue
        for number, view in enumerate(views):
            for request in range(number + 1):
                record = collector.begin(start + request)
                record.view = view
                record.status = '200 OK'
                record.attempt = 2 if request == 0 else 1
                collector.finish(record, start + request + 0.1 * (number + 1))
        if with_server:
            collector.add_server_utilization(start, start + 10, 0.3, 4)
        collector.advance(start + 10)
    return merge([collector.snapshot()])


def polylines(svg):
    return re.findall(r'<polyline points="([^"]*)"', svg)


def test_the_page_draws_four_charts_and_the_totals():
    page = admin.render_page(history(), 6)
    assert page.count('<svg') == 4
    for title in ('Requests', 'Latency p50', 'Capacity utilisation',
                  'Retries'):
        assert title in page
    assert '<td>Page:index.html</td><td>6</td>' in page
    assert 'mod_wsgi' not in page


def test_an_unknown_step_breaks_the_line_instead_of_drawing_zero():
    window = admin.Window(history(steps=6, gap_at=2), 6)
    svg = admin.requests_chart(window)
    (first, second) = polylines(svg)        # steps 0-1, then 3-5
    assert len(first.split()) == 2 and len(second.split()) == 3


def test_mod_wsgi_utilisation_is_drawn_beside_ours():
    svg = admin.utilization_chart(admin.Window(history(with_server=True), 6))
    assert '>mod_wsgi</text>' in svg
    assert '>all views</text>' in svg


def test_the_busiest_views_are_drawn_and_the_rest_grouped_as_other():
    views = ['view%d' % number for number in range(8)]
    window = admin.Window(history(views=views, steps=2), 2)
    groups = admin.groups_of(window)
    assert [label for label, _ in groups] == [
        'view7', 'view6', 'view5', 'view4', 'view3', 'view2', 'other']
    assert groups[-1][1] == ['view1', 'view0']
    svg = admin.latency_chart(window)
    assert '>p50 view7</text>' in svg and '>p99 other</text>' in svg


def test_a_page_without_complete_steps_says_so():
    snapshot = merge([])
    page = admin.render_page(snapshot, 10)
    assert page.count('no complete steps yet') == 4


def test_chart_scales_and_shapes():
    assert nice_maximum(0) == 1.0
    assert nice_maximum(0.013) == 0.02
    assert nice_maximum(3) == 5
    assert nice_maximum(7) == 10
    assert nice_maximum(100) == 100
    assert list(segments([(0, 1), (1, None), (2, 3), (3, 4)])) == [
        [(0, 1)], [(2, 3), (3, 4)]]
    svg = chart('Single', 'x', [Line('a very long view name indeed', [
        (0, 5)], '#000', '2,2')], 0, 10, maximum=10)
    assert '<circle' in svg and 'a very long view name i…' in svg
    assert 'stroke-dasharray="2,2"' in svg
    assert [tick_label(value) for value in (0.25, 5, 120, 2500)] == [
        '0.25', '5', '120', '2.5k']


def test_latencies_are_drawn_on_whole_decades():
    scale = LogScale([0.3, 45])
    assert scale.ticks == [0.1, 1, 10, 100]
    assert scale.fraction(10) == pytest.approx(2 / 3)
    assert scale.fraction(0) == 0.0
    assert LogScale([]).ticks == [1, 10]
    svg = chart('Latency', 'ms', [Line('a', [(0, 0.3), (1, 45)], '#000')],
                0, 1, log=True)
    assert '>0.1</text>' in svg and '>100</text>' in svg


class FakeResponse:

    def __init__(self):
        self.headers = {}

    def setHeader(self, name, value):
        self.headers[name] = value


class FakeRequest:

    def __init__(self):
        self.response = FakeResponse()


def test_the_view_explains_when_there_is_no_metrics_stage(clean_zope):
    request = FakeRequest()
    page = admin.MetricsPage(None, request)()
    assert 'not in the pipeline' in page
    assert request.response.headers['Content-Type'].startswith('text/html')
