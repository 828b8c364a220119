"""The security_headers stage: which headers it adds, which it keeps,
its settings, and a response's body, write() and close() left alone."""

import sys

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.stages.security_headers import security_headers_stage

from .test_wsgi import Body
from .test_wsgi import Server

DEFAULT_HEADERS = [('X-Frame-Options', 'SAMEORIGIN'),
                   ('Content-Security-Policy', "frame-ancestors 'self'"),
                   ('X-Content-Type-Options', 'nosniff')]


def app_sending(headers, body=None, written=b''):
    def app(environ, start_response):
        write = start_response('200 OK', list(headers))
        if written:
            write(written)
        return body if body is not None else [b'page']
    return app


def test_every_response_gets_the_default_headers():
    server = Server()
    stage = security_headers_stage(app_sending([('Content-Type', 'x/y')]))
    assert list(stage({}, server.start_response)) == [b'page']
    assert server.calls == [('200 OK', [('Content-Type', 'x/y')] +
                             DEFAULT_HEADERS)]


def test_headers_the_application_set_are_kept():
    own = [('x-frame-options', 'DENY'),
           ('Content-Security-Policy', "default-src 'self'; "
            "frame-ancestors https://partner.example"),
           ('X-Content-Type-Options', 'nosniff')]
    server = Server()
    security_headers_stage(app_sending(own))({}, server.start_response)
    assert server.calls == [('200 OK', own)]


def test_a_policy_without_frame_ancestors_gets_ours_beside_it():
    own = [('Content-Security-Policy', "default-src 'self'")]
    server = Server()
    security_headers_stage(app_sending(own), frame_options='',
                           nosniff=False)({}, server.start_response)
    assert server.calls == [('200 OK', own + [
        ('Content-Security-Policy', "frame-ancestors 'self'")])]


def test_the_body_write_and_close_are_the_applications():
    body = Body([b'b'])
    server = Server()
    result = security_headers_stage(app_sending([], body, written=b'a'))(
        {}, server.start_response)
    assert result is body
    assert server.writes == [b'a']
    result.close()
    assert body.closed == 1


def test_a_start_response_with_exc_info_gets_the_headers_too():
    def failing(environ, start_response):
        start_response('200 OK', [])
        try:
            raise ValueError('late')
        except ValueError:
            start_response('500 Internal Server Error', [],
                           sys.exc_info())
        return [b'error']

    calls = []

    def start_response(status, headers, exc_info=None):
        calls.append((status, headers, exc_info is not None))

    security_headers_stage(failing)({}, start_response)
    assert calls == [('200 OK', DEFAULT_HEADERS, False),
                     ('500 Internal Server Error', DEFAULT_HEADERS, True)]


def test_settings_choose_the_values():
    server = Server()
    security_headers_stage(app_sending([]), frame_options=' deny ',
                           frame_ancestors="  'self'   https://a.example ",
                           nosniff=False)({}, server.start_response)
    assert server.calls == [('200 OK', [
        ('X-Frame-Options', 'DENY'),
        ('Content-Security-Policy',
         "frame-ancestors 'self' https://a.example")])]


def test_with_every_header_off_the_stage_is_the_next_application():
    app = app_sending([])
    assert security_headers_stage(app, frame_options='', frame_ancestors='',
                                  nosniff=False) is app


@pytest.mark.parametrize('frame_options', ['ALLOW-FROM https://a.example',
                                           'sameorigin, deny'])
def test_an_unknown_frame_options_value_names_its_setting(frame_options):
    with pytest.raises(ConfigurationError,
                       match='security_headers.frame_options'):
        security_headers_stage(app_sending([]), frame_options=frame_options)


@pytest.mark.parametrize('frame_ancestors', [
    "'self'; script-src *", "'self', https://a.example", "'self'\x7f"])
def test_a_frame_ancestors_that_is_not_a_source_list_names_its_setting(
        frame_ancestors):
    with pytest.raises(ConfigurationError,
                       match='security_headers.frame_ancestors'):
        security_headers_stage(app_sending([]),
                               frame_ancestors=frame_ancestors)
