"""Log injection: what a client sends (the path, the query that ends up in
an error message) cannot forge a line of the server's log; control
characters are escaped in every log line, tracebacks included."""

import logging

import pytest

from tests.security.conftest import build_site
from tests.security.conftest import RawClient
from tests.security.test_security import SECURITY_ZCML

FORGED = 'FORGED 127.0.0.1 admin logged in'


@pytest.fixture
def site(clean_zope):
    return RawClient(build_site(SECURITY_ZCML))


def logged_lines(caplog):
    text = '\n'.join(caplog.handler.format(record)
                     for record in caplog.records)
    return text.splitlines()


def test_newline_in_the_path_of_a_failing_request_forges_no_log_line(
        site, caplog):
    caplog.set_level(logging.DEBUG, logger='zope.pipeline')
    response = site.request(
        'GET', '/folder/page\n%s/../page/@@explode' % FORGED)
    assert response.status_int == 500
    lines = logged_lines(caplog)
    assert any('failed' in line for line in lines)
    assert not any(line.startswith('FORGED') for line in lines)
    assert any('\\x0aFORGED' in line for line in lines)


def test_newline_in_an_error_message_forges_no_log_line(site, caplog):
    caplog.set_level(logging.DEBUG, logger='zope.pipeline')
    response = site.request('GET', '/folder/page/@@explode-with-input',
                            query='what=x%%0A%s' % FORGED.replace(' ', '+'))
    assert response.status_int == 500
    lines = logged_lines(caplog)
    assert any(line.startswith('Traceback') for line in lines)
    assert not any(line.startswith('FORGED') for line in lines)


def test_terminal_escape_in_a_404_path_is_escaped_in_the_debug_log(
        site, caplog):
    caplog.set_level(logging.DEBUG, logger='zope.pipeline')
    site.request('GET', '/no-such-page\x1b[2J')
    text = '\n'.join(logged_lines(caplog))
    assert '\x1b' not in text
