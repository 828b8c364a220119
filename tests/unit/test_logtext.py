"""client_text: what a client sent, quoted in one safe log line."""

import sys

from zope.pipeline.logtext import client_text
from zope.pipeline.logtext import ESCAPE_TRACEBACKS
from zope.pipeline.logtext import logger_for
from zope.pipeline.logtext import traceback_text


def test_newline_in_path_cannot_forge_a_log_line():
    assert client_text('/a\nFAKE 200 /admin') == '/a\\x0aFAKE 200 /admin'
    assert '\n' not in client_text('/x\r\n\r\nline')


def test_terminal_escape_is_escaped():
    assert client_text('\x1b[31mred') == '\\x1b[31mred'


def test_backslash_is_doubled_so_escapes_are_unambiguous():
    assert client_text('a\\x0ab') == 'a\\\\x0ab'


def test_c1_controls_and_line_separators_are_escaped():
    assert client_text('a\x85b\u2028c') == 'a\\x85b\\u2028c'


def test_printable_text_is_unchanged():
    assert client_text('/folder/pagé?x=1') == '/folder/pagé?x=1'


def test_none_is_a_dash():
    assert client_text(None) == '-'


def test_bytes_are_read_as_latin_1():
    assert client_text(b'/caf\xe9\n') == '/caf\xe9\\x0a'


def test_long_text_is_cut():
    assert client_text('x' * 50, limit=10) == 'x' * 10 + '...'


def raise_with(message):
    try:
        raise ValueError(message)
    except ValueError:
        return sys.exc_info()


def test_traceback_keeps_the_stack_and_escapes_the_message():
    text = traceback_text(raise_with('bad\nERROR forged line'))
    lines = text.splitlines()
    assert lines[0] == 'Traceback (most recent call last):'
    assert 'raise_with' in text
    assert lines[-1] == 'ValueError: bad\\x0aERROR forged line'


def test_traceback_of_a_chained_error_shows_both():
    try:
        try:
            raise KeyError('inner\r\n')
        except KeyError as inner:
            raise RuntimeError('outer') from inner
    except RuntimeError:
        text = traceback_text(sys.exc_info())
    assert "KeyError: 'inner\\\\r\\\\n'" in text
    assert 'direct cause' in text
    assert text.endswith('RuntimeError: outer')


def test_traceback_of_an_error_raised_while_handling_another():
    try:
        try:
            raise KeyError('first')
        except KeyError:
            raise RuntimeError('second')
    except RuntimeError:
        text = traceback_text(sys.exc_info())
    assert 'During handling of the above exception' in text


def test_traceback_of_an_error_without_a_stack():
    text = traceback_text((ValueError, ValueError('x\ny'), None))
    assert text == 'ValueError: x\\x0ay'


def test_logger_for_escapes_the_traceback_and_keeps_exc_info(caplog):
    logger = logger_for('zope.pipeline.test-logtext')
    assert logger_for('zope.pipeline.test-logtext').filters.count(
        ESCAPE_TRACEBACKS) == 1
    try:
        raise ValueError('x\nFORGED line')
    except ValueError:
        logger.exception('failed')
    record = caplog.records[-1]
    assert record.exc_info[0] is ValueError
    assert caplog.text.splitlines()[-1] == 'ValueError: x\\x0aFORGED line'
