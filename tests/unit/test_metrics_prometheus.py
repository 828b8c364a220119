"""The Prometheus exposition of a group snapshot, read back as a scraper
reads it (prometheus_client's parser)."""

import math

from zope.pipeline.metrics.group import empty_snapshot
from zope.pipeline.metrics.prometheus import CONTENT_TYPE
from zope.pipeline.metrics.prometheus import render

from tests.exposition import families
from tests.exposition import key
from tests.exposition import samples

ODD_VIEW = 'say "hi"\\\n'


def snapshot():
    data = empty_snapshot(10.0, [0.1, 1.0])
    data['processes'] = 2
    data['closed_until'] = 1020.0
    data['totals'] = {
        'Page:index.html': {'statuses': {'200': 7, '500': 1}, 'bytes': 900,
                            'blocks': 9, 'retries': 2, 'duration': 1.5,
                            'buckets': [5, 2, 1],
                            'cache': {'hits': 5, 'stores': 1}},
        ODD_VIEW: {'statuses': {'404': 1}, 'bytes': 9, 'blocks': 1,
                   'retries': 0, 'duration': 0.01, 'buckets': [1, 0, 0]}}
    data['steps'] = [{'start': 1010.0, 'busy': 5.0, 'capacity': 40.0,
                      'server_busy': 6.0, 'server_capacity': 40.0,
                      'views': {}}]
    return data


def test_requests_are_a_counter_by_view_and_status():
    text = render(snapshot())
    assert '# TYPE zope_pipeline_requests_total counter' in text
    kind, requests = families(text)['zope_pipeline_requests']
    assert kind == 'counter'
    assert requests == {
        key('zope_pipeline_requests_total', view='Page:index.html',
            status='200'): 7,
        key('zope_pipeline_requests_total', view='Page:index.html',
            status='500'): 1,
        key('zope_pipeline_requests_total', view=ODD_VIEW,
            status='404'): 1}


def test_counter_names_keep_one_total_suffix():
    text = render(snapshot())
    names = {line.split()[2] for line in text.splitlines()
             if line.startswith('# TYPE')}
    assert names == {
        'zope_pipeline_requests_total',
        'zope_pipeline_request_duration_seconds',
        'zope_pipeline_response_bytes_total',
        'zope_pipeline_response_blocks_total',
        'zope_pipeline_retries_total',
        'zope_pipeline_response_cache_events_total',
        'zope_pipeline_capacity_utilization',
        'zope_pipeline_modwsgi_capacity_utilization',
        'zope_pipeline_processes'}
    assert '_total_total' not in text and '_created' not in text


def test_durations_are_a_cumulative_histogram_by_view():
    kind, histogram = families(render(snapshot()))[
        'zope_pipeline_request_duration_seconds']
    name = 'zope_pipeline_request_duration_seconds'
    view = 'Page:index.html'
    assert kind == 'histogram'
    assert {sample: value for sample, value in histogram.items()
            if ('view', view) in sample[1]} == {
        key(name + '_bucket', view=view, le='0.1'): 5,
        key(name + '_bucket', view=view, le='1.0'): 7,
        key(name + '_bucket', view=view, le='+Inf'): 8,
        key(name + '_sum', view=view): 1.5,
        key(name + '_count', view=view): 8}


def test_bytes_retries_and_capacity_of_the_last_complete_step():
    exposed = samples(render(snapshot()))
    view = 'Page:index.html'
    assert exposed[key('zope_pipeline_response_bytes_total',
                       view=view)] == 900
    assert exposed[key('zope_pipeline_response_blocks_total',
                       view=view)] == 9
    assert exposed[key('zope_pipeline_retries_total', view=view)] == 2
    assert exposed[key('zope_pipeline_capacity_utilization')] == 0.125
    assert exposed[key('zope_pipeline_modwsgi_capacity_utilization')] == \
        0.15
    assert exposed[key('zope_pipeline_processes')] == 2


def test_label_values_with_quotes_backslashes_and_newlines_read_back():
    text = render(snapshot())
    assert 'view="say \\"hi\\"\\\\\\n"' in text
    assert key('zope_pipeline_retries_total', view=ODD_VIEW) in \
        samples(text)


def test_an_unknown_last_step_is_nan_and_mod_wsgi_only_when_measured():
    data = snapshot()
    data['closed_until'] = 1030.0
    text = render(data)
    assert math.isnan(samples(text)[key(
        'zope_pipeline_capacity_utilization')])
    assert 'modwsgi' not in text
    data['closed_until'] = None
    assert math.isnan(samples(render(data))[key(
        'zope_pipeline_capacity_utilization')])
    data = snapshot()
    data['steps'][0]['server_capacity'] = 0.0
    assert 'modwsgi' not in render(data)


def test_an_empty_group_has_every_family_and_no_samples_by_view():
    exposed = families(render(empty_snapshot()))
    assert exposed['zope_pipeline_requests'] == ('counter', {})
    assert exposed['zope_pipeline_request_duration_seconds'] == \
        ('histogram', {})
    assert exposed['zope_pipeline_processes'] == \
        ('gauge', {key('zope_pipeline_processes'): 0})


def test_the_content_type_is_the_text_format_written():
    assert CONTENT_TYPE == 'text/plain; version=0.0.4; charset=utf-8'


def test_response_cache_events_are_a_counter_by_view_and_event():
    kind, events = families(render(snapshot()))[
        'zope_pipeline_response_cache_events']
    assert kind == 'counter'
    name = 'zope_pipeline_response_cache_events_total'
    assert events == {
        key(name, view='Page:index.html', event='hits'): 5,
        key(name, view='Page:index.html', event='stores'): 1}
