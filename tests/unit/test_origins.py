"""Origins as the csrf stage compares them."""

import pytest

from zope.pipeline.http.origins import origin_of
from zope.pipeline.http.origins import serialize
from zope.pipeline.http.origins import virtual_host_origin


@pytest.mark.parametrize('url, origin', [
    ('http://localhost', ('http', 'localhost', 80)),
    ('HTTPS://Example.COM:443/a/b?c#d', ('https', 'example.com', 443)),
    ('http://localhost:8080', ('http', 'localhost', 8080)),
    ('http://[::1]:8080', ('http', '::1', 8080)),
])
def test_origin_of_an_http_url_is_its_scheme_host_and_port(url, origin):
    assert origin_of(url) == origin


@pytest.mark.parametrize('value', [
    None, '', 'null', '/folder/page', 'localhost', 'ftp://files.example',
    'http://', 'http://localhost:99999', 'http://localhost:x',
    'http://a.example http://b.example', 'http://a.example\nb'])
def test_anything_but_an_http_url_has_no_origin(value):
    assert origin_of(value) is None


@pytest.mark.parametrize('origin, text', [
    (('http', 'localhost', 80), 'http://localhost'),
    (('https', 'example.com', 8443), 'https://example.com:8443'),
    (('http', '::1', 8080), 'http://[::1]:8080'),
])
def test_origin_is_serialized_as_browsers_write_it(origin, text):
    assert serialize(origin) == text


def test_first_virtual_host_segment_is_the_proxys_and_wins():
    path = '/++vh++https:www.example.com:443/++/++vh++http:evil.example:80/++'
    assert virtual_host_origin(path) == ('https', 'www.example.com', 443)


@pytest.mark.parametrize('path', [
    '/folder/page', '/++vh++/++/folder', '/++vh++https:only-two/++'])
def test_path_without_a_usable_virtual_host_segment_has_no_origin(path):
    assert virtual_host_origin(path) is None
