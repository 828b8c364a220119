"""The retry stage through the full pipeline: transient errors are retried,
nothing of a failed attempt leaks, the body is re-read by every attempt."""

import hashlib
import logging
import os

import pytest
import transaction.interfaces
import webtest
import zope.component
from ZODB.POSException import ConflictError
from zope.publisher.interfaces import Retry

from zope.pipeline.interfaces import IBeforeRetry

from .outer import plan
from .outer import seen
from .outer.content import Counter
from .outer.fixtures import outer_app  # noqa: F401 - a fixture

COUNTER_CLASS = '%s.%s' % (Counter.__module__, Counter.__name__)


def attempts_of(view):
    return [record['attempt'] for record in seen if record['view'] == view]


def records_of(view):
    return [record for record in seen if record['view'] == view]


def post_request(path, body, content_type='application/octet-stream'):
    return webtest.TestRequest.blank(path, method='POST', body=body,
                                     content_type=content_type)


def chunked_request(path, body):
    """A POST as a server passes a chunked body: no CONTENT_LENGTH."""
    request = post_request(path, body)
    del request.environ['CONTENT_LENGTH']
    request.environ['HTTP_TRANSFER_ENCODING'] = 'chunked'
    return request


def without_lint(app):
    """The same pipeline without wsgiref.validate, which itself refuses
    the malformed requests some tests send."""
    return webtest.TestApp(app.app, extra_environ=app.extra_environ,
                           lint=False)


# -- nothing of a failed attempt leaks

def test_conflict_on_first_attempts_then_success_gives_one_200_with_only_the_last_attempts_headers_and_cookies(outer_app):  # noqa: E501 - the name is the scenario
    app = outer_app()
    plan['failures'] = 2

    response = app.get('/@@attempt', status=200)

    assert response.text == 'attempt 3'
    assert response.headers.getall('X-Attempt') == ['3']
    assert response.headers.getall('Set-Cookie') == ['attempt=3']
    assert attempts_of('attempt') == [1, 2, 3]
    assert response.request.environ['zope.pipeline.attempt'] == 3


def test_data_written_by_a_failed_attempt_never_reaches_the_client(outer_app):
    app = outer_app()
    plan['failures'] = 1

    response = app.get('/raw-write', status=200)

    assert response.body == b'written by attempt 2\nbody of attempt 2\n'
    assert response.headers.getall('X-Attempt') == ['2']
    assert response.headers.getall('Set-Cookie') == ['attempt=2; Path=/']


def test_conflict_on_commit_is_retried_and_client_sees_one_response(
        outer_app):
    app = outer_app()
    plan['failures'] = 1

    response = app.get('/@@bump', status=200)

    # The first attempt lost to a commit of 100 from another connection;
    # the second started from it.
    assert response.text == '101'
    assert attempts_of('bump') == [1, 2]
    plan['failures'] = 0
    assert app.get('/@@bump').text == '102'


# -- when to retry

@pytest.mark.parametrize('kind', ['conflict', 'transient', 'retry'])
def test_transient_errors_and_publisher_retry_are_retried(outer_app, kind):
    app = outer_app()
    plan.update(failures=1, error=kind)

    response = app.get('/@@attempt', status=200)

    assert response.text == 'attempt 2'
    assert attempts_of('attempt') == [1, 2]


def test_a_plain_exception_is_not_retried(outer_app):
    app = outer_app()
    plan.update(failures=1, error='plain')

    app.get('/@@attempt', status=500)

    assert attempts_of('attempt') == [1]


def test_attempts_setting_is_honoured_and_the_last_attempt_is_rendered_503_with_retry_after(outer_app):  # noqa: E501 - the name is the scenario
    app = outer_app(retry__attempts='2')
    plan['failures'] = 10

    response = app.get('/@@attempt', status=503)

    assert attempts_of('attempt') == [1, 2]
    assert response.headers['Retry-After'] == '1'
    assert 'X-Attempt' not in response.headers
    assert 'Set-Cookie' not in response.headers


def test_attempt_and_retries_left_are_set_in_the_environ(outer_app):
    app = outer_app(retry__attempts='3')
    plan['failures'] = 1

    app.get('/@@attempt', status=200)

    assert [(record['attempt'], record['retries_left'])
            for record in records_of('attempt')] == [(1, 2), (2, 1)]


def test_one_attempt_means_no_retry(outer_app):
    app = outer_app(retry__attempts='1')
    plan['failures'] = 1

    app.get('/@@attempt', status=503)

    assert attempts_of('attempt') == [1]


# -- events and logs

def test_before_retry_event_is_notified_with_the_attempt_numbers(outer_app):
    app = outer_app()
    events = []
    zope.component.provideHandler(events.append, [IBeforeRetry])
    plan['failures'] = 2

    app.get('/@@attempt', status=200)

    assert [event.attempt for event in events] == [1, 2]
    assert all(isinstance(event.error, ConflictError) for event in events)
    assert [event.environ['zope.pipeline.attempt'] for event in events] == [
        1, 2]


def test_retried_conflict_is_logged_at_info_in_one_line_with_oid_and_class(
        outer_app, caplog):
    app = outer_app()
    plan['failures'] = 1
    caplog.set_level(logging.INFO, logger='zope.pipeline.retry')

    app.get('/@@attempt', status=200)

    [record] = [record for record in caplog.records
                if record.name == 'zope.pipeline.retry']
    message = record.getMessage()
    assert record.levelno == logging.INFO
    assert '\n' not in message
    assert 'oid 0x2a' in message
    assert 'class %s' % COUNTER_CLASS in message
    assert 'attempt 1 of 10' in message
    assert record.exc_info is None


def test_exhausted_retry_is_logged_at_error_with_oid_and_class(
        outer_app, caplog):
    app = outer_app(retry__attempts='2')
    plan['failures'] = 10
    caplog.set_level(logging.INFO)

    app.get('/@@attempt', status=503)

    errors = [record for record in caplog.records
              if record.levelno == logging.ERROR]
    assert errors
    assert 'oid 0x2a' in caplog.text
    assert COUNTER_CLASS in caplog.text


def test_transient_error_outside_the_error_handler_gives_up_with_503_and_one_error_line(outer_app, caplog):  # noqa: E501 - the name is the scenario
    app = outer_app(retry__attempts='3', retry__retry_after='7')
    plan['failures'] = 10
    caplog.set_level(logging.INFO, logger='zope.pipeline.retry')

    response = app.get('/outer-transient', status=503)

    assert response.headers['Retry-After'] == '7'
    assert attempts_of('probe') == [1, 2, 3]
    assert response.request.environ['zope.pipeline.attempt'] == 3
    [error] = [record for record in caplog.records
               if record.levelno == logging.ERROR]
    message = error.getMessage()
    assert '\n' not in message
    assert 'after 3 attempts' in message
    assert 'oid 0x2a, class %s' % COUNTER_CLASS in message


def test_transient_error_outside_the_error_handler_is_retried(outer_app):
    app = outer_app()
    plan.update(failures=2, error='transient')

    app.get('/outer-transient', status=404)

    assert attempts_of('probe') == [1, 2, 3]


@pytest.mark.parametrize('size', [0, 5000])
def test_plain_error_outside_the_error_handler_propagates_once(outer_app,
                                                               size):
    app = outer_app(retry__spool_threshold='1024')
    plan.update(failures=1, error='plain')

    with pytest.raises(RuntimeError):
        app.do_request(post_request('/outer-transient', b'x' * size))

    assert attempts_of('probe') == [1]


def test_backoff_between_attempts_is_jittered_and_capped(outer_app,
                                                         monkeypatch):
    from zope.pipeline.stages import retry
    delays = []
    monkeypatch.setattr(retry.time, 'sleep', delays.append)
    app = outer_app(retry__attempts='5', retry__backoff='0.01',
                    retry__backoff_cap='0.025')
    plan['failures'] = 4

    app.get('/@@attempt', status=200)

    assert len(delays) == 4
    for attempt, delay in enumerate(delays, 1):
        assert 0 <= delay <= min(0.025, 0.01 * 2 ** (attempt - 1))


# -- the body, re-read by every attempt

def test_form_post_is_reread_identically_by_every_attempt(outer_app):
    app = outer_app()
    plan['failures'] = 2
    form = {'name': 'Grüße', 'number': '42'}

    app.post('/@@attempt', form, status=200)

    assert [record['form'] for record in records_of('attempt')] == [form] * 3


def test_large_form_post_above_spool_threshold_is_reread_identically(
        outer_app):
    app = outer_app(retry__spool_threshold='1024')
    plan['failures'] = 2
    form = {'big': 'x' * 200000 + 'end', 'small': 'y'}

    app.post('/@@attempt', form, status=200)

    assert [record['form'] for record in records_of('attempt')] == [form] * 3


@pytest.mark.parametrize('size', [10, 5000, 300000])
def test_raw_body_is_reread_identically_by_every_attempt(outer_app, size):
    app = outer_app(retry__spool_threshold='1024')
    plan['failures'] = 2
    body = os.urandom(size)

    app.do_request(post_request('/@@attempt', body), status=200)

    assert [(record['body_length'], record['body_sha256'])
            for record in records_of('attempt')] == [
        (size, hashlib.sha256(body).hexdigest())] * 3


@pytest.mark.parametrize('size', [0, 10, 5000, 300000])
def test_chunked_body_without_content_length_is_read_to_its_end_by_every_attempt(outer_app, size):  # noqa: E501 - the name is the scenario
    app = outer_app(retry__spool_threshold='1024')
    plan['failures'] = 1
    body = os.urandom(size)

    app.do_request(chunked_request('/@@attempt', body), status=200)

    assert [(record['body_length'], record['body_sha256'])
            for record in records_of('attempt')] == [
        (size, hashlib.sha256(body).hexdigest())] * 2


def test_spooled_body_read_by_lines_is_reread_identically_after_an_attempt_closed_it(outer_app):  # noqa: E501 - the name is the scenario
    app = outer_app(retry__spool_threshold='1024')
    plan['failures'] = 2
    body = b''.join(b'line %d\n' % number for number in range(1000))

    app.do_request(post_request('/raw-lines', body), status=200)

    assert [record['lines'] for record in records_of('lines')] == [
        body.splitlines(True)] * 3


def test_body_of_a_server_that_terminates_input_is_read_to_its_end(
        outer_app):
    app = outer_app()
    request = post_request('/@@attempt', b'to the end')
    del request.environ['CONTENT_LENGTH']
    request.environ['wsgi.input_terminated'] = True

    app.do_request(request, status=200)

    assert [record['body_length'] for record in records_of('attempt')] == [
        10]


def test_body_without_length_or_chunking_is_empty(outer_app):
    app = outer_app()
    request = post_request('/@@attempt', b'never read')
    del request.environ['CONTENT_LENGTH']

    app.do_request(request, status=200)

    assert [record['body_length'] for record in records_of('attempt')] == [0]


# -- bad bodies

@pytest.mark.parametrize('chunked', [False, True])
@pytest.mark.parametrize('threshold', ['1024', '1048576'])
def test_body_over_max_body_gets_413(outer_app, chunked, threshold):
    app = outer_app(retry__max_body='100000', retry__spool_threshold=threshold)
    body = b'x' * 100001
    request = (chunked_request if chunked else post_request)('/@@attempt',
                                                             body)

    response = app.do_request(request, status=413)

    assert b'100000' in response.body
    assert records_of('attempt') == []


def test_body_of_max_body_bytes_is_accepted(outer_app):
    app = outer_app(retry__max_body='1000')

    app.do_request(post_request('/@@attempt', b'x' * 1000), status=200)

    assert [record['body_length'] for record in records_of('attempt')] == [
        1000]


def test_max_body_zero_means_no_limit(outer_app):
    app = outer_app(retry__max_body='0', retry__spool_threshold='1024')

    app.do_request(chunked_request('/@@attempt', b'x' * 200000), status=200)

    assert [record['body_length'] for record in records_of('attempt')] == [
        200000]


@pytest.mark.parametrize('threshold', ['4', '1048576'])
def test_content_length_larger_than_the_body_sent_gets_400(outer_app,
                                                            threshold):
    app = outer_app(retry__spool_threshold=threshold)
    request = post_request('/@@attempt', b'0123456789')
    request.environ['CONTENT_LENGTH'] = '100'

    response = app.do_request(request, status=400)

    assert b'ended after 10 of the 100 bytes' in response.body
    assert records_of('attempt') == []


class BrokenInput:
    """A wsgi.input whose connection breaks after its first bytes, as
    mod_wsgi's does when the client goes away mid-body."""

    def __init__(self, first):
        self.first = first

    def read(self, size=-1):
        if self.first:
            data, self.first = self.first, b''
            return data
        raise OSError('mod_wsgi request data read error: Partial results '
                      'are valid but processing is incomplete')


@pytest.mark.parametrize('threshold', ['4', '1048576'])
def test_body_the_client_stops_sending_gets_400_and_one_log_line(
        outer_app, threshold, caplog):
    app = without_lint(outer_app(retry__spool_threshold=threshold))
    request = post_request('/@@attempt', b'0123456789')
    request.environ['CONTENT_LENGTH'] = '100'
    request.environ['wsgi.input'] = BrokenInput(b'0123456789')
    request.environ.pop('webob.is_body_seekable', None)

    with caplog.at_level(logging.WARNING, logger='zope.pipeline'):
        # Called directly: WebTest would rewind the input it was given.
        status, headers, body = request.call_application(app.app)
        body = b''.join(body)

    assert status == '400 Bad Request'
    assert b'could not be read after 10 bytes' in body
    assert records_of('attempt') == []
    [record] = [record for record in caplog.records
                if record.name.startswith('zope.pipeline')]
    assert record.levelname == 'WARNING'
    assert 'mod_wsgi request data read error' in record.getMessage()
    assert record.exc_info is None


@pytest.mark.parametrize('length', ['abc', '-5', '1e3', '0x10', '12 34',
                                    '\u0661\u0662'])
def test_non_numeric_content_length_gets_400(outer_app, length):
    app = without_lint(outer_app())
    request = post_request('/@@attempt', b'0123456789')
    request.environ['CONTENT_LENGTH'] = length

    response = app.do_request(request, status=400)

    assert b'not a number' in response.body
    assert records_of('attempt') == []


@pytest.mark.parametrize('max_body', ['0', '1000'])
def test_absurdly_large_content_length_gets_413(outer_app, max_body):
    app = outer_app(retry__max_body=max_body)
    request = post_request('/@@attempt', b'0123456789')
    request.environ['CONTENT_LENGTH'] = '9' * 40

    app.do_request(request, status=413)

    assert records_of('attempt') == []


def test_errors_the_retry_stage_retries():
    from zope.pipeline.http.errors import is_transient
    assert is_transient(ConflictError())
    assert is_transient(transaction.interfaces.TransientError())
    assert is_transient(Retry())
    assert not is_transient(RuntimeError())
