"""Client-controlled text made safe to put in a log line.

Every log line that quotes something a client sent (the path, the method,
a header, a login) passes it through :func:`client_text`, so a ``%0A`` in a
URL cannot forge a second log line and a terminal escape cannot reach the
administrator's terminal.
"""

#: Longest client text quoted in one log line; the rest is cut.
MAX_LENGTH = 1000


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
