"""The Prometheus endpoint of a production site: never read by whoever
reaches the machine's loopback (every local user, every process a
compromised application starts, a local reverse proxy forwarding the
internet without trusted_proxies) without its bearer token."""

import os

import pytest
import webtest

from zope.pipeline.serving.startup import load_application
from zope.pipeline.zodb import storage

from tests.conftest import ROOT

PRODUCTION_INI = os.path.join(ROOT, 'etc', 'deploy-mysql.ini')
DEVELOPMENT_INI = os.path.join(ROOT, 'etc', 'deploy.ini')
LOOPBACK = {'REMOTE_ADDR': '127.0.0.1'}


@pytest.fixture
def production_copy(tmp_path):
    """etc/deploy-mysql.ini (its metrics_endpoint settings as they are)
    on a database in memory, with ``extra`` lines."""
    def make(extra=''):
        with open(PRODUCTION_INI) as stream:
            text = stream.read()
        etc = os.path.join(ROOT, 'etc')
        text = text.replace('%(here)s', etc).replace(
            '../var/principals.zcml', str(tmp_path / 'principals.zcml'))
        text = text.replace(
            'site_zcml = site.zcml',
            'site_zcml = %s' % os.path.join(ROOT, 'etc', 'site.zcml'))
        text = text.replace('%s/zodb-mysql.conf' % etc, '')
        text = text.replace('[server:main]', extra + '\n[server:main]', 1)
        ini = tmp_path / 'production.ini'
        ini.write_text(text)
        return str(ini)
    return make


def served(ini):
    application, _publisher = load_application(ini)
    try:
        return webtest.TestApp(application, extra_environ=LOOPBACK)
    finally:
        storage.close_all()


def test_metrics_endpoint_refuses_loopback_without_token_in_production_ini(
        clean_zope, production_copy):
    app = served(production_copy())
    response = app.get('/_metrics', status='*')
    assert response.status_int == 404
    assert 'zope_pipeline_requests_total' not in response.text


def test_the_production_endpoint_needs_its_token_once_one_is_set(
        clean_zope, production_copy, tmp_path):
    token = tmp_path / 'metrics-token'
    token.write_text('s3cret-token-of-the-site\n')
    os.chmod(token, 0o600)
    app = served(production_copy(
        'metrics_endpoint.token_file = %s' % token))
    assert app.get('/_metrics', status='*').status_int == 401
    response = app.get('/_metrics', headers={
        'Authorization': 'Bearer s3cret-token-of-the-site'})
    assert 'zope_pipeline_requests_total' in response.text


def test_development_keeps_the_endpoint_open_to_loopback(
        clean_zope):
    response = served(DEVELOPMENT_INI).get('/_metrics')
    assert 'zope_pipeline_requests_total' in response.text


def test_serve_shares_the_token_file_with_the_daemon_processes(
        clean_zope, production_copy, tmp_path):
    """Run as root, serve makes it root's and readable by the daemons'
    group (zope.pipeline.serving.layout.share_secret), as the other secrets."""
    from zope.pipeline.serving.ownership import secret_files
    token = tmp_path / 'metrics-token'
    token.write_text('s3cret-token-of-the-site\n')
    _application, publisher = load_application(production_copy(
        'metrics_endpoint.token_file = %s' % token))
    assert str(token) in secret_files(publisher)
