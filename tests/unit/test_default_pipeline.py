"""The full default pipeline under wsgiref.validate for all three request
types: make_testapp runs WebTest's lint, and one test wraps the publisher
in wsgiref.validate.validator itself."""

import io
import wsgiref.validate

import pytest

from zope.pipeline.app import make_app

XMLRPC_CALL = (b"<?xml version='1.0'?><methodCall><methodName>ping"
               b"</methodName><params></params></methodCall>")


@pytest.fixture
def app(make_testapp):
    return make_testapp()


def test_browser_get_post_and_head_pass_validation(app):
    got = app.get('/', status=404)
    assert got.content_type == 'text/html'
    posted = app.post('/', {'field': 'value'}, status=404)
    assert posted.body == got.body
    head = app.head('/', status=404)
    assert head.body == b''
    assert head.headers['Content-Length'] == got.headers['Content-Length']


def test_xmlrpc_post_passes_validation_and_answers_in_xml(app):
    response = app.post('/', XMLRPC_CALL, content_type='text/xml',
                        status='*')
    assert response.status_int < 500
    assert response.content_type == 'text/xml'
    assert response.body.startswith(b"<?xml version='1.0'?>")
    assert b'<methodResponse>' in response.body


@pytest.mark.parametrize('method', ['put', 'delete'])
def test_plain_http_methods_without_views_get_405(app, method):
    call = getattr(app, method)
    response = call('/', b'data', status=405) if method == 'put' else call(
        '/', status=405)
    assert response.status == '405 Method Not Allowed'


def run_validated(app, method, body=b'', content_type=''):
    """Call the app the way a server does, through wsgiref's validator."""
    validated = wsgiref.validate.validator(app)
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer['status'], answer['headers'] = status, headers
        return lambda data: None
    environ = {
        'REQUEST_METHOD': method, 'SCRIPT_NAME': '', 'PATH_INFO': '/',
        'QUERY_STRING': '', 'SERVER_NAME': 'localhost', 'SERVER_PORT': '80',
        'SERVER_PROTOCOL': 'HTTP/1.1', 'REMOTE_ADDR': '127.0.0.1',
        'CONTENT_LENGTH': str(len(body)), 'wsgi.version': (1, 0),
        'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(body),
        'wsgi.errors': io.StringIO(), 'wsgi.multithread': True,
        'wsgi.multiprocess': False, 'wsgi.run_once': False}
    if content_type:
        environ['CONTENT_TYPE'] = content_type
    result = validated(environ, start_response)
    try:
        body = b''.join(result)
    finally:
        result.close()
    return answer['status'], body


def test_wsgiref_validator_wraps_the_whole_pipeline(clean_zope):
    publisher = make_app()
    assert run_validated(publisher, 'GET')[0] == '404 Not Found'
    assert run_validated(publisher, 'HEAD') == ('404 Not Found', b'')
    assert run_validated(publisher, 'POST', b'a=1',
                         'application/x-www-form-urlencoded')[0] == (
        '404 Not Found')
    status, body = run_validated(publisher, 'POST', XMLRPC_CALL, 'text/xml')
    assert b'<methodResponse>' in body
    assert run_validated(publisher, 'PUT', b'x')[0] == (
        '405 Method Not Allowed')
    assert run_validated(publisher, 'DELETE')[0] == '405 Method Not Allowed'
