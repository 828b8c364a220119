"""The host names a site answers to (``virtual_host.allowed_hosts``), and
whether a URL stays on the request's host.

A pattern is a host name or address (``www.example.com``,
``192.0.2.7``, ``[::1]``), ``*.example.com`` for every name below
``example.com`` (not ``example.com`` itself), or ``*`` for any host; it
matches any port unless it names one (``www.example.com:8443``).  Names
compare without case and without a trailing dot.
"""

import functools
import re
from urllib.parse import urlsplit

from zope.configuration.exceptions import ConfigurationError

#: A Host header: a name, IPv4 or [IPv6] address, and an optional port.
HOST_RE = re.compile(r'^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9][A-Za-z0-9_.-]{0,252})'
                     r'(:[0-9]{1,5})?$')
#: A pattern of ``allowed_hosts``.
PATTERN_RE = re.compile(r'^(\*|(\*\.)?[A-Za-z0-9_.-]+\.?|\[[0-9a-fA-F:.]+\])'
                        r'(:[0-9]{1,5})?$')
DEFAULT_PORTS = {'http': '80', 'https': '443'}
#: The loopback names: the default of ``virtual_host.allowed_hosts``.
LOOPBACK = 'localhost 127.0.0.1 [::1]'


def split_host(host):
    """Return (hostname, port or None) of a Host header value."""
    if host.startswith('['):
        hostname, _, rest = host.partition(']')
        return hostname + ']', rest[1:] or None
    hostname, _, port = host.partition(':')
    return hostname, port or None


def normal_name(hostname):
    return hostname.lower().rstrip('.')


class Pattern:
    """One pattern of ``allowed_hosts``."""

    def __init__(self, text):
        hostname, self.port = split_host(text)
        self.name = normal_name(hostname)

    def matches(self, name, port):
        if self.port is not None and self.port != port:
            return False
        if self.name == '*':
            return True
        if self.name.startswith('*.'):
            return name.endswith(self.name[1:])
        return name == self.name


def parse_pattern(text, setting):
    if PATTERN_RE.match(text) is None:
        raise ConfigurationError(
            '%s: %r is not a host pattern; write host names separated by '
            'spaces, e.g. "www.example.com *.example.org 192.0.2.7 [::1] '
            'localhost:8080", or "*" for any host.' % (setting, text))
    return Pattern(text)


#: Distinct (Host header, scheme) pairs whose answer ``AllowedHosts``
#: remembers (the least recently asked forgotten first).
ANSWERS_KEPT = 256


class AllowedHosts:
    """The host names of one setting: ``allows(host, scheme)``."""

    def __init__(self, text, setting):
        self.setting = setting
        self.patterns = tuple(parse_pattern(item, setting)
                              for item in text.split())
        if not self.patterns:
            raise ConfigurationError(
                '%s is empty: list the host names the site answers to '
                '(e.g. "www.example.com"), or "*" for any host.' % setting)
        self.anything = any(pattern.name == '*' and pattern.port is None
                            for pattern in self.patterns)
        #: ``_allows`` of this setting's patterns, which never change,
        #: remembered per (host, scheme): the Host header is the client's,
        #: so at most ``ANSWERS_KEPT`` answers are kept.
        self._remembered = functools.lru_cache(maxsize=ANSWERS_KEPT)(
            self._allows)

    def allows(self, host, scheme='http'):
        """Whether ``host`` (``name[:port]``, as in a Host header) is
        allowed; without a port, the default port of ``scheme``."""
        if self.anything:
            return True
        return self._remembered(host, scheme)

    def _allows(self, host, scheme):
        hostname, port = split_host(host)
        name = normal_name(hostname)
        port = port or DEFAULT_PORTS.get(scheme, '80')
        return any(pattern.matches(name, port) for pattern in self.patterns)


def on_host(url, request):
    """Whether ``url`` is relative or on the host of the request's
    application URL (what a redirect must never leave)."""
    netloc = urlsplit(url).netloc
    return not netloc or netloc.lower() == urlsplit(
        request.getApplicationURL()).netloc.lower()
