"""The server-side counter: per-process files summed by the harness."""

import logging
import multiprocessing
import os
import time

import pytest
import webtest

from benchmarks import serverside
from benchmarks.stats import ServerCounts


def app_answering(status):
    def application(environ, start_response):
        start_response(status, [('Content-Type', 'text/plain')])
        return [b'body']
    return application


def failing_app(environ, start_response):
    raise RuntimeError('boom')


def test_responses_are_counted_per_status_class(tmp_path):
    statuses = iter(['200 OK', '200 OK', '303 See Other', '404 Not Found',
                     '500 Internal Server Error', '101 Switching'])

    def application(environ, start_response):
        start_response(next(statuses), [('Content-Type', 'text/plain')])
        return [b'x']

    counting = serverside.CountingMiddleware(application, str(tmp_path))
    app = webtest.TestApp(counting, lint=False)
    for _ in range(6):
        app.get('/', status='*')
    counts = serverside.read_counts(str(tmp_path))
    assert counts == {os.getpid(): ServerCounts(6, 2, 1, 1, 1)}


def test_responses_answered_from_a_stored_page_are_counted_as_hits(
        tmp_path):
    ages = iter([None, '0', None, '3'])

    def application(environ, start_response):
        age = next(ages)
        start_response('200 OK', [('Content-Type', 'text/plain')] + (
            [('Age', age)] if age is not None else []))
        return [b'x']

    counting = serverside.CountingMiddleware(application, str(tmp_path))
    app = webtest.TestApp(counting, lint=False)
    for _ in range(4):
        app.get('/')
    assert serverside.read_counts(str(tmp_path)) == {
        os.getpid(): ServerCounts(4, 4, 0, 0, 0, 2)}


def test_a_record_of_an_older_harness_reads_without_hits(tmp_path):
    path = tmp_path / '7.count'
    path.write_bytes(b'%12d %12d %12d %12d %12d\n' % (5, 4, 1, 0, 0))
    assert serverside.read_count_file(str(path)) == ServerCounts(
        5, 4, 1, 0, 0, 0)


def test_a_response_counts_only_once_the_server_closed_it(tmp_path):
    counting = serverside.CountingMiddleware(app_answering('200 OK'),
                                             str(tmp_path))
    body = counting({}, lambda status, headers, exc_info=None: None)
    assert list(body) == [b'body']
    assert serverside.total_counts(str(tmp_path)).total == 0
    body.close()
    assert serverside.total_counts(str(tmp_path)) == ServerCounts(1, 1)


def test_the_counted_app_passes_wsgi_validation(tmp_path):
    counting = serverside.CountingMiddleware(app_answering('200 OK'),
                                             str(tmp_path))
    webtest.TestApp(counting, lint=True).get('/')
    assert serverside.total_counts(str(tmp_path)).s2xx == 1


def test_an_application_error_counts_as_a_5xx(tmp_path):
    counting = serverside.CountingMiddleware(failing_app, str(tmp_path))
    with pytest.raises(RuntimeError):
        counting({}, None)
    assert serverside.total_counts(str(tmp_path)) == ServerCounts(1, 0, 0,
                                                                  0, 1)


def test_a_body_closed_before_start_response_counts_as_a_5xx(tmp_path):
    def lazy(environ, start_response):
        yield b'never started'

    counting = serverside.CountingMiddleware(lazy, str(tmp_path))
    counting({}, None).close()
    assert serverside.total_counts(str(tmp_path)).s5xx == 1


def serve_in_child(directory, requests):
    counting = serverside.CountingMiddleware(app_answering('200 OK'),
                                             directory)
    for _ in range(requests):
        counting({}, lambda status, headers, exc_info=None: None).close()


def test_counts_of_several_processes_are_summed(tmp_path):
    directory = str(tmp_path)
    context = multiprocessing.get_context('fork')
    children = [context.Process(target=serve_in_child, args=(directory, n))
                for n in (3, 4)]
    for child in children:
        child.start()
    for child in children:
        child.join(30)
    serve_in_child(directory, 5)
    counts = serverside.read_counts(directory)
    assert set(counts) == {os.getpid()} | {child.pid for child in children}
    assert serverside.total_counts(directory) == ServerCounts(12, 12)
    assert set(serverside.read_ready(directory)) == set(counts)


def test_a_middleware_inherited_by_a_fork_counts_in_its_own_file(tmp_path):
    counting = serverside.CountingMiddleware(app_answering('200 OK'),
                                             str(tmp_path))

    def child():
        counting({}, lambda status, headers, exc_info=None: None).close()

    process = multiprocessing.get_context('fork').Process(target=child)
    process.start()
    process.join(30)
    counts = serverside.read_counts(str(tmp_path))
    assert counts == {os.getpid(): ServerCounts(),
                      process.pid: ServerCounts(1, 1)}


def test_the_ready_record_says_when_the_process_started_and_loaded(tmp_path):
    serverside.CountingMiddleware(app_answering('200 OK'), str(tmp_path))
    record = serverside.read_ready(str(tmp_path))[os.getpid()]
    assert record['pid'] == os.getpid()
    assert record['started'] <= record['ready'] <= time.time()


def test_a_ready_file_being_written_is_skipped(tmp_path):
    (tmp_path / '12.ready').write_text('{"pid": 1')
    assert serverside.read_ready(str(tmp_path)) == {}


def test_a_count_file_being_created_reads_as_zero(tmp_path):
    (tmp_path / '12.count').write_bytes(b'')
    assert serverside.read_counts(str(tmp_path)) == {12: ServerCounts()}


def test_waiting_for_counts_returns_what_was_served_at_the_timeout(tmp_path):
    counting = serverside.CountingMiddleware(app_answering('200 OK'),
                                             str(tmp_path))
    before = serverside.total_counts(str(tmp_path))
    counting({}, lambda status, headers, exc_info=None: None).close()
    served = serverside.wait_for_counts(str(tmp_path), before, 2,
                                        timeout=0.05)
    assert served == ServerCounts(1, 1)
    assert serverside.wait_for_counts(str(tmp_path), before, 1) == served


def test_the_ceiling_returns_exactly_the_size_asked_for():
    for size in (5, 1789):
        app = webtest.TestApp(serverside.PlainPage(size), lint=True)
        response = app.get('/')
        assert len(response.body) == size
        assert response.content_length == size


def test_retry_lines_are_logged_and_counted_but_not_other_info(tmp_path):
    serverside.configure_logging(str(tmp_path))
    pipeline = logging.getLogger('zope.pipeline')
    try:
        logging.getLogger('zope.pipeline.retry').info('Retrying GET /')
        logging.getLogger('zope.pipeline.zodb.storage').info('Opened')
        logging.getLogger('zope.pipeline.zodb.storage').warning('Slow')
        for handler in pipeline.handlers:
            handler.flush()
        assert serverside.count_log_lines(str(tmp_path), 'Retrying') == 1
        assert serverside.count_log_lines(str(tmp_path), 'Opened') == 0
        assert serverside.count_log_lines(str(tmp_path), 'Slow') == 1
    finally:
        for handler in list(pipeline.handlers):
            if getattr(handler, 'baseFilename', '').startswith(
                    str(tmp_path)):
                pipeline.removeHandler(handler)
                handler.close()
        pipeline.setLevel(logging.NOTSET)
        logging.getLogger('zope.pipeline.retry').setLevel(logging.NOTSET)


def test_status_classes_index_their_place_in_the_record():
    assert [serverside.status_index(status) for status in
            ('200 OK', '302 Found', '404 Not Found', '503 Busy', '101 Up',
             '')] == [1, 2, 3, 4, -1, -1]
