"""A request's Cookie header parsed as zope.publisher parses it, in
linear time.

zope.publisher's ``HTTPRequest._parseCookies`` parses with the standard
library's ``http.cookies.SimpleCookie``, whose ``_unquote`` costs the
length of a quoted value times its backslashes before Python 3.11.10,
3.12.6 and 3.13 (CVE-2024-7592: 32 KB of backslashes, 1.3 s of CPU).
``LinearCookie`` decodes values with the fixed unquoting (the standard
library's own, same results) whatever the Python.
"""

import http.cookies
import logging
import re

#: zope.publisher's encoding of cookie names and values.
ENCODING = 'UTF-8'

#: A backslash escape of a quoted cookie value: an octal character code,
#: or any character as itself.
ESCAPE_RE = re.compile(r'\\(?:([0-3][0-7][0-7])|(.))')

eventlog = logging.getLogger('eventlog')


def unescape(match):
    if match[1]:
        return chr(int(match[1], 8))
    return match[2]


def unquote(text):
    """``http.cookies._unquote`` as Python 3.11.10 has it: one pass."""
    if text is None or len(text) < 2:
        return text
    if text[0] != '"' or text[-1] != '"':
        return text
    return ESCAPE_RE.sub(unescape, text[1:-1])


class LinearCookie(http.cookies.SimpleCookie):
    """``SimpleCookie``, its values unquoted in one pass."""

    def value_decode(self, val):
        return unquote(val), val


def parse_cookies(text, result=None):
    """zope.publisher's ``HTTPRequest._parseCookies``: the cookies of a
    Cookie header, names and values as UTF-8 text, none when the header
    cannot be parsed (logged as zope.publisher logs it)."""
    if result is None:
        result = {}
    try:
        cookie = LinearCookie(text)
    except http.cookies.CookieError as error:
        eventlog.warning(error)
        return result
    for name, morsel in cookie.items():
        # the header was decoded as latin-1 (PEP 3333): UTF-8 again
        result[name.encode('latin1').decode(ENCODING)] = \
            morsel.value.encode('latin1').decode(ENCODING)
    return result
