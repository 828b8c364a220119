"""The debug_headers stage on its own: the headers it adds, on every way a
response can start, and nothing at all when disabled."""

import os
import sys

from zope.pipeline.stages.debug_headers import debug_headers_stage


def app(environ, start_response):
    if environ.get('fail'):
        try:
            raise ValueError('broken')
        except ValueError:
            start_response('500 Internal Server Error', [], sys.exc_info())
            return [b'broken']
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [b'ok']


def call(stage, environ):
    started = []

    def start_response(status, headers, exc_info=None):
        started.append((status, dict(headers), exc_info))
    body = stage(environ, start_response)
    return started[0], body


def test_disabled_the_stage_is_the_next_application_itself():
    assert debug_headers_stage(app) is app
    assert debug_headers_stage(app, enabled=False) is app


def test_enabled_it_names_process_attempt_and_daemon_group():
    stage = debug_headers_stage(app, enabled=True)
    (status, headers, exc_info), body = call(stage, {
        'zope.pipeline.attempt': 2, 'mod_wsgi.process_group': 'site'})
    assert headers['X-Pipeline-Pid'] == str(os.getpid())
    assert headers['X-Pipeline-Attempt'] == '2'
    assert headers['X-Pipeline-Process-Group'] == 'site'
    assert body == [b'ok']


def test_without_retry_or_mod_wsgi_only_the_pid_is_added():
    (status, headers, exc_info), body = call(
        debug_headers_stage(app, enabled=True), {})
    assert set(headers) == {'Content-Type', 'X-Pipeline-Pid'}


def test_an_error_response_passes_exc_info_on_with_the_headers():
    (status, headers, exc_info), body = call(
        debug_headers_stage(app, enabled=True), {'fail': True})
    assert status.startswith('500')
    assert exc_info[0] is ValueError
    assert 'X-Pipeline-Pid' in headers
