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


def test_the_page_draws_five_charts_and_the_totals():
    page = admin.render_page(history(), 6)
    assert page.count('<svg') == 5
    for title in ('Requests', 'Latency p50', 'Error rate',
                  'Capacity utilisation', 'Retries'):
        assert title in page
    assert '<td>Page:index.html</td><td>6</td>' in page
    assert 'mod_wsgi' not in page
    assert 'http-equiv="refresh"' not in page       # off by default
    assert '<option value="0" selected>off</option>' in page


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
    assert page.count('no complete steps yet') == 5


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
    assert '<circle' in svg and '>a very long view name indeed<' in svg
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


def steps_with_statuses(statuses_per_step):
    """A snapshot of one view whose steps answered ``statuses``."""
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, heartbeat=10, clock=clock)
    for index, statuses in enumerate(statuses_per_step):
        start = 1000 + index * 10
        for number, status in enumerate(statuses):
            record = collector.begin(start + number * 0.5)
            record.view = 'Page:index.html'
            record.status = status
            collector.finish(record, start + number * 0.5 + 0.01)
        collector.advance(start + 10)
    return merge([collector.snapshot()])


def test_a_step_with_3_of_10_requests_5xx_has_an_error_rate_of_30_percent():
    snapshot = steps_with_statuses([
        ['200 OK'] * 7 + ['500 Internal Server Error'] * 3,
        ['200 OK'] * 8 + ['404 Not Found', '503 Service Unavailable'],
        ['200 OK'] * 10])
    window = admin.Window(snapshot, 3)
    step = window.steps[1000]
    assert admin.error_share(admin.view_data(step, ['Page:index.html'])) \
        == pytest.approx(30.0)
    svg = admin.errors_chart(window)
    (line,) = polylines(svg)[:1]
    heights = [float(point.split(',')[1]) for point in line.split()]
    top, bottom = 30, 230 - 34          # plot area; the scale is 0-100 %
    assert [(bottom - y) / (bottom - top) * 100 for y in heights] == \
        pytest.approx([30.0, 20.0, 0.0], abs=0.1)
    assert '>Error rate (% of requests 4xx or 5xx)</text>' in svg
    assert '>all views</text>' in svg


def test_a_step_without_requests_has_no_error_rate():
    assert admin.error_share({'requests': 0.0, 'errors': 0.0,
                              'client_errors': 0.0}) is None


def test_the_table_has_p50_and_p99_estimated_from_the_buckets():
    snapshot = steps_with_statuses([['200 OK'] * 10])
    page = admin.render_page(snapshot, 1)
    # ten durations of 10 ms, all in the (5 ms, 10 ms] bucket: p50 is
    # placed half way, p99 near its top.
    assert '<th>p50 ms</th><th>p99 ms</th>' in page
    assert '<td>7.5</td><td>10.0</td>' in page
    assert 'estimates from the histogram buckets' in page


def test_a_quantile_beyond_the_last_bucket_says_so():
    assert admin.milliseconds((10.0, True)) == '&gt; 10000'
    assert admin.milliseconds((None, False)) == ''
    assert admin.milliseconds((0.0125, False)) == '12.5'


@pytest.mark.parametrize('text, period', [
    (None, None), ('', None), ('x', None), ('0', None), ('-3', None),
    ('10', 10), ('1', 5), ('99999', 3600)])
def test_the_refresh_period_is_off_by_default_and_bounded(text, period):
    assert admin.refresh_period(text) == period


def test_a_refresh_period_reloads_the_page_with_a_meta_refresh():
    page = admin.render_page(merge([]), 6, refresh=45)
    assert '<meta http-equiv="refresh" content="45">' in page
    assert '<option value="45" selected>every 45 s</option>' in page
    assert '<script' not in page


def test_view_names_are_escaped_in_the_legends_and_the_table():
    name = '<img src=x onerror=alert(1)>&'
    page = admin.render_page(history(views=(name,)), 6)
    assert name not in page
    assert '&lt;img src=x onerror=alert(1)&gt;&amp;' in page


def test_legends_lie_below_the_time_axis_and_wrap_into_rows():
    lines = [Line('view number %d with a longish name' % number,
                  [(0, number)], '#000') for number in range(6)]
    svg = chart('Many', 'x', lines, 0, 10)
    height = int(re.search(r'viewBox="0 0 720 (\d+)"', svg).group(1))
    entries = re.findall(r'<line x1="(\d+)" y1="([\d.]+)"', svg)
    assert len(entries) == 6
    assert all(float(y) > 230 for _, y in entries)   # below the axis
    assert len({y for _, y in entries}) == 3         # two to a row
    assert float(entries[-1][1]) < height


def test_a_label_too_long_for_a_row_is_squeezed_not_cut():
    label = 'x' * 120
    svg = chart('Long', 'x', [Line(label, [(0, 1)], '#000')], 0, 10)
    assert '>%s</text>' % label in svg
    assert 'textLength="628" lengthAdjust="spacingAndGlyphs"' in svg


def test_legend_widths_are_bounded_by_the_widest_glyphs():
    from zope.pipeline.metrics.charts import entry_width
    assert entry_width(Line('ab:1', [], '#000')) == pytest.approx(
        24 + 4 * 0.66 * 11)
    assert entry_width(Line('Ab', [], '#000')) == pytest.approx(
        24 + (0.8 + 0.66) * 11)
    assert entry_width(Line('Wm#', [], '#000')) == pytest.approx(24 + 33)


def test_the_response_cache_events_are_a_table_when_there_are_any():
    snapshot = merge([])
    assert admin.cache_table(snapshot) == ''
    snapshot['totals'] = {
        'Page:<b>': {'statuses': {'200': 3}, 'bytes': 1, 'blocks': 1,
                     'retries': 0, 'duration': 0.1, 'buckets': [3, 0, 0],
                     'cache': {'hits': 2, 'stores': 1}},
        'Other:x': {'statuses': {'200': 1}, 'bytes': 1, 'blocks': 1,
                    'retries': 0, 'duration': 0.1, 'buckets': [1, 0, 0]}}
    table = admin.cache_table(snapshot)
    assert '<td>Page:&lt;b&gt;</td><td>2</td><td>0</td><td>0</td>' \
        '<td>1</td><td>0</td>' in table
    assert 'Other:x' not in table
