"""ClosingIterator, DeferredStart and plain_response: the WSGI pieces every
stage relies on, checked against PEP 3333's rules."""

import sys

import pytest

from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.http.wsgi import DeferredStart
from zope.pipeline.http.wsgi import listed_chunks
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.http.wsgi import prepend
from zope.pipeline.http.wsgi import run_all


class Body:
    """An iterable that counts its close() calls and may fail closing."""

    def __init__(self, chunks=(b'a', b'b'), fail_close=False):
        self.chunks = list(chunks)
        self.closed = 0
        self.fail_close = fail_close

    def __iter__(self):
        return iter(self.chunks)

    def close(self):
        self.closed += 1
        if self.fail_close:
            raise RuntimeError('close failed')


class Server:
    """Records what a WSGI server would be told."""

    def __init__(self):
        self.calls = []
        self.writes = []

    def start_response(self, status, headers, exc_info=None):
        if exc_info is not None and self.calls:
            raise exc_info[1].with_traceback(exc_info[2])
        self.calls.append((status, headers))
        return self.writes.append


# -- ClosingIterator

def test_closing_iterator_yields_the_body_and_closes_it_then_callbacks():
    body, order = Body(), []
    wrapped = ClosingIterator(body, lambda: order.append(body.closed))
    assert list(wrapped) == [b'a', b'b']
    wrapped.close()
    assert body.closed == 1
    assert order == [1]


def test_closing_iterator_forwards_close_exactly_once():
    body, calls = Body(), []
    wrapped = ClosingIterator(body, lambda: calls.append('callback'))
    wrapped.close()
    wrapped.close()
    assert body.closed == 1
    assert calls == ['callback']


def test_closing_iterator_runs_callbacks_even_if_close_raises():
    body, calls = Body(fail_close=True), []
    wrapped = ClosingIterator(body, lambda: calls.append('first'),
                              lambda: calls.append('second'))
    with pytest.raises(RuntimeError, match='close failed'):
        wrapped.close()
    assert calls == ['first', 'second']
    wrapped.close()
    assert body.closed == 1


def test_closing_iterator_of_a_plain_list_just_runs_callbacks():
    calls = []
    wrapped = ClosingIterator([b'x'], lambda: calls.append('done'))
    assert iter(wrapped) is iter(wrapped)
    assert list(wrapped) == [b'x']
    wrapped.close()
    assert calls == ['done']


def test_closing_iterator_of_an_iterable_without_close_runs_callbacks():
    calls = []
    wrapped = ClosingIterator((b'x',), lambda: calls.append('one'),
                              lambda: calls.append('two'))
    assert list(wrapped) == [b'x']
    wrapped.close()
    assert calls == ['one', 'two']


def test_closing_iterator_raises_what_its_one_callback_raises():
    def fail():
        raise ValueError('callback failed')
    wrapped = ClosingIterator([b'x'], fail)
    with pytest.raises(ValueError, match='callback failed'):
        wrapped.close()
    wrapped.close()  # closed already: nothing runs again


def test_listed_chunks_finds_a_list_inside_unused_closing_iterators():
    chunks = [b'a', b'b']
    assert listed_chunks(chunks) is chunks
    assert listed_chunks(ClosingIterator(ClosingIterator(chunks))) is chunks


def test_listed_chunks_is_none_for_anything_that_iterates_its_own_way():
    class Subclass(ClosingIterator):
        pass
    assert listed_chunks(iter([b'a'])) is None
    assert listed_chunks((b'a',)) is None
    assert listed_chunks(ClosingIterator(iter([b'a']))) is None
    assert listed_chunks(Subclass([b'a'])) is None
    started = ClosingIterator([b'a'])
    iter(started)
    assert listed_chunks(ClosingIterator(started)) is None


def test_run_all_runs_every_callback_and_reraises_the_first_error():
    calls = []

    def fail(name):
        def callback():
            calls.append(name)
            raise ValueError(name)
        return callback
    with pytest.raises(ValueError, match='one'):
        run_all([fail('one'), lambda: calls.append('ok'), fail('two')])
    assert calls == ['one', 'ok', 'two']


# -- DeferredStart

def test_deferred_start_holds_the_response_until_send():
    server, held = Server(), DeferredStart()
    held('200 OK', [('A', '1')])
    assert held.started
    assert server.calls == []
    body = Body()
    assert held.send(server.start_response, body) is body
    assert server.calls == [('200 OK', [('A', '1')])]


def test_deferred_start_prepends_written_data_and_closes_the_body():
    server, held = Server(), DeferredStart()
    write = held('200 OK', [])
    write(b'w1')
    write(b'w2')
    body = Body()
    sent = held.send(server.start_response, body)
    assert list(sent) == [b'w1', b'w2', b'a', b'b']
    sent.close()
    assert body.closed == 1


def test_deferred_start_accepts_start_response_during_first_iteration():
    server, held = Server(), DeferredStart()

    def late_app(environ, start_response):
        write = start_response('201 Created', [('B', '2')])
        write(b'written')
        yield b'first'
        yield b'second'
    assert not held.started
    sent = held.send(server.start_response, late_app({}, held))
    assert server.calls == [('201 Created', [('B', '2')])]
    assert list(sent) == [b'written', b'first', b'second']
    sent.close()


def test_deferred_start_of_an_empty_late_body_sends_headers_only():
    server, held = Server(), DeferredStart()

    def empty(start_response):
        start_response('204 No Content', [])
        return
        yield  # a generator
    sent = held.send(server.start_response, empty(held))
    assert server.calls == [('204 No Content', [])]
    assert list(sent) == []


def test_deferred_start_fails_when_the_app_never_starts_the_response():
    server, held, body = Server(), DeferredStart(), Body(chunks=())
    with pytest.raises(AssertionError, match='without calling start_resp'):
        held.send(server.start_response, body)
    assert body.closed == 1
    assert server.calls == []


def test_deferred_start_closes_the_body_when_its_first_chunk_fails():
    closed = []

    def failing(start_response):
        try:
            raise KeyError('boom')
            yield b''
        finally:
            closed.append(True)
    with pytest.raises(KeyError):
        DeferredStart().send(Server().start_response, failing(None))
    assert closed == [True]


def test_deferred_start_second_call_without_exc_info_asserts():
    held = DeferredStart()
    held('200 OK', [])
    with pytest.raises(AssertionError, match='second time without exc_info'):
        held('500 Internal Server Error', [])


def test_deferred_start_error_before_send_replaces_the_response():
    server, held = Server(), DeferredStart()
    held('200 OK', [('A', '1')])
    try:
        raise ValueError('late error')
    except ValueError:
        held('500 Internal Server Error', [], sys.exc_info())
    held.send(server.start_response, [b'error'])
    assert server.calls == [('500 Internal Server Error', [])]


def test_deferred_start_error_after_send_reaches_the_server():
    server, held = Server(), DeferredStart()
    held('200 OK', [])
    held.send(server.start_response, [b'ok'])
    try:
        raise ValueError('while streaming')
    except ValueError:
        exc_info = sys.exc_info()
    with pytest.raises(ValueError, match='while streaming'):
        held('500 Internal Server Error', [], exc_info)


def test_deferred_start_after_send_without_exc_info_goes_to_the_server():
    server, held = Server(), DeferredStart()
    held('200 OK', [])
    held.send(server.start_response, [])
    held('200 OK', [('Again', '1')])
    assert server.calls[-1] == ('200 OK', [('Again', '1')])


def test_deferred_start_writes_after_send_go_to_the_server_in_order():
    server, held = Server(), DeferredStart()

    def streaming(start_response):
        write = start_response('200 OK', [])
        write(b'held')
        yield b'one'
        write(b'direct')
        yield b'two'
    app_iter = streaming(held)
    assert not held.started  # the generator has not run yet
    sent = held.send(server.start_response, app_iter)
    for chunk in sent:
        server.writes.append(chunk)
    assert server.writes == [b'held', b'one', b'direct', b'two']


# -- plain_response

def test_plain_response_sends_utf8_text_with_its_length():
    server = Server()
    body = plain_response(server.start_response, '404 Not Found', 'Nö',
                          [('X-Extra', 'yes')])
    assert body == ['Nö'.encode('utf-8')]
    assert server.calls == [('404 Not Found', [
        ('Content-Type', 'text/plain; charset=utf-8'),
        ('Content-Length', '3'), ('X-Extra', 'yes')])]


def test_plain_response_passes_exc_info_on():
    held = DeferredStart()
    held('200 OK', [])
    try:
        raise ValueError('x')
    except ValueError:
        plain_response(held, '500 Internal Server Error', 'oops',
                       exc_info=sys.exc_info())
    assert held.status == '500 Internal Server Error'


def test_prepend_yields_chunks_then_the_rest_and_closes_the_body_once():
    body = Body([b'b', b'c'])
    rest = iter(body)
    next(rest)
    result = prepend([b'x', b'y'], rest, body)
    assert list(result) == [b'x', b'y', b'c']
    result.close()
    result.close()
    assert body.closed == 1


def test_html_response_is_a_whole_uncached_page():
    from zope.pipeline.http.wsgi import html_response
    server = Server()
    body = html_response(server.start_response, '403 Forbidden',
                         '<p>Nö</p>', [('X-Extra', 'yes')])
    assert body == ['<p>Nö</p>'.encode('utf-8')]
    assert server.calls == [('403 Forbidden', [
        ('Content-Type', 'text/html; charset=utf-8'),
        ('Content-Length', '10'), ('Cache-Control', 'no-store'),
        ('X-Extra', 'yes')])]
