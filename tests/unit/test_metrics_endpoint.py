"""The Prometheus endpoint stage: allowed clients (after trusted proxies),
the bearer token, its settings."""

import pytest
import webtest
from wsgiref.validate import validator
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import environ as keys
from zope.pipeline.stages.metrics import MetricsStage
from zope.pipeline.stages.metrics_endpoint import MetricsEndpointStage

passed = []


def site(environ, start_response):
    passed.append(environ['PATH_INFO'])
    start_response('404 Not Found', [('Content-Type', 'text/plain')])
    return [b'app']


@pytest.fixture
def make_app(clean_zope):
    """The endpoint inside the metrics stage (which provides the runtime);
    ``client`` plays the virtual_host stage's resolved client address."""
    del passed[:]

    def make(client='127.0.0.1', **settings):
        endpoint = MetricsEndpointStage(site, **settings)

        def resolved(environ, start_response):
            if client is not None:
                environ[keys.CLIENT_ADDRESS] = client
            return endpoint(environ, start_response)
        metered = MetricsStage(resolved, modwsgi=False,
                               flush_interval=3600.0)
        return webtest.TestApp(validator(metered))
    return make


@pytest.mark.parametrize('client', ['127.0.0.1', '::1', '127.3.4.5'])
def test_the_prometheus_path_is_answered_for_loopback_clients(make_app,
                                                              client):
    app = make_app(client)
    response = app.get('/_metrics')
    assert response.content_type == 'text/plain'
    assert response.headers['Cache-Control'] == 'no-store'
    assert 'zope_pipeline_requests_total' in response.text
    assert app.head('/_metrics').body == b''
    assert passed == []


@pytest.mark.parametrize('client', ['192.0.2.1', '', None])
def test_other_clients_go_on_down_the_pipeline(make_app, client):
    app = make_app(client)
    app.get('/_metrics', status=404)
    assert passed == ['/_metrics']


def test_only_get_and_head_are_answered(make_app):
    app = make_app()
    app.post('/_metrics', status=404)
    assert passed == ['/_metrics']


def test_the_endpoint_path_and_clients_are_settings(make_app):
    app = make_app('192.0.2.9', path='/ops/metrics', allow='192.0.2.0/24')
    assert 'zope_pipeline' in app.get('/ops/metrics').text
    app.get('/_metrics', status=404)


def test_the_scrapes_are_not_counted(make_app):
    app = make_app()
    app.get('/_metrics')
    text = app.get('/_metrics').text
    assert 'status="200"' not in text


def test_a_token_is_required_when_set(make_app):
    app = make_app(token='s3cret')
    response = app.get('/_metrics', status=401)
    assert response.headers['WWW-Authenticate'] == 'Bearer realm="metrics"'
    assert b's3cret' not in response.body
    app.get('/_metrics', status=401,
            headers={'Authorization': 'Bearer s3cre'})
    app.get('/_metrics', status=401,
            headers={'Authorization': 'Basic czNjcmV0'})
    app.get('/_metrics', headers={'Authorization': 'Bearer s3cret'})


def test_a_token_from_a_file_is_read_once_at_start(make_app, tmp_path,
                                                   caplog):
    token_file = tmp_path / 'token'
    token_file.write_text('from-a-file\n')
    token_file.chmod(0o600)
    app = make_app(token_file=str(token_file))
    assert not caplog.records
    token_file.unlink()
    app.get('/_metrics', status=401)
    app.get('/_metrics', headers={'Authorization': 'Bearer from-a-file'})


def test_a_token_file_every_user_can_read_is_logged(make_app, tmp_path,
                                                    caplog):
    token_file = tmp_path / 'token'
    token_file.write_text('from-a-file')
    token_file.chmod(0o644)
    make_app(token_file=str(token_file))
    (record,) = caplog.records
    assert record.getMessage() == (
        'metrics_endpoint.token_file: %s is readable by every user of this '
        'machine; chmod o-r it.' % token_file)


def test_a_token_does_not_open_the_endpoint_to_other_addresses(make_app):
    app = make_app('192.0.2.1', token='s3cret')
    app.get('/_metrics', status=404,
            headers={'Authorization': 'Bearer s3cret'})


@pytest.mark.parametrize('settings, message', [
    ({'path': 'metrics'}, "metrics_endpoint.path must start with '/'"),
    ({'allow': '10.0.0.0/33'}, 'metrics_endpoint.allow: .10.0.0.0/33. is '
                               'not an IP address or network'),
    ({'token': 'a', 'token_file': '/nonexistent'},
     'metrics_endpoint.token and metrics_endpoint.token_file are both set'),
    ({'token_file': '/nonexistent/token'},
     'metrics_endpoint.token_file: cannot read the token from '
     '/nonexistent/token'),
])
def test_bad_settings_fail_naming_the_ini_key(clean_zope, settings, message):
    with pytest.raises(ConfigurationError, match=message):
        MetricsEndpointStage(site, **settings)


def test_an_empty_token_file_fails_naming_the_ini_key(clean_zope, tmp_path):
    token_file = tmp_path / 'token'
    token_file.write_text('\n')
    with pytest.raises(ConfigurationError,
                       match='metrics_endpoint.token_file: .* is empty'):
        MetricsEndpointStage(site, token_file=str(token_file))


def test_without_a_metrics_stage_the_request_goes_on(clean_zope):
    app = webtest.TestApp(MetricsEndpointStage(site),
                          extra_environ={keys.CLIENT_ADDRESS: '127.0.0.1'})
    app.get('/_metrics', status=404)
