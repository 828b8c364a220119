"""A client behind a trusted proxy sends forwarded headers of its own.

nginx, HAProxy and Apache's mod_proxy pass on a client's ``Forwarded``
header (and every ``X-Forwarded-*`` header they are not told to set): when
the site believed ``Forwarded`` over the proxy's ``X-Forwarded-For``, the
client chose its address (a fresh one for every password guess, any
address in ``Failed login`` lines, loopback for ``/_metrics``) and the
scheme of the site's URLs.  Only the family ``virtual_host.
forwarded_headers`` names is believed; the other is removed."""

import logging

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import environ as keys
from zope.pipeline.stages.virtual_host import VirtualHostStage

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_password_guessing import EDIT
from tests.security.test_password_guessing import basic
from tests.security.test_password_guessing import failed_logins
from tests.security.test_security import SECURITY_ZCML

#: The trusted proxy, and the client address it forwards.
PROXY = '10.0.0.1'
CLIENT = '203.0.113.5'


def guessing_site(**virtual_host):
    return RawClient(build_site(SECURITY_ZCML, site_settings(
        authenticate={'max_failures_per_client': '3',
                      'max_failures_per_login': '0'},
        virtual_host=dict(virtual_host, trusted_proxies=PROXY))))


def guess(site, number, headers):
    return site.request('GET', EDIT, headers=dict(
        basic('user%d' % number, 'guess', PROXY), **headers)).status_int


def test_client_forwarded_header_cannot_choose_its_address_behind_proxy(
        clean_zope, caplog):
    site = guessing_site()

    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        statuses = [guess(site, number, {
            'HTTP_X_FORWARDED_FOR': CLIENT,
            'HTTP_FORWARDED': 'for=198.51.100.%d' % number})
            for number in range(4)]

    assert statuses == [401, 401, 401, 429]
    logged = [record.getMessage() for record in failed_logins(caplog)]
    assert len(logged) == 3
    assert all(CLIENT in line and '198.51.100' not in line
               for line in logged)


def test_client_x_forwarded_for_cannot_choose_its_address_behind_proxy(
        clean_zope):
    site = guessing_site(forwarded_headers='forwarded')

    statuses = [guess(site, number, {
        'HTTP_X_FORWARDED_FOR': '198.51.100.%d' % number,
        'HTTP_X_REAL_IP': '198.51.100.%d' % number,
        'HTTP_FORWARDED': 'for=%s' % CLIENT}) for number in range(4)]

    assert statuses == [401, 401, 401, 429]


def test_client_forwarded_header_cannot_choose_scheme_behind_proxy(
        clean_zope):
    site = RawClient(build_site(settings=site_settings(virtual_host={
        'trusted_proxies': PROXY, 'allowed_hosts': 'www.example.com'})))

    response = site.request('GET', '/folder', headers={
        'REMOTE_ADDR': PROXY, 'HTTP_HOST': 'www.example.com',
        'HTTP_X_FORWARDED_FOR': CLIENT,
        'HTTP_FORWARDED': 'for=127.0.0.1;proto=https;host=www.example.com'})

    assert response.status_int == 200
    assert b'href="http://www.example.com/folder/page"' in response.body
    assert b'https://' not in response.body


def test_client_x_forwarded_proto_cannot_choose_scheme_behind_proxy(
        clean_zope):
    site = RawClient(build_site(settings=site_settings(virtual_host={
        'trusted_proxies': PROXY, 'allowed_hosts': 'www.example.com',
        'forwarded_headers': 'forwarded'})))

    response = site.request('GET', '/folder', headers={
        'REMOTE_ADDR': PROXY, 'HTTP_HOST': 'www.example.com',
        'HTTP_FORWARDED': 'for=%s;proto=http' % CLIENT,
        'HTTP_X_FORWARDED_PROTO': 'https', 'HTTP_X_FORWARDED_PORT': '443'})

    assert b'href="http://www.example.com/folder/page"' in response.body
    assert b'https://' not in response.body


METRICS = {'modwsgi': 'false', 'flush_interval': '3600'}


@pytest.mark.parametrize('spoof', [
    {'HTTP_FORWARDED': 'for=127.0.0.1'},
    {'HTTP_FORWARDED': 'for="[::1]"'},
    {'HTTP_X_REAL_IP': '127.0.0.1'},
])
def test_client_forwarded_header_metrics_loopback_spoof(clean_zope, spoof):
    site = RawClient(build_site(settings=site_settings(
        metrics=METRICS, virtual_host={'trusted_proxies': '127.0.0.1'})))

    response = site.request('GET', '/_metrics', headers=dict(
        spoof, HTTP_X_FORWARDED_FOR='203.0.113.9'))

    assert response.status_int == 404
    assert b'zope_pipeline_requests_total' not in response.body
    # the proxy's own request (no forwarded header) still reads them
    assert site.request('GET', '/_metrics').status_int == 200


def test_client_x_forwarded_for_metrics_loopback_spoof(clean_zope):
    site = RawClient(build_site(settings=site_settings(
        metrics=METRICS, virtual_host={'trusted_proxies': '127.0.0.1',
                                       'forwarded_headers': 'forwarded'})))

    response = site.request('GET', '/_metrics', headers={
        'HTTP_FORWARDED': 'for=203.0.113.9',
        'HTTP_X_FORWARDED_FOR': '127.0.0.1', 'HTTP_X_REAL_IP': '::1'})

    assert response.status_int == 404


#: Every forwarded header, as a client may send it through a proxy.
ALL_FORWARDED = {
    'HTTP_FORWARDED': 'for=%s;proto=http;host=www.example.com' % CLIENT,
    'HTTP_X_FORWARDED_FOR': CLIENT, 'HTTP_X_FORWARDED_HOST':
    'www.example.com', 'HTTP_X_FORWARDED_PROTO': 'http',
    'HTTP_X_FORWARDED_PORT': '80', 'HTTP_X_FORWARDED_SERVER': 'proxy',
    'HTTP_X_FORWARDED_BY': 'proxy', 'HTTP_X_REAL_IP': '127.0.0.1'}


def seen_by_the_application(**settings):
    seen = {}

    def application(environ, start_response):
        seen.update(environ)
        return []

    stage = VirtualHostStage(application, trusted_proxies=PROXY,
                             allowed_hosts='www.example.com', **settings)
    stage(dict(ALL_FORWARDED, REMOTE_ADDR=PROXY, PATH_INFO='/',
               HTTP_HOST='www.example.com'), lambda *args: None)
    return seen


@pytest.mark.parametrize('family, kept', [
    ('x-forwarded', ['HTTP_X_FORWARDED_BY', 'HTTP_X_FORWARDED_FOR',
                     'HTTP_X_FORWARDED_HOST', 'HTTP_X_FORWARDED_PORT',
                     'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_SERVER']),
    ('forwarded', ['HTTP_FORWARDED']),
])
def test_client_forwarded_header_of_the_other_family_never_reaches_the_app(
        family, kept):
    seen = seen_by_the_application(forwarded_headers=family)

    assert sorted(key for key in ALL_FORWARDED if key in seen) == kept
    assert seen[keys.CLIENT_ADDRESS] == CLIENT


def test_x_forwarded_is_the_family_believed_by_default():
    seen = seen_by_the_application()

    assert 'HTTP_FORWARDED' not in seen
    assert 'HTTP_X_FORWARDED_FOR' in seen


@pytest.mark.parametrize('value', ['both', 'X-Forwarded-For', ''])
def test_a_bad_forwarded_headers_setting_stops_the_start_naming_it(
        clean_zope, value):
    with pytest.raises(ConfigurationError) as raised:
        build_site(settings=site_settings(virtual_host={
            'trusted_proxies': PROXY, 'forwarded_headers': value}))

    message = str(raised.value)
    assert 'virtual_host.forwarded_headers' in message
    assert 'x-forwarded, forwarded' in message


def test_a_bad_forwarded_headers_argument_is_refused_naming_the_setting():
    with pytest.raises(ConfigurationError,
                       match=r'virtual_host\.forwarded_headers.*'
                             r'x-forwarded, forwarded'):
        VirtualHostStage(None, forwarded_headers='both')
