"""The metrics stage around stand-in applications, on a hand-moved clock."""

import io
import os
import wsgiref.util

import pytest
import webtest
from ZODB.POSException import ConflictError
from zope.configuration.exceptions import ConfigurationError
from zope.interface import implementer
from zope.publisher.interfaces import IRequest

from zope.pipeline import environ as keys
from zope.pipeline.engine.build import BuildContext
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.engine.registry import StageRegistration
from zope.pipeline.interfaces import IBeforeRetry
from zope.pipeline.metrics import RECORD_KEY
from zope.pipeline.metrics.collector import Record
from zope.pipeline.metrics.collector import count_retry
from zope.pipeline.stages import metrics
from zope.pipeline.stages.call import CallStage
from zope.pipeline.stages.metrics import MetricsStage
from zope.pipeline.stages.retry import RetryStage


class FakeClock:

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def make_stage(clean_zope, clock):
    def make(app, **settings):
        settings.setdefault('modwsgi', False)
        settings.setdefault('flush_interval', 3600.0)
        return MetricsStage(app, clock=clock, **settings)
    return make


def drained(stage):
    """The records the stage handed over, aggregated."""
    return stage.collector.advance().records


def call(stage, **environ):
    base = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/', 'REMOTE_ADDR':
            '127.0.0.1'}
    base.update(environ)
    started = []
    body = stage(base, lambda status, headers, exc_info=None:
                 started.append(status) or (lambda data: None))
    return body, started, base


class ClosingBody:

    def __init__(self, chunks, clock=None):
        self.chunks = chunks
        self.clock = clock
        self.closed = 0

    def __iter__(self):
        for chunk in self.chunks:
            if self.clock is not None:
                self.clock.now += 1
            yield chunk

    def close(self):
        self.closed += 1


def test_streamed_body_is_timed_until_close_and_counted(make_stage, clock):
    body = ClosingBody([b'ab', b'', b'cde'], clock)

    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return body
    stage = make_stage(app)
    response = webtest.TestApp(stage, lint=True).get('/')
    assert response.body == b'abcde'
    (record,) = drained(stage)
    assert (record.bytes, record.blocks) == (5, 2)
    assert record.end - record.start == 3
    assert record.status == '200 OK'
    assert body.closed == 1


def test_close_is_forwarded_exactly_once(make_stage, clock):
    inner = ClosingBody([b'x'])
    stage = make_stage(lambda environ, start_response: (
        start_response('200 OK', []), inner)[1])
    body, _, _ = call(stage)
    assert list(body) == [b'x']
    clock.now += 2
    body.close()
    clock.now += 5
    body.close()
    assert inner.closed == 1
    (record,) = drained(stage)
    assert record.end == 1002


def test_closing_the_body_hands_the_record_over_even_if_close_fails(
        make_stage):
    class Failing(ClosingBody):
        def close(self):
            raise OSError('disk gone')
    stage = make_stage(lambda environ, start_response: (
        start_response('200 OK', []), Failing([]))[1])
    body, _, _ = call(stage)
    with pytest.raises(OSError):
        body.close()
    assert len(drained(stage)) == 1


def test_a_list_body_stays_a_list_and_is_counted_at_once(make_stage):
    chunks = [b'Not ', b'', b'Found']
    stage = make_stage(lambda environ, start_response: (
        start_response('404 Not Found', []), chunks)[1])
    body, _, _ = call(stage)
    assert body is chunks
    (record,) = drained(stage)
    assert (record.bytes, record.blocks, record.status) == \
        (9, 2, '404 Not Found')


def test_a_list_inside_closing_wrappers_is_counted_at_once_timed_to_close(
        make_stage, clock):
    from zope.pipeline.http.wsgi import ClosingIterator
    chunks = [b'<html>', b'', b'page</html>']
    closed = []
    stage = make_stage(lambda environ, start_response: (
        start_response('200 OK', []), ClosingIterator(ClosingIterator(
            chunks, lambda: closed.append('inner')),
            lambda: closed.append('outer')))[1])
    body, _, _ = call(stage)
    assert type(body) is ClosingIterator
    # the server iterates the list itself
    assert type(iter(body)) is type(iter([]))
    assert list(body) == chunks
    assert drained(stage) == []    # not finished before close()
    clock.now += 3
    body.close()
    body.close()
    assert closed == ['inner', 'outer']
    (record,) = drained(stage)
    assert (record.bytes, record.blocks, record.status) == \
        (17, 2, '200 OK')
    assert record.end - record.start == 3


def test_a_closing_wrapper_already_iterated_is_metered_chunk_by_chunk(
        make_stage):
    from zope.pipeline.http.wsgi import ClosingIterator

    def app(environ, start_response):
        start_response('200 OK', [])
        wrapper = ClosingIterator([b'ab', b'c'])
        iterator = iter(wrapper)
        next(iterator)      # a stage took the first chunk already
        return wrapper
    stage = make_stage(app)
    body, _, _ = call(stage)
    assert isinstance(body, metrics.MeteredBody)
    assert list(body) == [b'c']
    body.close()
    (record,) = drained(stage)
    assert (record.bytes, record.blocks) == (1, 1)


def test_a_file_wrapper_body_is_passed_through_for_sendfile(make_stage):
    data = b'x' * 1000

    def app(environ, start_response):
        start_response('200 OK', [('Content-Length', str(len(data)))])
        return environ['wsgi.file_wrapper'](io.BytesIO(data))
    stage = make_stage(app)
    body, _, _ = call(stage, **{'wsgi.file_wrapper':
                                wsgiref.util.FileWrapper})
    assert type(body) is wsgiref.util.FileWrapper
    (record,) = drained(stage)
    assert (record.bytes, record.blocks) == (1000, 1)


def test_a_file_wrapper_without_content_length_counts_no_bytes(make_stage):
    stage = make_stage(lambda environ, start_response: (
        start_response('200 OK', [('X-Other', '1')]),
        environ['wsgi.file_wrapper'](io.BytesIO(b'abc')))[1])
    call(stage, **{'wsgi.file_wrapper': wsgiref.util.FileWrapper})
    (record,) = drained(stage)
    assert record.bytes == 0


def test_output_through_the_write_callable_is_counted(make_stage):
    def app(environ, start_response):
        write = start_response('200 OK', [('Content-Type', 'text/plain')])
        write(b'hello ')
        write(b'')
        return [b'world']
    stage = make_stage(app)
    assert webtest.TestApp(stage, lint=True).get('/').body == \
        b'hello world'
    (record,) = drained(stage)
    assert (record.bytes, record.blocks) == (11, 2)


def test_an_exception_out_of_the_pipeline_counts_as_500_and_propagates(
        make_stage):
    def app(environ, start_response):
        raise RuntimeError('broken')
    stage = make_stage(app)
    with pytest.raises(RuntimeError):
        call(stage)
    (record,) = drained(stage)
    assert record.status == '500 Internal Server Error'


def test_the_status_of_a_late_failure_is_kept(make_stage):
    def app(environ, start_response):
        start_response('503 Service Unavailable', [])
        raise RuntimeError('after start_response')
    stage = make_stage(app)
    with pytest.raises(RuntimeError):
        call(stage)
    assert drained(stage)[0].status == '503 Service Unavailable'


def test_the_final_attempt_is_read_from_the_environ_after_the_response(
        make_stage):
    def app(environ, start_response):
        environ[keys.ATTEMPT] = 3
        start_response('200 OK', [])
        return []
    stage = make_stage(app)
    call(stage)
    assert drained(stage)[0].attempt == 3


@implementer(IBeforeRetry)
class Retrying:

    def __init__(self, environ, attempt):
        self.environ = environ
        self.error = None
        self.attempt = attempt


def test_each_retry_event_raises_the_attempts_of_the_shared_record():
    record = Record(0)
    attempt_environ = dict({RECORD_KEY: record})   # retry's shallow copy
    count_retry(Retrying(attempt_environ, 1))
    count_retry(Retrying(attempt_environ, 2))
    count_retry(Retrying(attempt_environ, 1))      # never goes back
    assert record.attempt == 3
    count_retry(Retrying({}, 1))                   # no metrics stage


def retry_around(app):
    """The retry stage around ``app``, built as the engine builds it:
    with the registered call stage's contract, whose result (the view
    name) it copies back from each attempt's environ."""
    registry = PipelineRegistry()
    registry.add_stage(StageRegistration('call', IRequest, CallStage))
    return RetryStage(app, backoff=0.0,
                      build=BuildContext(registry, {}, []))


def test_the_view_name_the_call_stage_sets_is_recorded(make_stage):
    def call_stage(environ, start_response):
        environ[keys.VIEW_NAME] = 'Folder:index.html'
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'ok']
    stage = make_stage(retry_around(call_stage))
    body, started, environ = call(stage, **{'wsgi.input': io.BytesIO()})
    assert body == [b'ok'] and started == ['200 OK']
    assert environ[keys.VIEW_NAME] == 'Folder:index.html'
    (record,) = drained(stage)
    assert record.view == 'Folder:index.html'


def test_the_view_name_is_recorded_even_when_the_call_fails(make_stage):
    def call_stage(environ, start_response):
        environ[keys.VIEW_NAME] = 'Folder:edit.html'
        raise ValueError('bad form')
    stage = make_stage(retry_around(call_stage))
    with pytest.raises(ValueError):
        call(stage, **{'wsgi.input': io.BytesIO()})
    (record,) = drained(stage)
    assert (record.view, record.status) == ('Folder:edit.html',
                                            '500 Internal Server Error')


def test_the_view_name_of_the_attempt_that_answered_is_recorded(
        make_stage):
    attempts = []

    def call_stage(environ, start_response):
        attempts.append(environ[keys.ATTEMPT])
        environ[keys.VIEW_NAME] = 'view-%d' % environ[keys.ATTEMPT]
        if len(attempts) == 1:
            raise ConflictError()
        start_response('200 OK', [])
        return [b'ok']
    stage = make_stage(retry_around(call_stage))
    call(stage, **{'wsgi.input': io.BytesIO()})
    (record,) = drained(stage)
    assert (record.view, record.attempt) == ('view-2', 2)


def test_a_request_that_published_no_view_has_none(make_stage):
    stage = make_stage(retry_around(
        lambda environ, start_response: (
            start_response('404 Not Found', []), [b'early'])[1]))
    call(stage, **{'wsgi.input': io.BytesIO()})
    (record,) = drained(stage)
    assert record.view is None


def test_a_request_an_outer_stage_marks_unmetered_is_not_counted(
        make_stage):
    def endpoint(environ, start_response):
        environ[keys.UNMETERED] = True
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'metrics']
    stage = make_stage(endpoint)
    body, started, _ = call(stage)
    assert body == [b'metrics'] and started == ['200 OK']
    assert drained(stage) == []
    assert not stage.collector.active


@pytest.mark.parametrize('setting, value, message', [
    ('buckets', '1 0.5', 'metrics.buckets'),
    ('statsd', 'localhost', 'metrics.statsd'),
])
def test_bad_settings_fail_naming_the_ini_key(make_stage, setting, value,
                                              message):
    with pytest.raises(ConfigurationError, match=message):
        make_stage(lambda environ, start_response: [], **{setting: value})


class FakeModWsgi:
    process_group = 'site'
    threads_per_process = 7

    def request_metrics(self):
        return None

    def start_recording_metrics(self):
        pass


def test_under_mod_wsgi_threads_and_the_group_directory_come_from_it(
        make_stage, monkeypatch):
    monkeypatch.setattr(metrics.modwsgi_server, 'server_module',
                        lambda: FakeModWsgi())
    assert metrics.modwsgi_threads(True) == 7
    assert metrics.modwsgi_threads(False) == metrics.DEFAULT_THREADS
    first, parent = metrics.group_directory('')
    assert 'zope.pipeline-metrics-' in first and parent == os.getppid()
    assert metrics.group_directory('/srv/metrics') == ('/srv/metrics', None)
    FakeModWsgi.process_group = 'other'
    try:
        assert metrics.group_directory('')[0] != first
    finally:
        FakeModWsgi.process_group = 'site'


def test_outside_mod_wsgi_a_process_keeps_its_numbers_to_itself(
        make_stage):
    assert metrics.group_directory('') == (None, None)
    stage = make_stage(lambda environ, start_response: [])
    assert stage.runtime.state is None
    assert stage.collector.threads == metrics.DEFAULT_THREADS


def test_the_worker_starts_with_the_first_request(make_stage):
    stage = make_stage(lambda environ, start_response: (
        start_response('200 OK', []), [])[1])
    assert not stage.runtime.running
    call(stage)
    assert stage.runtime.running
