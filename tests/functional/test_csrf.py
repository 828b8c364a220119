"""The csrf stage: unsafe browser requests made by another site's page
are refused; the site's own pages, trusted origins, safe methods and
clients that say nothing (curl, scripts, WebTest) pass."""

import logging
import os
import xmlrpc.client

import pytest
from zope.configuration.exceptions import ConfigurationError

from tests.conftest import ROOT

SITE_ZCML = os.path.join(ROOT, 'etc', 'site.zcml')
POPULATE = 'zope.pipeline.sample.content.populate'
COMMENT = '/folder/page/@@add-comment'


def settings(**csrf):
    return {'open_root': {'populate': POPULATE},
            'virtual_host': {'trusted_proxies': '10.0.0.1',
                             'allowed_hosts': 'localhost www.example.com'},
            'csrf': csrf}


@pytest.fixture
def app(make_testapp):
    return make_testapp(SITE_ZCML, settings())


def comment(app, text, status=303, **headers):
    return app.post(COMMENT, {'author': 'a', 'text': text},
                    headers=headers, status=status)


def stored(app, text):
    return text in app.get('/folder/page').text


def test_post_from_the_sites_own_page_is_carried_out(app):
    comment(app, 'From our page', Origin='http://localhost')
    comment(app, 'Referred by our page',
            Referer='http://localhost/folder/page')
    assert stored(app, 'From our page')
    assert stored(app, 'Referred by our page')


def test_origin_is_compared_whatever_its_case_and_default_port(app):
    comment(app, 'Spelt otherwise', Origin='HTTP://LocalHost:80')
    assert stored(app, 'Spelt otherwise')


def test_post_from_another_site_gets_a_short_403_page_and_changes_nothing(
        app):
    response = comment(app, 'Forged', status=403,
                       Origin='https://evil.example')
    assert response.content_type == 'text/html'
    assert response.headers['X-Content-Type-Options'] == 'nosniff'
    assert 'This request came from another site' in response.text
    assert not stored(app, 'Forged')


def test_origin_wins_over_a_same_site_referer(app):
    comment(app, 'Forged', status=403, Origin='https://evil.example',
            Referer='http://localhost/folder/page')
    assert not stored(app, 'Forged')


def test_post_without_origin_or_referer_passes_by_default(app):
    """What curl, scripts and WebTest send: no Origin, no Referer."""
    comment(app, 'From a script')
    assert stored(app, 'From a script')


def test_post_without_origin_or_referer_is_refused_when_required(
        make_testapp):
    app = make_testapp(SITE_ZCML, settings(require_origin='true'))
    response = comment(app, 'From a script', status=403)
    assert 'did not say which site it came from' in response.text
    comment(app, 'From our page', Origin='http://localhost')


def test_safe_methods_from_another_site_are_not_checked(app):
    response = app.get('/folder/page', headers={
        'Origin': 'https://evil.example'})
    assert response.status_int == 200


def test_trusted_origin_may_post(make_testapp):
    app = make_testapp(SITE_ZCML, settings(
        trusted_origins='https://forms.example  http://other.example:8080'))
    comment(app, 'Trusted one', Origin='https://forms.example')
    comment(app, 'Trusted two', Referer='http://other.example:8080/x')
    comment(app, 'Wrong port', status=403, Origin='http://other.example')
    assert stored(app, 'Trusted one') and stored(app, 'Trusted two')


def test_disabled_stage_lets_another_site_post(make_testapp):
    app = make_testapp(SITE_ZCML, settings(enabled='false'))
    comment(app, 'Allowed by the deployer', Origin='https://evil.example')
    assert stored(app, 'Allowed by the deployer')


def test_own_origin_is_the_one_a_trusted_proxy_forwards(make_testapp):
    app = make_testapp(SITE_ZCML, settings(), REMOTE_ADDR='10.0.0.1')
    forwarded = {'X-Forwarded-Host': 'www.example.com',
                 'X-Forwarded-Proto': 'https'}
    comment(app, 'Through the proxy', Origin='https://www.example.com',
            **forwarded)
    comment(app, 'Backend origin', status=403, Origin='http://localhost',
            **forwarded)
    assert stored(app, 'Through the proxy')


def test_own_origin_is_the_one_of_the_proxys_virtual_host_path(
        make_testapp):
    app = make_testapp(SITE_ZCML, settings(), REMOTE_ADDR='10.0.0.1')
    path = '/++vh++https:www.example.com:443/++' + COMMENT
    response = app.post(path, {'text': 'Virtually hosted'},
                        headers={'Origin': 'https://www.example.com'},
                        status=303)
    assert response.location.startswith('https://www.example.com/')
    app.post(path, {'text': 'Forged'}, status=403,
             headers={'Origin': 'https://evil.example'})


def test_refusal_is_logged_with_the_origin_escaped(app, caplog):
    with caplog.at_level(logging.WARNING, 'zope.pipeline.csrf'):
        comment(app, 'Forged', status=403,
                Origin='https://evil.example\r\nforged line')
    message, = [record.getMessage() for record in caplog.records]
    assert message == (
        'Refused POST /folder/page/@@add-comment made by another site: '
        'Origin https://evil.example\\x0d\\x0aforged line is not this site '
        '(http://localhost) nor one of csrf.trusted_origins (behind a '
        'proxy, is it in virtual_host.trusted_proxies?); answered 403')


def test_xmlrpc_requests_are_not_checked(make_testapp):
    from fixtures.testing import classic_app
    app = classic_app(make_testapp)
    response = app.post('/folder/doc/rpc', xmlrpc.client.dumps((), 'title'),
                        content_type='text/xml',
                        headers={'Origin': 'https://evil.example'})
    assert xmlrpc.client.loads(response.body)[0] == ('Hello',)


@pytest.mark.parametrize('origins', [
    'www.example.com', 'https://www.example.com/path', 'ftp://files.example',
    'https://user@www.example.com', 'https://www.example.com:99999',
    'null'])
def test_trusted_origin_that_is_not_an_origin_stops_the_startup(
        make_testapp, origins):
    with pytest.raises(ConfigurationError) as caught:
        make_testapp(SITE_ZCML, settings(trusted_origins=origins))
    assert str(caught.value) == (
        'csrf.trusted_origins: %r is not an origin: write '
        'scheme://host[:port], e.g. https://www.example.com or '
        'http://localhost:8080' % origins)
