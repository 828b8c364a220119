"""What the servers zope-pipeline configures accept: the same body limit
as the application (retry.max_body) everywhere, and no TRACE, which would
echo the request's cookies and credentials back to the page that sent
it."""

import configparser
import os
import re

import pytest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import serve

from tests.conftest import ROOT

APACHE_CONF = os.path.join(ROOT, 'etc', 'apache', 'zope-pipeline.conf')
PRODUCTION_INI = os.path.join(ROOT, 'etc', 'deploy-mysql.ini')

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
retry.max_body = 12345
'''


@pytest.fixture
def small_body_ini(tmp_path):
    ini = tmp_path / 'site.ini'
    ini.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    return str(ini)


def test_waitress_refuses_bodies_over_retry_max_body(
        clean_zope, small_body_ini, monkeypatch):
    import waitress
    served = []
    monkeypatch.setattr(waitress, 'serve',
                        lambda application, **options: served.append(
                            options))
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    assert zope_pipeline(['serve', small_body_ini]) == 0
    assert served[0]['max_request_body_size'] == 12345


def test_mod_wsgi_express_refuses_bodies_over_retry_max_body_and_trace(
        clean_zope, small_body_ini, tmp_path, monkeypatch, exec_calls):
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    assert zope_pipeline(['serve', small_body_ini, '--mod-wsgi',
                          '--server-root', str(tmp_path / 'server')]) == 0
    command = exec_calls[0]
    assert '--limit-request-body=12345' in command
    includes = [option.partition('=')[2] for option in command
                if option.startswith('--include-file=')]
    texts = [open(path).read() for path in includes]
    assert any(re.search(r'^TraceEnable off$', text, re.M)
               for text in texts)


def test_the_system_apache_configuration_refuses_trace_and_large_bodies():
    with open(APACHE_CONF) as stream:
        text = stream.read()
    assert re.search(r'^TraceEnable off$', text, re.M)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(PRODUCTION_INI)
    max_body = parser.get('app:main', 'retry.max_body')
    assert re.search(r'^\s*LimitRequestBody %s$' % max_body, text, re.M)


def test_trace_is_refused_by_a_real_mod_wsgi_express_server():
    from tests.integration import support
    support.need_mod_wsgi()
    with support.sqlite_site({'retry.max_body': '5000'}) as site:
        server = support.ModWsgiServer(site, processes=1, threads=2)
        with support.running(server):
            status, headers, body = support.request(
                server.port, '/', method='TRACE',
                headers={'Cookie': 'session=stolen-by-trace'})
            big_status = support.request(
                server.port, support.PAGE + '/@@add-comment', 'POST',
                b'text=' + b'x' * 6000, headers={
                    'Content-Type': 'application/x-www-form-urlencoded'})[0]
    assert status in (403, 405), body
    assert 'stolen-by-trace' not in body
    assert big_status == 413
