"""Who may set the host of generated URLs and redirects (Host, forwarded
headers, ++vh++), who may read the metrics endpoint behind a proxy, and
dot segments that climb above a (virtual) root."""

import re

import pytest

from zope.pipeline.serving.startup import SiteAtRoot

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings

FORM = {'CONTENT_TYPE': 'application/x-www-form-urlencoded'}
COMMENT = b'text=Nice+page&author=Eve'


def sample_site(**settings):
    return RawClient(build_site(settings=site_settings(**settings)))


def get(site, path, **environ):
    return site.request('GET', path, headers=environ)


def locations(response):
    return response.header_values('Location')


def assert_nothing_points_at_evil(response):
    """No redirect and no URL in the page lead to evil.example."""
    assert not [value for value in locations(response) if 'evil' in value]
    assert not re.search(rb'//[^/"\s]*evil', response.body)


# -- the Host header

def test_host_header_poisoning_of_the_comment_redirect_gets_400(clean_zope):
    site = sample_site()

    response = site.request('POST', '/folder/page/@@add-comment', '',
                            COMMENT, dict(FORM, HTTP_HOST='evil.example'))

    assert response.status_int == 400
    assert_nothing_points_at_evil(response)
    assert b'Comments (1)' not in get(site, '/folder/page').body


@pytest.mark.parametrize('host', ['evil.example', 'evil.example:80',
                                  'localhost.evil.example', '10.0.0.1'])
def test_host_header_poisoning_of_page_links_gets_400(clean_zope, host):
    site = sample_site()

    response = get(site, '/folder/page', HTTP_HOST=host)

    assert response.status_int == 400
    assert b'virtual_host.allowed_hosts' in response.body
    assert_nothing_points_at_evil(response)


def test_forwarded_host_poisoning_through_a_trusted_proxy_gets_400(
        clean_zope):
    site = sample_site(virtual_host={'trusted_proxies': '127.0.0.1',
                                     'allowed_hosts': 'www.example.com'})

    response = get(site, '/folder/page', HTTP_HOST='www.example.com',
                   HTTP_X_FORWARDED_HOST='evil.example')

    assert response.status_int == 400
    assert_nothing_points_at_evil(response)


def test_an_empty_host_header_makes_urls_on_the_server_name(clean_zope):
    site = sample_site()

    response = get(site, '/folder', HTTP_HOST='', SERVER_NAME='127.0.0.1')

    assert response.status_int == 200
    assert b'href="http://127.0.0.1/folder/page"' in response.body


def test_a_refused_request_cannot_forge_a_log_line(clean_zope, caplog):
    site = sample_site()

    with caplog.at_level('INFO', logger='zope.pipeline.virtual_host'):
        response = get(site, '/++vh++http:a:80/++/x\n2026 ERROR forged',
                       HTTP_HOST='evil.example')

    assert response.status_int == 400
    (record,) = caplog.records
    assert '\n' not in record.getMessage()
    assert '\\x0a2026 ERROR forged' in record.getMessage()


# -- ++vh++

def test_vh_url_poisoning_from_a_client_gets_400(clean_zope):
    site = sample_site()

    response = get(site, '/++vh++https:evil.example:443/++/folder/page')

    assert response.status_int == 400
    assert b'virtual_host.trusted_proxies' in response.body
    assert_nothing_points_at_evil(response)


def test_vh_open_redirect_in_redirect_mode_is_refused(clean_zope):
    site = sample_site(fix_relative_links={'mode': 'redirect'})

    response = get(site, '/++vh++https:evil.example:443/++/folder')

    assert response.status_int == 400
    assert_nothing_points_at_evil(response)


def test_vh_host_poisoning_through_a_trusted_proxy_gets_400(clean_zope):
    site = sample_site(virtual_host={'trusted_proxies': '10.0.0.0/8'},
                       fix_relative_links={'mode': 'redirect'})

    response = get(site, '/++vh++https:evil.example:443/++/folder',
                   REMOTE_ADDR='10.1.2.3')

    assert response.status_int == 400
    assert_nothing_points_at_evil(response)


def test_vh_smuggled_behind_a_site_at_root_rewrite_gets_400(clean_zope):
    site = RawClient(SiteAtRoot(build_site(), '/folder'))

    response = get(site, '/++vh++https:evil.example:443/++/page')

    assert response.status_int == 400
    assert_nothing_points_at_evil(response)
    assert get(site, '/page').status_int == 200


def test_dot_dot_escape_from_a_site_at_root_gets_400(clean_zope):
    site = RawClient(SiteAtRoot(build_site(), '/folder'))

    response = get(site, '/../../counter')

    assert response.status_int == 400
    assert b'Traceback' not in response.body


# -- dot segments

@pytest.mark.parametrize('path', [
    '/++vh++http:localhost:80/++/x/../..',
    '/++vh++http:localhost:80/++/..',
    '/folder/++vh++http:localhost:80/site/++/../../..',
])
def test_dot_dot_above_a_virtual_root_gets_400_not_500(clean_zope, path):
    site = sample_site(virtual_host={'trusted_proxies': '127.0.0.1'})

    response = get(site, path)

    assert response.status_int == 400
    assert b'Traceback' not in response.body


@pytest.mark.parametrize('path', ['/..', '/folder/../..', '/../etc/passwd'])
def test_dot_dot_above_the_root_gets_400(clean_zope, path):
    site = sample_site()

    response = get(site, path)

    assert response.status_int == 400
    assert b'Traceback' not in response.body


# -- the metrics endpoint

METRICS = {'modwsgi': 'false', 'flush_interval': '3600'}


def metrics_site(**endpoint):
    settings = {'metrics': METRICS}
    if endpoint:
        settings['metrics_endpoint'] = endpoint
    return sample_site(**settings)


@pytest.mark.parametrize('forwarded', [
    {'HTTP_X_FORWARDED_FOR': '203.0.113.9'},
    {'HTTP_FORWARDED': 'for=203.0.113.9;proto=https'},
    {'HTTP_X_REAL_IP': '203.0.113.9'},
])
def test_metrics_read_through_a_local_proxy_are_refused(clean_zope,
                                                        forwarded):
    site = metrics_site()

    response = get(site, '/_metrics', **forwarded)

    assert response.status_int == 404
    assert b'zope_pipeline_requests_total' not in response.body


def test_metrics_read_through_a_trusted_local_proxy_are_refused(clean_zope):
    settings = {'metrics': METRICS,
                'virtual_host': {'trusted_proxies': '127.0.0.1'}}
    site = sample_site(**settings)

    response = get(site, '/_metrics', HTTP_X_FORWARDED_FOR='203.0.113.9')

    assert response.status_int == 404
    assert get(site, '/_metrics').status_int == 200


def test_metrics_without_the_bearer_token_are_refused(clean_zope):
    site = metrics_site(token='s3cret-token')

    response = get(site, '/_metrics')

    assert response.status_int == 401
    assert response.header_values('WWW-Authenticate') == [
        'Bearer realm="metrics"']
    assert get(site, '/_metrics', HTTP_AUTHORIZATION='Bearer wrong'
               ).status_int == 401
    assert get(site, '/_metrics', HTTP_AUTHORIZATION='Bearer s3cret-token'
               ).status_int == 200
