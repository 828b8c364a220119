"""The per-request shortcuts of the outer stages give what the general
paths give: the base tag filter on list bodies, retry without a body."""

import io

import pytest

from zope.pipeline import environ as keys
from zope.pipeline.stages.fix_relative_links import BaseTagFilter
from zope.pipeline.stages.retry import RetryStage

PAGE = b'<html><head><title>t</title></head><body>x</body></html>'


class Response:
    """The parts of a browser response the filter uses."""

    def __init__(self, base='http://127.0.0.1/page/index.html',
                 headers=None):
        self.base = base
        self.headers = dict(headers or {})

    def getBase(self):
        return self.base

    def getHeader(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def setHeader(self, name, value):
        self.headers[name.lower()] = str(value)


def expected(base=b'http://127.0.0.1/page/index.html'):
    return PAGE.replace(b'<head>', b'<head>\n<base href="' + base +
                        b'" />\n')


def test_base_filter_joins_a_list_of_several_chunks():
    response = Response(headers={'content-type': 'text/html',
                                 'content-length': str(len(PAGE))})
    body = BaseTagFilter(8192)(response, [PAGE[:10], PAGE[10:]])
    assert body == [expected()]
    assert response.headers['content-length'] == str(len(expected()))


def test_base_filter_takes_a_single_bytes_chunk_as_the_page():
    response = Response()
    assert BaseTagFilter(8192)(response, [PAGE]) == [expected()]


def test_base_filter_joins_a_single_chunk_that_is_not_bytes():
    response = Response()
    body = BaseTagFilter(8192)(response, [bytearray(PAGE)])
    assert body == [expected()]
    assert type(body[0]) is bytes


def test_base_filter_keeps_a_list_without_head_or_with_a_base():
    body = [b'<p>no head</p>']
    assert BaseTagFilter(8192)(Response(), body) is body
    body = [expected()]
    assert BaseTagFilter(8192)(Response(), body) is body


def test_base_filter_leaves_a_page_without_base_or_not_html():
    body = [PAGE]
    assert BaseTagFilter(8192)(Response(base=''), body) is body
    response = Response(headers={'content-type': 'text/plain'})
    assert BaseTagFilter(8192)(response, body) is body


def seen_by_attempt(environ):
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        seen['body'] = environ['wsgi.input'].read()
        start_response('200 OK', [])
        return [b'ok']
    RetryStage(app)(environ, lambda status, headers, exc_info=None: None)
    return seen


def test_retry_without_a_body_gives_an_empty_input_per_attempt():
    seen = seen_by_attempt({'REQUEST_METHOD': 'GET',
                            'wsgi.input': io.BytesIO(b'unread')})
    assert seen['body'] == b''
    assert seen['CONTENT_LENGTH'] == '0'
    assert seen[keys.ATTEMPT] == 1
    assert seen[keys.RETRIES_LEFT] == 9


def test_retry_reads_a_body_announced_by_transfer_encoding_only():
    seen = seen_by_attempt({'REQUEST_METHOD': 'POST',
                            'HTTP_TRANSFER_ENCODING': 'chunked',
                            'wsgi.input': io.BytesIO(b'data')})
    assert seen['body'] == b'data'
    assert seen['CONTENT_LENGTH'] == '4'
    assert 'HTTP_TRANSFER_ENCODING' not in seen


def test_retry_reads_a_terminated_input_without_a_length():
    seen = seen_by_attempt({'REQUEST_METHOD': 'POST',
                            'wsgi.input_terminated': True,
                            'wsgi.input': io.BytesIO(b'data')})
    assert seen['body'] == b'data'


class UnreadableInput(io.BytesIO):
    """A server's input that must not be read (mod_wsgi's daemon would
    wait for the Apache process to send the end of an empty body)."""

    def read(self, size=-1):
        raise AssertionError('the input of a bodiless request was read')


@pytest.mark.parametrize('method', ['GET', 'HEAD'])
def test_retry_does_not_read_a_terminated_input_of_a_bodiless_get(method):
    seen = seen_by_attempt({'REQUEST_METHOD': method,
                            'wsgi.input_terminated': True,
                            'wsgi.input': UnreadableInput()})
    assert seen['body'] == b''
    assert seen['CONTENT_LENGTH'] == '0'


def test_retry_reads_a_chunked_get_of_a_server_that_terminates_input():
    seen = seen_by_attempt({'REQUEST_METHOD': 'GET',
                            'HTTP_TRANSFER_ENCODING': 'chunked',
                            'wsgi.input_terminated': True,
                            'wsgi.input': io.BytesIO(b'query')})
    assert seen['body'] == b'query'


# -- virtual_host: the client address and the accepted Host headers


def host_environ(host, scheme='http', **extra):
    return dict({'HTTP_HOST': host, 'wsgi.url_scheme': scheme,
                 'REMOTE_ADDR': '192.0.2.7', 'PATH_INFO': '/'}, **extra)


def host_check(stage, host, scheme='http'):
    """The stage's answer for ``host``: None, or why it refused it."""
    from zope.pipeline.stages.virtual_host import Refused
    try:
        stage.check(host_environ(host, scheme))
    except Refused as error:
        return str(error)
    return None


def test_virtual_host_without_forwarded_headers_gives_the_remote_address():
    from zope.pipeline.stages.virtual_host import VirtualHostStage
    from zope.pipeline.stages.virtual_host import client_address
    stage = VirtualHostStage(None)
    for extra in ({}, {'HTTP_X_FORWARDED_FOR': '198.51.100.1'},
                  {'HTTP_X_FORWARDED_SERVER': 'elsewhere'}):
        environ = host_environ('localhost', **extra)
        general = client_address(dict(environ), False, stage.proxies)
        stage.check(environ)
        assert environ[keys.CLIENT_ADDRESS] == general
        assert 'HTTP_X_FORWARDED_FOR' not in environ
    assert general == '192.0.2.7'


def test_virtual_host_checks_a_host_per_scheme():
    from zope.pipeline.stages.virtual_host import VirtualHostStage
    stage = VirtualHostStage(None, allowed_hosts='www.example.com:443')
    for _ in range(2):  # the second round answers from memory
        assert host_check(stage, 'www.example.com', 'https') is None
        assert 'does not answer' in host_check(stage, 'www.example.com')
        assert host_check(stage, 'www.example.com:bad') == \
            'Bad Host header.'


def test_virtual_host_answers_stay_right_past_the_remembered_ones():
    from zope.pipeline.http import hosts
    from zope.pipeline.stages.virtual_host import VirtualHostStage
    stage = VirtualHostStage(None, allowed_hosts='*.example.com')
    for number in range(hosts.ANSWERS_KEPT * 2 + 3):
        assert host_check(stage, 'h%d.example.com' % number) is None
        assert host_check(stage, 'h%d.example.org' % number) is not None
    assert host_check(stage, 'h0.example.com') is None
    assert host_check(stage, 'h0.example.org') is not None
