"""client_text: what a client sent, quoted in one safe log line."""

import sys

from zope.pipeline.http.logtext import ESCAPE_TRACEBACKS
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.logtext import logger_for
from zope.pipeline.http.logtext import traceback_text


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
            raise RuntimeError('second')  # noqa: B904 - the context is the test
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


# -- Formatter: the storage layers' records on one line

def formatted(name, message, *args, exc_info=None, stack_info=None,
              fmt='%(levelname)s [%(name)s] %(message)s'):
    import logging

    from zope.pipeline.http.logtext import Formatter
    record = logging.LogRecord(name, logging.WARNING, __file__, 1, message,
                               args, exc_info)
    record.stack_info = stack_info
    return Formatter(fmt).format(record)


def lost_connection_raised_as_lock_error():
    """exc_info of an error raised from another, as RelStorage raises its
    commit lock errors."""
    try:
        try:
            raise OSError(2013, 'Lost connection\nto server')
        except OSError as lost:
            raise RuntimeError('Acquiring a lock failed') from lost
    except RuntimeError:
        return sys.exc_info()


def test_relstorage_traceback_is_summed_up_on_one_line():
    text = formatted('relstorage.adapters.connections',
                     'Disconnected (%s); attempting reconnect', 'x',
                     exc_info=lost_connection_raised_as_lock_error())
    assert '\n' not in text
    first, cause, which_caused, error = text.split(' | ')
    assert first == ('WARNING [relstorage.adapters.connections] '
                     'Disconnected (x); attempting reconnect')
    assert cause.startswith("OSError: [Errno 2013] Lost connection\\x0ato "
                            "server (at ")
    assert 'unit/test_logtext.py:' in cause
    assert cause.endswith(' in lost_connection_raised_as_lock_error)')
    assert which_caused == 'which caused'
    assert error.startswith('RuntimeError: Acquiring a lock failed (at ')


def test_an_error_raised_while_handling_another_says_so():
    try:
        try:
            raise KeyError('first')
        except KeyError:
            raise ValueError('second') from None
    except ValueError:
        suppressed = sys.exc_info()
    try:
        try:
            raise KeyError('first')
        except KeyError:
            raise ValueError('second')  # noqa: B904 - the context is shown
    except ValueError:
        during = sys.exc_info()
    assert formatted('txn.1', 'x', exc_info=suppressed).count(' | ') == 1
    assert ' | during which | ValueError: second' in formatted(
        'txn.1', 'x', exc_info=during)


def test_every_storage_layer_is_on_one_line_and_its_message_escaped():
    for name in ('relstorage', 'ZODB.Connection', 'txn.140069154309824',
                 'transaction'):
        assert formatted(name, 'a\nb') == 'WARNING [%s] a\\x0ab' % name


def test_other_loggers_keep_their_traceback_lines():
    text = formatted('zope.pipeline.error', 'GET / failed',
                     exc_info=lost_connection_raised_as_lock_error())
    assert text.startswith('WARNING [zope.pipeline.error] GET / failed\n'
                           'Traceback (most recent call last):')
    assert formatted('relstorageish', 'a\nb') == \
        'WARNING [relstorageish] a\nb'


def test_time_and_stack_of_a_one_line_record():
    text = formatted('relstorage', 'm', stack_info='Stack:\n  File "x"',
                     fmt='%(asctime)s %(message)s')
    assert text.endswith(' m | stack: Stack:\\x0a  File "x"')
    assert text[:4].isdigit()


def test_paths_are_relative_to_their_sys_path_entry(monkeypatch):
    from zope.pipeline.http.logtext import short_path
    monkeypatch.setattr(sys, 'path', ['', '/a', '/a/site-packages/'])
    assert short_path('/a/site-packages/relstorage/x.py') == 'relstorage/x.py'
    assert short_path('/a/b.py') == 'b.py'
    assert short_path('/elsewhere/c.py') == '/elsewhere/c.py'
