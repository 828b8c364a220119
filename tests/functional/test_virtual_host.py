"""The virtual_host stage through the full pipeline: forwarded headers only
from trusted proxies, ++vh++ paths, https from wsgi.url_scheme."""

import pytest

from .outer.fixtures import outer_app  # noqa: F401 - a fixture

#: Everything a client could send to move generated URLs elsewhere.
POISON = {
    'X-Forwarded-Host': 'evil.example',
    'X-Forwarded-Proto': 'https',
    'X-Forwarded-Port': '8443',
    'X-Forwarded-For': '192.0.2.1',
    'X-Forwarded-Server': 'evil.example',
    'Forwarded': 'for=192.0.2.1;host=evil.example;proto=https',
    'X-Vhm-Host': 'https://evil.example/x',
    'X-Vhm-Root': '/folder',
}


#: The hosts these tests make URLs for.
HOSTS = 'localhost example.com *.example.com *.example [2001:db8::1]'
#: Settings of a site behind a proxy on this machine.
PROXIED = {'virtual_host__trusted_proxies': '127.0.0.1',
           'virtual_host__allowed_hosts': HOSTS}
#: The same, believing RFC 7239 Forwarded rather than X-Forwarded-*.
PROXIED_RFC7239 = dict(PROXIED, virtual_host__forwarded_headers='forwarded')


def urls(app, path, headers=None, **environ):
    return app.get(path, headers=headers or {}, extra_environ=environ,
                   status=200).json


def location(app, path, headers=None, **environ):
    response = app.get(path, headers=headers or {}, extra_environ=environ,
                       status=302)
    return response.headers['Location']


# -- untrusted: ignored and removed

def test_forwarded_headers_without_trusted_proxies_are_ignored_and_removed(
        outer_app):
    app = outer_app()

    seen = urls(app, '/folder/@@urls', POISON)

    assert seen == {'url': 'http://localhost/folder/@@urls',
                    'context_url': 'http://localhost/folder',
                    'application_url': 'http://localhost',
                    'client_address': '',
                    'forwarded_keys': []}


def test_redirects_ignore_forwarded_headers_without_trusted_proxies(
        outer_app):
    app = outer_app()

    assert location(app, '/folder/@@go', POISON) == (
        'http://localhost/folder/@@urls')


def test_forwarded_headers_from_an_untrusted_address_are_ignored(outer_app):
    app = outer_app(virtual_host__trusted_proxies='127.0.0.1 10.9.0.0/16')

    seen = urls(app, '/folder/@@urls', POISON, REMOTE_ADDR='10.1.2.3')

    assert seen['context_url'] == 'http://localhost/folder'
    assert seen['forwarded_keys'] == []


def test_a_remote_address_that_is_not_an_address_is_untrusted(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', POISON, REMOTE_ADDR='unknown')

    assert seen['url'] == 'http://localhost/@@urls'


@pytest.mark.parametrize('host', ['evil.example/path', 'a b', 'a"b',
                                  'example.com:port', '[::1', 'x' * 300,
                                  'example.com:123456'])
def test_malformed_host_header_gets_400(outer_app, host):
    app = outer_app()

    app.get('/@@urls', extra_environ={'HTTP_HOST': host}, status=400)


@pytest.mark.parametrize('host, expected', [
    ('www.example.com', 'http://www.example.com'),
    ('my_service:8080', 'http://my_service:8080'),
    ('192.0.2.7', 'http://192.0.2.7'),
    ('[2001:db8::7]:81', 'http://[2001:db8::7]:81'),
])
def test_well_formed_host_header_is_used_for_urls(outer_app, host, expected):
    app = outer_app(virtual_host__allowed_hosts=(
        'www.example.com my_service 192.0.2.7 [2001:db8::7]'))

    assert urls(app, '/@@urls', HTTP_HOST=host)['context_url'] == expected


# -- trusted proxies

def test_x_forwarded_headers_from_a_trusted_proxy_are_applied(outer_app):
    app = outer_app(**PROXIED)
    headers = {'X-Forwarded-Host': 'www.example.com',
               'X-Forwarded-Proto': 'https', 'X-Forwarded-Port': '8443'}

    seen = urls(app, '/folder/@@urls', headers)

    assert seen['url'] == 'https://www.example.com:8443/folder/@@urls'
    assert seen['context_url'] == 'https://www.example.com:8443/folder'
    assert location(app, '/folder/@@go', headers) == (
        'https://www.example.com:8443/folder/@@urls')


def test_the_last_value_of_a_list_of_x_forwarded_hosts_wins(outer_app):
    app = outer_app(virtual_host__trusted_proxies='127.0.0.0/8',
                    virtual_host__allowed_hosts=HOSTS)
    headers = {'X-Forwarded-Host': 'client.example, www.example.com',
               'X-Forwarded-Proto': 'http, https'}

    seen = urls(app, '/@@urls', headers)

    assert seen['context_url'] == 'https://www.example.com'


def test_default_port_of_a_forwarded_https_host_is_not_in_urls(outer_app):
    app = outer_app(**PROXIED)
    headers = {'X-Forwarded-Host': 'www.example.com:443',
               'X-Forwarded-Proto': 'https'}

    assert urls(app, '/@@urls', headers)['context_url'] == (
        'https://www.example.com')


def test_a_forwarded_port_alone_replaces_the_port_of_the_host(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', {'X-Forwarded-Port': '8080'},
                HTTP_HOST='www.example.com:80')

    assert seen['context_url'] == 'http://www.example.com:8080'


def test_forwarded_http_from_a_trusted_proxy_overrides_an_https_server(
        outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', {'X-Forwarded-Proto': 'http'},
                HTTPS='on', HTTP_HOST='www.example.com')

    assert seen['context_url'] == 'http://www.example.com'


@pytest.mark.parametrize('header, expected', [
    ('for=192.0.2.60;proto=http;host=first.example, '
     'for="[2001:db8:cafe::17]:4711";proto=https;host="second.example:8443"',
     'https://second.example:8443'),
    ('host="first.example", for="a,b;c";host="second.example"',
     'http://second.example'),
    ('Host=Second.Example;Proto=HTTPS', 'https://Second.Example'),
    ('host="www.example.com";proto="https" , for=unknown;host=last.example',
     'http://last.example'),
])
def test_rfc7239_forwarded_with_quoted_values_and_several_elements_last_wins(
        outer_app, header, expected):
    app = outer_app(**PROXIED_RFC7239)

    seen = urls(app, '/folder/@@urls', {'Forwarded': header})

    assert seen['context_url'] == expected + '/folder'


@pytest.mark.parametrize('settings, expected', [
    (PROXIED, 'http://other.example'),
    (PROXIED_RFC7239, 'http://www.example.com'),
])
def test_only_the_family_of_forwarded_headers_set_is_believed(
        outer_app, settings, expected):
    app = outer_app(**settings)
    headers = {'Forwarded': 'host=www.example.com',
               'X-Forwarded-Host': 'other.example', 'X-Real-IP': '192.0.2.1'}

    seen = urls(app, '/@@urls', headers)

    assert seen['context_url'] == expected
    assert seen['forwarded_keys'] == (
        ['HTTP_X_FORWARDED_HOST'] if settings is PROXIED
        else ['HTTP_FORWARDED'])


@pytest.mark.parametrize('headers, expected', [
    ({'X-Forwarded-Host': '[2001:db8::1]:8080'}, 'http://[2001:db8::1]:8080'),
    ({'X-Forwarded-Host': '[2001:db8::1]', 'X-Forwarded-Port': '8443',
      'X-Forwarded-Proto': 'https'}, 'https://[2001:db8::1]:8443'),
])
def test_forwarded_ipv6_hosts_from_a_trusted_proxy_are_applied(
        outer_app, headers, expected):
    app = outer_app(**PROXIED)

    assert urls(app, '/@@urls', headers)['context_url'] == expected


def test_trusted_proxy_given_as_an_ipv4_mapped_ipv6_address(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', {'X-Forwarded-Host': 'www.example.com'},
                REMOTE_ADDR='::ffff:127.0.0.1')

    assert seen['context_url'] == 'http://www.example.com'


def test_x_vhm_host_and_root_from_a_trusted_proxy_map_the_virtual_root(
        outer_app):
    app = outer_app(**PROXIED)
    headers = {'X-Vhm-Host': 'https://www.example.com/site',
               'X-Vhm-Root': '/folder'}

    seen = urls(app, '/@@urls', headers)

    assert seen == {'url': 'https://www.example.com/site/@@urls',
                    'context_url': 'https://www.example.com/site',
                    'application_url': 'https://www.example.com/site',
                    'client_address': '127.0.0.1',
                    'forwarded_keys': []}


def test_x_vhm_root_alone_makes_an_object_the_root_of_urls(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', {'X-Vhm-Root': '/folder'})

    assert seen['url'] == 'http://localhost/@@urls'
    assert seen['context_url'] == 'http://localhost'


def test_x_vhm_host_with_a_port_keeps_it(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/folder/@@urls',
                {'X-Vhm-Host': 'http://www.example.com:8080'})

    assert seen['context_url'] == 'http://www.example.com:8080/folder'


@pytest.mark.parametrize('headers', [
    {'X-Forwarded-Proto': 'gopher'},
    {'X-Forwarded-Host': 'evil.example/path'},
    {'X-Forwarded-Host': 'evil.example\r\nX-Injected: 1'},
    {'X-Forwarded-Port': 'eighty'},
    {'X-Forwarded-Port': '0'},
    {'X-Forwarded-Port': '65536'},
    {'Forwarded': 'host="unterminated'},
    {'Forwarded': 'host'},
    {'Forwarded': 'proto=ftp'},
    {'X-Vhm-Host': 'ftp://www.example.com'},
    {'X-Vhm-Host': 'http://bad host'},
    {'X-Vhm-Host': 'http://www.example.com:99999'},
])
def test_bad_forwarded_values_from_a_trusted_proxy_get_400(outer_app,
                                                           headers):
    app = outer_app(**(PROXIED_RFC7239 if 'Forwarded' in headers
                       else PROXIED))

    app.get('/@@urls', headers=headers, status=400)


# -- ++vh++

def test_vh_makes_generated_urls_https_on_the_virtual_host(outer_app):
    app = outer_app(**PROXIED)
    path = '/++vh++https:example.com:443/++/folder/'

    seen = urls(app, path + '@@urls')

    assert seen['url'] == 'https://example.com/folder/@@urls'
    assert seen['context_url'] == 'https://example.com/folder'
    assert location(app, path + '@@go') == (
        'https://example.com/folder/@@urls')


def test_vh_below_a_folder_maps_it_as_the_root_with_application_names(
        outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/folder/++vh++http:example.com:80/site/++/@@urls')

    assert seen == {'url': 'http://example.com/site/@@urls',
                    'context_url': 'http://example.com/site',
                    'application_url': 'http://example.com/site',
                    'client_address': '127.0.0.1',
                    'forwarded_keys': []}


def test_vh_without_a_host_only_moves_the_root(outer_app):
    app = outer_app(**PROXIED)

    seen = urls(app, '/folder/++vh++/++/@@urls')

    assert seen['context_url'] == 'http://localhost'


@pytest.mark.parametrize('path', [
    '/++vh++http:example.com:0/++/@@urls',
    '/++vh++http:example.com:99999/++/@@urls',
    '/++vh++http:example.com:eighty/++/@@urls',
    '/++vh++http:example.com:80/@@urls',
    '/++vh++ftp:example.com:21/++/@@urls',
    '/++vh++http:example.com/++/@@urls',
    '/++vh++http::80/++/@@urls',
    '/++vh++http:[::1]:80/++/@@urls',
    '/++vh++http:a:b:80/++/@@urls',
    '/++vh++http:exa mple.com:80/++/@@urls',
    '/++vh++http:example.com:80/++/..',
    '/folder/++vh++http:example.com:80/site',
])
def test_bad_vh_directive_gets_400_never_500(outer_app, path):
    app = outer_app(**PROXIED)

    response = app.get(path, status=400)

    assert b'++vh++' in response.body or b'climbs above' in response.body


def test_https_detected_from_wsgi_url_scheme_makes_urls_https(outer_app):
    app = outer_app(virtual_host__allowed_hosts=HOSTS,
                    extra_environ={'wsgi.url_scheme': 'https',
                                   'HTTP_HOST': 'www.example.com',
                                   'SERVER_PORT': '443'})

    seen = urls(app, '/folder/@@urls')

    assert seen['url'] == 'https://www.example.com/folder/@@urls'
    assert location(app, '/folder/@@go') == (
        'https://www.example.com/folder/@@urls')


def test_https_from_wsgi_url_scheme_is_left_alone_when_set_https_is_off(
        outer_app):
    app = outer_app(virtual_host__set_https='false',
                    virtual_host__allowed_hosts=HOSTS,
                    extra_environ={'wsgi.url_scheme': 'https',
                                   'HTTP_HOST': 'www.example.com'})

    assert urls(app, '/@@urls')['url'] == 'http://www.example.com/@@urls'


# -- who may send ++vh++, which hosts are answered

def test_vh_from_a_client_that_is_not_a_trusted_proxy_gets_400(outer_app):
    app = outer_app(virtual_host__trusted_proxies='10.0.0.0/8',
                    virtual_host__allowed_hosts=HOSTS)

    response = app.get('/++vh++https:example.com:443/++/@@urls', status=400)

    assert b'virtual_host.trusted_proxies' in response.body
    assert b'virtual_host.vh_from_anyone' in response.body


def test_vh_from_anyone_restores_the_classic_publisher(outer_app):
    app = outer_app(virtual_host__vh_from_anyone='true',
                    virtual_host__allowed_hosts=HOSTS)

    seen = urls(app, '/++vh++https:example.com:443/++/folder/@@urls')

    assert seen['context_url'] == 'https://example.com/folder'


def test_vh_from_anyone_still_needs_an_allowed_host(outer_app):
    app = outer_app(virtual_host__vh_from_anyone='true')

    response = app.get('/++vh++https:example.com:443/++/@@urls', status=400)

    assert b"host name 'example.com'" in response.body
    assert b'virtual_host.allowed_hosts' in response.body


def test_a_host_outside_allowed_hosts_gets_400_naming_the_setting(
        outer_app):
    app = outer_app()

    response = app.get('/@@urls', extra_environ={'HTTP_HOST': 'example.com'},
                       status=400)

    assert response.text.startswith(
        "This site does not answer to the host name 'example.com'")
    assert 'virtual_host.allowed_hosts' in response.text


@pytest.mark.parametrize('host', ['localhost:8080', '127.0.0.1:6543',
                                  '[::1]:80', 'localhost'])
def test_loopback_names_with_any_port_are_allowed_by_default(outer_app,
                                                             host):
    app = outer_app()

    assert urls(app, '/@@urls', HTTP_HOST=host)['url'].startswith('http://')


@pytest.mark.parametrize('headers, expected', [
    ({}, '127.0.0.1'),
    ({'X-Forwarded-For': '203.0.113.9'}, '203.0.113.9'),
    ({'X-Forwarded-For': '198.51.100.1, 203.0.113.9, 127.0.0.1'},
     '203.0.113.9'),
    ({'Forwarded': 'for=203.0.113.9, for="[2001:db8::5]:4711"'},
     '2001:db8::5'),
    ({'Forwarded': 'for=203.0.113.9', 'X-Forwarded-For': '192.0.2.1'},
     '203.0.113.9'),
    # X-Real-IP is believed under neither family: the proxy's own request
    ({'X-Real-IP': '203.0.113.9'}, '127.0.0.1'),
    ({'X-Forwarded-For': 'unknown'}, ''),
])
def test_the_client_address_is_the_one_trusted_proxies_forwarded(
        outer_app, headers, expected):
    app = outer_app(**(PROXIED_RFC7239 if 'Forwarded' in headers
                       else PROXIED))

    seen = urls(app, '/@@urls', headers)

    assert seen['client_address'] == expected


@pytest.mark.parametrize('headers, expected', [
    ({}, '10.1.2.3'),
    ({'X-Forwarded-For': '203.0.113.9'}, ''),
    ({'Forwarded': 'for=203.0.113.9'}, ''),
    ({'X-Real-IP': '203.0.113.9'}, ''),
])
def test_forwarded_for_from_an_untrusted_address_leaves_the_client_unknown(
        outer_app, headers, expected):
    app = outer_app(**PROXIED)

    seen = urls(app, '/@@urls', headers, REMOTE_ADDR='10.1.2.3')

    assert seen['client_address'] == expected


def test_a_bad_trusted_proxies_setting_stops_the_start_naming_it(outer_app):
    from zope.configuration.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError,
                       match='virtual_host.trusted_proxies: .10.0.0.0/33.'):
        outer_app(virtual_host__trusted_proxies='10.0.0.0/33')
