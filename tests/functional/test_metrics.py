"""Request metrics through the full pipeline (ZCML, every standard stage)."""

import re

import pytest

from zope.pipeline.metrics import IMetricsRuntime

from .metrics_site import basic_auth
from .metrics_site import site_zcml
from .metrics_site.views import CONFLICTS
from tests.exposition import key
from tests.exposition import samples


@pytest.fixture
def app(make_testapp, tmp_path):
    def make(endpoint=None, **metrics):
        metrics.setdefault('modwsgi', 'false')
        metrics.setdefault('flush_interval', '3600')
        settings = {'metrics': metrics, 'retry': {'backoff': '0'}}
        if endpoint:
            settings['metrics_endpoint'] = endpoint
        return make_testapp(site_zcml(tmp_path), settings)
    return make


def test_requests_are_counted_per_published_view_and_status(app):
    client = app()
    for _ in range(3):
        assert client.get('/hello.html?size=7').body == b'x' * 7
    client.get('/no-such-thing', status=404)
    exposed = samples(client.get('/_metrics').text)
    view = '%s:hello.html' % _site_class()
    assert exposed[key('zope_pipeline_requests_total', view=view,
                       status='200')] == 3
    assert exposed[key('zope_pipeline_response_bytes_total',
                       view=view)] == 21
    assert exposed[key('zope_pipeline_request_duration_seconds_count',
                       view=view)] == 3
    assert exposed[key('zope_pipeline_requests_total', view='none',
                       status='404')] == 1
    assert key('zope_pipeline_capacity_utilization') in exposed


def _site_class():
    from zope.site.folder import Folder
    return Folder.__name__


def test_retried_conflicts_are_counted_against_the_view(app):
    client = app()
    CONFLICTS['left'] = 2
    assert client.get('/conflict.html').body == b'resolved'
    exposed = samples(client.get('/_metrics').text)
    assert exposed[key('zope_pipeline_retries_total',
                       view='%s:conflict.html' % _site_class())] == 2


def test_a_conflict_on_every_attempt_counts_every_retry_of_the_503(app):
    client = app()
    CONFLICTS['left'] = 20
    try:
        client.get('/conflict.html', status=503)
    finally:
        CONFLICTS['left'] = 0
    (record,) = _runtime().collector.advance().records
    assert record.attempt == 10 and record.status.startswith('503')


def _runtime():
    from zope.component import getUtility
    return getUtility(IMetricsRuntime)


def test_the_endpoint_answers_only_loopback_clients_by_default(app):
    client = app()
    client.get('/_metrics', status=404,
               extra_environ={'REMOTE_ADDR': '192.0.2.7'})
    client.get('/_metrics', extra_environ={'REMOTE_ADDR': '::1'})
    client.get('/_metrics', extra_environ={'REMOTE_ADDR': '::ffff:127.0.0.1'})


def test_the_endpoint_path_and_allowed_clients_are_ini_settings(app):
    client = app(endpoint={'allow': '192.0.2.0/24', 'path': '/ops/metrics'})
    client.get('/_metrics', status=404)
    assert 'zope_pipeline_requests_total' in client.get(
        '/ops/metrics', extra_environ={'REMOTE_ADDR': '192.0.2.7'}).text


def test_the_admin_page_needs_the_view_metrics_permission(app):
    client = app()
    client.get('/hello.html')
    client.get('/metrics.html', status=401)
    client.get('/metrics.html', status=401,
               headers=basic_auth('admin', 'wrong'))
    page = client.get('/metrics.html', headers=basic_auth('admin', 'secret'))
    assert page.content_type == 'text/html'
    assert len(re.findall('<svg', page.text)) == 5
    assert '%s:hello.html' % _site_class() in page.text


def test_the_admin_page_links_back_to_the_site(app):
    client = app()
    page = client.get('/metrics.html', headers=basic_auth('admin', 'secret'))
    [link] = page.html.select('nav.back a')
    assert link['href'] == 'http://localhost/'
    assert 'Back to the site' in link.text
    client.get('/metrics.html?refresh=30', status=401)
    page = client.get('/metrics.html?refresh=30',
                      headers=basic_auth('admin', 'secret'))
    assert '<meta http-equiv="refresh" content="30">' in page.text


def test_the_endpoint_answers_the_client_behind_a_trusted_proxy(
        make_testapp, tmp_path):
    client = make_testapp(site_zcml(tmp_path), {
        'metrics': {'modwsgi': 'false', 'flush_interval': '3600'},
        'metrics_endpoint': {'allow': '192.0.2.0/24'},
        'virtual_host': {'trusted_proxies': '127.0.0.1'}})
    client.get('/_metrics', status=404)
    client.get('/_metrics', headers={'X-Forwarded-For': '192.0.2.7'})


def test_the_metrics_stage_is_the_outermost(app):
    client = app()
    publisher = client.app
    names = publisher.outer.names()
    assert names[0] == 'metrics'
    assert names.index('metrics_endpoint') == \
        names.index('virtual_host') + 1
    # it learns the published view from the retry stage, which copies
    # the result the call stage declares back from each attempt
    retry = next(stage.app for stage in publisher.outer.stages
                 if stage.name == 'retry')
    assert retry.results == ('zope.pipeline.view',)
