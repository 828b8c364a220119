"""The per-request shortcuts of the outer stages give what the general
paths give: the base tag filter on list bodies, retry without a body."""

import io

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
    assert seen[keys.RETRIES_LEFT] == 3


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
