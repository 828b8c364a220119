"""Client-controlled text made safe to put in a log line.

Every log line that quotes something a client sent (the path, the method,
a header, a login) passes it through :func:`client_text`, so a ``%0A`` in a
URL cannot forge a second log line and a terminal escape cannot reach the
administrator's terminal.  A traceback is logged as :func:`traceback_text`
makes it: the server's own stack as Python prints it, and each exception's
message (which may quote the client) escaped onto one line; loggers made
by :func:`logger_for` do that for every record that carries ``exc_info``
(which stays on the record for handlers that want the exception).

:class:`Formatter`, the formatter the shipped inis configure, puts each
record of the storage layers (RelStorage, ZODB, transaction) on one line,
its traceback summed up by :func:`traceback_line`: a database fault makes
them log a traceback per connection and attempt, which would bury the
one line zope.pipeline logs per request.
"""

import logging
import os
import sys
import traceback

__all__ = (
    'client_text',
    'traceback_text',
    'logger_for',
    'Formatter',
)

#: Longest client text quoted in one log line; the rest is cut.
MAX_LENGTH = 1000
#: Longest exception message in a logged traceback.
MAX_MESSAGE_LENGTH = 4000


def _escape_table():
    table = {ord('\\'): '\\\\'}
    for code in list(range(0x20)) + list(range(0x7f, 0xa0)):
        table[code] = '\\x%02x' % code
    for code in (0x2028, 0x2029):  # line and paragraph separators
        table[code] = '\\u%04x' % code
    return table


ESCAPES = _escape_table()


def client_text(value, limit=MAX_LENGTH):
    """Return ``value`` as one printable line: control characters (CR, LF,
    ESC, ...) and backslashes escaped, cut after ``limit`` characters.
    ``None`` becomes ``-`` (as in Apache's log format); bytes are read as
    Latin-1, as WSGI environ strings are."""
    if value is None:
        return '-'
    if isinstance(value, bytes):
        value = value.decode('latin-1')
    text = str(value)
    if len(text) > limit:
        return text[:limit].translate(ESCAPES) + '...'
    return text.translate(ESCAPES)


def traceback_text(exc_info):
    """Format ``exc_info`` as Python does (chained exceptions included),
    with each exception's message escaped onto one line."""
    error = traceback.TracebackException(*exc_info)
    return ''.join(_traceback_parts(error)).rstrip('\n')


def _traceback_parts(error):
    if error.__cause__ is not None:
        yield from _traceback_parts(error.__cause__)
        yield ('\nThe above exception was the direct cause of the '
               'following exception:\n\n')
    elif error.__context__ is not None and not error.__suppress_context__:
        yield from _traceback_parts(error.__context__)
        yield ('\nDuring handling of the above exception, another '
               'exception occurred:\n\n')
    if error.stack:
        yield 'Traceback (most recent call last):\n'
        yield from error.stack.format()
    message = ''.join(error.format_exception_only()).rstrip('\n')
    yield client_text(message, MAX_MESSAGE_LENGTH) + '\n'


class EscapeTracebacks(logging.Filter):
    """Give each record with ``exc_info`` its traceback as
    :func:`traceback_text` formats it (``logging.Formatter`` prints a
    record's ``exc_text`` instead of formatting ``exc_info`` again)."""

    def filter(self, record):
        if record.exc_info and not record.exc_text:
            record.exc_text = traceback_text(record.exc_info)
        return True


ESCAPE_TRACEBACKS = EscapeTracebacks()


def logger_for(name):
    """``logging.getLogger(name)``, whose tracebacks are escaped."""
    logger = logging.getLogger(name)
    if ESCAPE_TRACEBACKS not in logger.filters:
        logger.addFilter(ESCAPE_TRACEBACKS)
    return logger


#: Loggers whose records :class:`Formatter` puts on one line: the storage
#: layers (``txn.<thread>`` is the transaction package's).
ONE_LINE_LOGGERS = ('relstorage', 'ZODB', 'txn', 'transaction')


def traceback_line(exc_info):
    """Sum up ``exc_info`` in one line: for each exception of the chain,
    as Python prints them (causes first), its frames (``file:line in
    function``, outermost first, paths relative to the ``sys.path`` entry
    holding them) and its message, escaped."""
    error = traceback.TracebackException(*exc_info)
    return ' | '.join(_chain_parts(error))


def _chain_parts(error):
    if error.__cause__ is not None:
        yield from _chain_parts(error.__cause__)
        yield 'which caused'
    elif error.__context__ is not None and not error.__suppress_context__:
        yield from _chain_parts(error.__context__)
        yield 'during which'
    frames = ' > '.join('%s:%s in %s' % (short_path(frame.filename),
                                         frame.lineno, frame.name)
                        for frame in error.stack)
    message = ''.join(error.format_exception_only()).strip()
    message = client_text(message, MAX_MESSAGE_LENGTH)
    yield '%s (at %s)' % (message, frames) if frames else message


def short_path(filename):
    """``filename`` relative to the longest ``sys.path`` entry holding it
    (``relstorage/adapters/connections.py``)."""
    best = ''
    for entry in sys.path:
        if entry and filename.startswith(entry.rstrip(os.sep) + os.sep) \
                and len(entry) > len(best):
            best = entry
    if not best:
        return filename
    return filename[len(best.rstrip(os.sep)) + 1:]


class Formatter(logging.Formatter):
    """``logging.Formatter`` that puts each record of ``ONE_LINE_LOGGERS``
    on one line: its message escaped (:func:`client_text`), its traceback
    as :func:`traceback_line` sums it up after `` | ``.  Other records
    are formatted as usual (zope.pipeline's own tracebacks of a 500 keep
    every line).  In an ini: ``[formatter_plain]``, ``class =
    zope.pipeline.http.logtext.Formatter``."""

    def format(self, record):
        if record.name.split('.', 1)[0] not in ONE_LINE_LOGGERS:
            return super().format(record)
        record.message = client_text(record.getMessage(), MAX_MESSAGE_LENGTH)
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        if record.exc_info:
            text += ' | ' + traceback_line(record.exc_info)
        if record.stack_info:
            text += ' | stack: ' + client_text(record.stack_info,
                                               MAX_MESSAGE_LENGTH)
        return text
