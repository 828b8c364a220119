"""The Prometheus text exposition of a group snapshot."""

import math

from zope.pipeline.metrics.group import empty_snapshot
from zope.pipeline.metrics.prometheus import escape
from zope.pipeline.metrics.prometheus import number
from zope.pipeline.metrics.prometheus import render


def snapshot():
    data = empty_snapshot(10.0, [0.1, 1.0])
    data['processes'] = 2
    data['closed_until'] = 1020.0
    data['totals'] = {
        'Page:index.html': {'statuses': {'200': 7, '500': 1}, 'bytes': 900,
                            'blocks': 9, 'retries': 2, 'duration': 1.5,
                            'buckets': [5, 2, 1]},
        'say "hi"\\\n': {'statuses': {'404': 1}, 'bytes': 9, 'blocks': 1,
                         'retries': 0, 'duration': 0.01,
                         'buckets': [1, 0, 0]}}
    data['steps'] = [{'start': 1010.0, 'busy': 5.0, 'capacity': 40.0,
                      'server_busy': 6.0, 'server_capacity': 40.0,
                      'views': {}}]
    return data


def sample_lines(text):
    return [line for line in text.splitlines() if not line.startswith('#')]


def test_requests_are_a_counter_by_view_and_status():
    text = render(snapshot())
    assert '# TYPE zope_pipeline_requests_total counter' in text
    lines = sample_lines(text)
    assert 'zope_pipeline_requests_total{view="Page:index.html",' \
           'status="200"} 7' in lines
    assert 'zope_pipeline_requests_total{view="Page:index.html",' \
           'status="500"} 1' in lines


def test_durations_are_a_cumulative_histogram_by_view():
    lines = sample_lines(render(snapshot()))
    name = 'zope_pipeline_request_duration_seconds'
    assert [line for line in lines if line.startswith(name) and
            'Page' in line] == [
        name + '_bucket{view="Page:index.html",le="0.1"} 5',
        name + '_bucket{view="Page:index.html",le="1.0"} 7',
        name + '_bucket{view="Page:index.html",le="+Inf"} 8',
        name + '_sum{view="Page:index.html"} 1.5',
        name + '_count{view="Page:index.html"} 8']


def test_bytes_retries_and_capacity_of_the_last_complete_step():
    lines = sample_lines(render(snapshot()))
    assert 'zope_pipeline_response_bytes_total{view="Page:index.html"} ' \
           '900' in lines
    assert 'zope_pipeline_response_blocks_total{view="Page:index.html"} ' \
           '9' in lines
    assert 'zope_pipeline_retries_total{view="Page:index.html"} 2' in lines
    assert 'zope_pipeline_capacity_utilization 0.125' in lines
    assert 'zope_pipeline_modwsgi_capacity_utilization 0.15' in lines
    assert 'zope_pipeline_processes 2' in lines


def test_label_values_are_escaped():
    assert 'view="say \\"hi\\"\\\\\\n"' in render(snapshot())
    assert escape('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


def test_an_unknown_last_step_is_nan_and_mod_wsgi_only_when_measured():
    data = snapshot()
    data['closed_until'] = 1030.0
    text = render(data)
    assert 'zope_pipeline_capacity_utilization NaN' in sample_lines(text)
    assert 'modwsgi' not in text
    data['closed_until'] = None
    assert 'zope_pipeline_capacity_utilization NaN' in render(data)
    data = snapshot()
    data['steps'][0]['server_capacity'] = 0.0
    assert 'modwsgi' not in render(data)


def test_numbers_are_written_as_prometheus_reads_them():
    assert number(3.0) == '3'
    assert number(0.25) == '0.25'
    assert number(float('nan')) == 'NaN'
    assert number(None) == 'NaN'
    assert number(7) == '7'
    assert math.isinf(float(number(float('inf'))))
