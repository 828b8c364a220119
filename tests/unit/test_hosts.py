"""virtual_host.allowed_hosts patterns, and redirects that stay on the
request's host."""

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.http.hosts import LOOPBACK
from zope.pipeline.http.hosts import AllowedHosts
from zope.pipeline.http.hosts import on_host


def allows(patterns, host, scheme='http'):
    return AllowedHosts(patterns, 'virtual_host.allowed_hosts').allows(
        host, scheme)


@pytest.mark.parametrize('host', ['localhost', 'localhost:8080',
                                  'LOCALHOST.', '127.0.0.1:80', '[::1]',
                                  '[::1]:8443'])
def test_loopback_names_with_any_port_are_the_default(host):
    assert allows(LOOPBACK, host)


@pytest.mark.parametrize('host', ['evil.example', 'localhost.evil.example',
                                  '127.0.0.2', '[::2]', 'evil.localhost'])
def test_other_hosts_are_not_loopback(host):
    assert not allows(LOOPBACK, host)


def test_a_star_pattern_allows_the_names_below_a_domain_only():
    assert allows('*.example.com', 'www.example.com')
    assert allows('*.example.com', 'a.b.example.com:81')
    assert not allows('*.example.com', 'example.com')
    assert not allows('*.example.com', 'evilexample.com')
    assert not allows('*.example.com', 'example.com.evil.example')


def test_a_pattern_with_a_port_allows_that_port_only():
    assert allows('www.example.com:8443', 'www.example.com:8443')
    assert not allows('www.example.com:8443', 'www.example.com')
    assert allows('www.example.com:443', 'www.example.com', 'https')
    assert not allows('www.example.com:443', 'www.example.com', 'http')


def test_a_lone_star_allows_any_host():
    assert allows('*', 'anything.example:1234')
    assert allows('*:8080', 'anything.example:8080')
    assert not allows('*:8080', 'anything.example')


@pytest.mark.parametrize('patterns', ['', '   '])
def test_an_empty_setting_fails_naming_it(patterns):
    with pytest.raises(ConfigurationError, match=(
            r'virtual_host.allowed_hosts is empty: list the host names')):
        AllowedHosts(patterns, 'virtual_host.allowed_hosts')


@pytest.mark.parametrize('pattern', ['http://example.com', 'a b/c',
                                     'example.com:port', '**.example.com',
                                     'example.*'])
def test_a_bad_pattern_fails_naming_the_setting(pattern):
    with pytest.raises(ConfigurationError, match=(
            r"virtual_host.allowed_hosts: .* is not a host pattern")):
        AllowedHosts(pattern, 'virtual_host.allowed_hosts')


class Request:

    def getApplicationURL(self):
        return 'https://www.example.com:8443/site'


@pytest.mark.parametrize('url, expected', [
    ('https://www.example.com:8443/site/page/', True),
    ('https://WWW.example.com:8443/x', True),
    ('/relative', True),
    ('https://evil.example/site/page/', False),
    ('//evil.example/x', False),
    ('https://www.example.com/site', False),
])
def test_on_host_says_whether_a_url_stays_on_the_request_host(url,
                                                              expected):
    assert on_host(url, Request()) is expected


def test_remembered_answers_belong_to_their_setting():
    local = AllowedHosts(LOOPBACK, 'virtual_host.allowed_hosts')
    public = AllowedHosts('www.example.com:443',
                          'virtual_host.allowed_hosts')
    for _ in range(2):  # the second round answers from memory
        assert local.allows('localhost:8080')
        assert not public.allows('localhost:8080')
        assert public.allows('www.example.com', 'https')
        assert not public.allows('www.example.com', 'http')
        assert not local.allows('www.example.com', 'https')


def test_remembered_answers_are_bounded_and_stay_right():
    from zope.pipeline.http import hosts
    allowed = AllowedHosts('*.example.com', 'virtual_host.allowed_hosts')
    for number in range(hosts.ANSWERS_KEPT * 2 + 3):
        assert allowed.allows('h%d.example.com' % number)
        assert not allowed.allows('h%d.example.org' % number)
        assert allowed._remembered.cache_info().currsize <= \
            hosts.ANSWERS_KEPT
    assert allowed.allows('h0.example.com')
    assert not allowed.allows('h0.example.org')
