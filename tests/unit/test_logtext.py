"""client_text: what a client sent, quoted in one safe log line."""

from zope.pipeline.logtext import client_text


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
