"""The create_request stage through the full pipeline: the request class
per method and content type, the environ keys, the default skin, closing,
and paths no request can be made for."""

import collections
import gc
import io
from wsgiref.validate import validator

import pytest
import webtest
from zope.publisher.base import BaseRequest
from zope.publisher.browser import BrowserRequest

from zope.pipeline.stages.create_request import close_request

from .outer import BROWSER_ONLY_ZCML
from .outer import plan
from .outer import seen
from .outer.fixtures import outer_app  # noqa: F401 - a fixture

XMLRPC_CALL = (b"<?xml version='1.0'?><methodCall><methodName>urls"
               b"</methodName><params></params></methodCall>")


@pytest.fixture
def closes(monkeypatch):
    """Count request.close() calls, per request."""
    counts = collections.Counter()
    close = BaseRequest.close

    def counting_close(request):
        counts[id(request)] += 1
        close(request)
    monkeypatch.setattr(BaseRequest, 'close', counting_close)
    return counts


def probes():
    return [record for record in seen if record['view'] == 'probe']


def close_counts(closes):
    return [closes[id(record['request'])] for record in probes()]


def wsgi_call(publisher, path):
    """Call the publisher as a server would (through wsgiref.validate);
    return (body iterable, statuses started)."""
    started = []

    def start_response(status, headers, exc_info=None):
        started.append(status)
        return started.append
    environ = webtest.TestRequest.blank(path).environ
    environ['REMOTE_ADDR'] = '127.0.0.1'
    return validator(publisher)(environ, start_response), started


# -- which request

@pytest.mark.parametrize('method, content_type, body, request_class, name', [
    ('GET', None, b'', 'BrowserRequest', 'browser'),
    ('HEAD', None, b'', 'BrowserRequest', 'browser'),
    ('POST', 'application/x-www-form-urlencoded', b'a=1', 'BrowserRequest',
     'browser'),
    ('POST', 'multipart/form-data; boundary=xyz',
     b'--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n'
     b'--xyz--\r\n', 'BrowserRequest', 'browser'),
    ('POST', 'text/xml', XMLRPC_CALL, 'XMLRPCRequest', 'xmlrpc'),
    ('POST', 'text/xml; charset=utf-8', XMLRPC_CALL, 'XMLRPCRequest',
     'xmlrpc'),
    ('PUT', 'text/plain', b'content', 'HTTPRequest', 'http'),
    ('DELETE', None, b'', 'HTTPRequest', 'http'),
    ('OPTIONS', None, b'', 'HTTPRequest', 'http'),
    pytest.param('PROPFIND', 'text/xml', b'<propfind/>', 'HTTPRequest',
                 'http', marks=pytest.mark.filterwarnings(
                     'ignore:Unknown REQUEST_METHOD')),
])
def test_each_method_and_content_type_gets_its_request_class(
        outer_app, method, content_type, body, request_class, name):
    app = outer_app()

    response = app.request('/folder', method=method, body=body,
                           content_type=content_type, expect_errors=True)

    assert response.status_int < 500
    [probe] = probes()
    assert (probe['request_class'], probe['request_type']) == (
        request_class, name)


def test_request_and_response_are_in_the_environ(outer_app):
    app = outer_app()

    app.get('/@@urls')

    [probe] = probes()
    assert probe['response_matches'] is True


@pytest.mark.parametrize('method, skinned', [
    ('GET', True), ('POST', True), ('PUT', False), ('DELETE', False)])
def test_default_skin_is_applied_to_browser_requests_only(outer_app, method,
                                                          skinned):
    app = outer_app()

    app.request('/', method=method, expect_errors=True)

    [probe] = probes()
    assert probe['default_skin'] is skinned


def test_a_request_factory_may_decline_and_the_next_one_is_chosen(
        outer_app):
    app = outer_app()

    app.get('/refused/fine', status=404)
    app.get('/@@urls', status=200)

    assert [probe['request_type'] for probe in probes()] == [
        'refuser', 'browser']


@pytest.mark.parametrize('path, status', [('/refused/404', 404),
                                          ('/refused/400', 400)])
def test_a_request_factory_refusing_the_request_gives_its_status(
        outer_app, path, status):
    app = outer_app()

    response = app.get(path, status=status)

    assert b'Traceback' not in response.body
    assert probes() == []


def test_a_method_no_request_type_handles_gets_405(make_testapp):
    app = make_testapp(BROWSER_ONLY_ZCML)

    response = app.request('/', method='PUT', body=b'x', status=405)

    assert b'PUT' in response.body
    assert app.get('/', status=200).text == 'browser: respond'


# -- closing

def test_request_is_closed_once_when_the_body_iterable_is_closed(
        outer_app, closes):
    app = outer_app()

    result, started = wsgi_call(app.app, '/@@urls')
    assert started == ['200 Ok']
    assert b'"url"' in b''.join(result)
    assert close_counts(closes) == [0]
    result.close()
    assert close_counts(closes) == [1]
    result.close()
    assert close_counts(closes) == [1]


def test_request_of_every_failed_attempt_is_closed_once(outer_app, closes):
    app = outer_app()
    plan['failures'] = 2

    app.get('/outer-transient', status=404)

    assert close_counts(closes) == [1, 1, 1]


def test_request_of_a_view_that_failed_is_closed_once(outer_app, closes):
    app = outer_app()
    plan.update(failures=2, error='plain')

    app.get('/@@attempt', status=500)

    assert close_counts(closes) == [1]


def test_request_is_closed_when_the_rest_of_the_pipeline_raises(
        outer_app, closes):
    app = outer_app()
    plan.update(failures=1, error='plain')

    with pytest.raises(RuntimeError):
        app.get('/outer-transient')

    assert close_counts(closes) == [1]


# -- paths no request can be made for, or nothing can be found at

@pytest.mark.parametrize('path', ['/..', '/../../etc/passwd', '/folder/../..',
                                  '/folder/../../@@urls', '/./../@@urls'])
def test_path_climbing_above_the_root_gets_400(outer_app, path):
    app = outer_app()

    response = app.get('/', extra_environ={'PATH_INFO': path}, status=400)

    assert b'Traceback' not in response.body


def test_percent_encoded_dots_climbing_above_the_root_get_400(outer_app):
    app = outer_app()

    app.get('/%2e%2e/%2E%2E/etc/passwd', status=400)


@pytest.mark.parametrize('path', ['/\xff', '/folder/\xc3', '/\xed\xa0\x80',
                                  '/\u2603'])
def test_invalid_utf8_in_the_path_gets_400(outer_app, path):
    app = outer_app()

    response = app.get('/', extra_environ={'PATH_INFO': path}, status=400)

    assert b'Traceback' not in response.body
    assert probes() == []


@pytest.mark.parametrize('path', ['/\x00', '/folder\x00/@@urls',
                                  '/folder/\x00', '/@@urls\x00'])
def test_nul_byte_in_the_path_gets_400_or_404_never_500(outer_app, path):
    app = outer_app()

    response = app.get('/', extra_environ={'PATH_INFO': path},
                       expect_errors=True)

    assert response.status_int in (400, 404)


# -- what a request leaves behind

def live_requests(but=()):
    """zope.publisher requests the cyclic collector tracks, but those of
    ``but`` (while it is disabled: unreachable ones are still tracked)."""
    known = {id(request) for request in but}
    return [ob for ob in gc.get_objects()
            if isinstance(ob, BaseRequest) and id(ob) not in known]


@pytest.mark.parametrize('method, path, body', [
    ('GET', '/', b''),
    ('GET', '/no-such-page', b''),
    ('POST', '/', b'a=1'),
    ('PUT', '/', b'text'),
])
def test_a_served_request_leaves_no_cyclic_garbage(make_testapp, method,
                                                    path, body):
    publisher = make_testapp().app
    gc.collect()
    gc.disable()
    before = live_requests()  # other tests' (kept: their ids stay theirs)
    try:
        environ = webtest.TestRequest.blank(
            path, method=method, POST=body or None).environ
        environ['REMOTE_ADDR'] = '127.0.0.1'
        started = []
        result = validator(publisher)(
            environ, lambda status, headers, exc_info=None: (
                started.append(status) or started.append))
        b''.join(result)
        result.close()
        del result, environ

        # reference counting alone freed the request, its response and
        # view: nothing was left for the cyclic collector
        assert live_requests(but=before) == []
    finally:
        gc.enable()
    assert started


def test_a_request_of_another_class_is_closed_and_left_alone():
    class OwnRequest:
        closed = 0
        _orig_env = _last_obj_traversed = 'kept'

        def close(self):
            self.closed += 1
    request = OwnRequest()

    close_request(request)

    assert (request.closed, request._orig_env,
            request._last_obj_traversed) == (1, 'kept', 'kept')


def test_a_request_whose_close_fails_still_lets_go_of_its_view():
    class FailingClose(BrowserRequest):
        def close(self):
            raise RuntimeError('close failed')
    request = FailingClose(io.BytesIO(b''), {})
    request._last_obj_traversed = object()

    with pytest.raises(RuntimeError):
        close_request(request)

    assert request._last_obj_traversed is None
    assert request.response._request is None
