"""Streamed results: IResult iterables and files are sent as they are
produced, closed exactly once, and what they read (the ZODB connection)
stays valid until the server closes the body."""

import pytest

from fixtures.testing import call_wsgi
from fixtures.testing import classic_app
from fixtures.views import PROBE

#: The chunks of the streamed page: head, title, eight paragraphs, end.
CHUNKS = 11


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def test_iresult_is_streamed_and_closed_exactly_once(app):
    started, body = call_wsgi(app.app, '/folder/doc/stream.html')
    data = b''.join(body)
    assert PROBE.closed == 0
    body.close()
    body.close()
    assert PROBE.closed == 1
    assert PROBE.produced == CHUNKS
    assert started.status == '200 Ok'
    assert data.startswith(b'<html><head><title>Hello</title>')
    assert b'<base' not in data


def test_iresult_closed_early_is_closed_once_and_read_no_further(app):
    started, body = call_wsgi(app.app, '/folder/doc/stream.html')
    next(iter(body))
    body.close()
    assert PROBE.closed == 1
    assert PROBE.produced == 1


def test_zodb_connection_stays_open_until_the_streamed_body_is_closed(app):
    started, body = call_wsgi(app.app, '/folder/doc/stream.html')
    data = b''.join(body)
    assert b'<p>7 Relative links need a base.</p>' in data
    assert PROBE.open_while_reading == [True] * CHUNKS
    assert PROBE.connection.opened is not None
    body.close()
    assert PROBE.connection.opened is None


def test_streamed_body_through_webtest_passes_wsgiref_validate(app):
    response = app.get('/folder/doc/stream.html')
    assert response.body.endswith(b'</body></html>')
    assert PROBE.closed == 1


class FileWrapper:
    """A server's wsgi.file_wrapper that notes it was used."""

    used = []

    def __init__(self, stream, block_size=8192):
        self.stream = stream
        self.block_size = block_size
        self.used.append(self)

    def __iter__(self):
        return iter(lambda: self.stream.read(self.block_size), b'')

    def close(self):
        self.stream.close()


def test_file_result_is_sent_with_the_servers_file_wrapper(app):
    FileWrapper.used.clear()
    started, body = call_wsgi(app.app, '/folder/doc/file.txt',
                              **{'wsgi.file_wrapper': FileWrapper})
    data = b''.join(body)
    assert len(FileWrapper.used) == 1
    assert not PROBE.stream.closed
    body.close()
    assert PROBE.stream.closed
    assert data == b'Relative links need a base.' * 100
    assert started.header('Content-Length') == str(len(data))


def test_file_result_without_a_file_wrapper_is_read_in_blocks(app):
    started, body = call_wsgi(app.app, '/folder/doc/file.txt')
    data = b''.join(body)
    body.close()
    assert PROBE.stream.closed
    assert data == b'Relative links need a base.' * 100


def test_head_of_a_file_result_closes_the_file(app):
    response = app.head('/folder/doc/file.txt')
    assert response.body == b''
    assert response.headers['Content-Length'] == str(27 * 100)
    assert PROBE.stream.closed
