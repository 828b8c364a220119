"""security_headers: the headers that keep browsers from framing or
sniffing this site's pages, on every response.

A page shown in a frame of another site can be clicked blind
(clickjacking): the form it sends carries this site's own ``Origin``, so
the csrf stage cannot tell.  Outermost but for metrics, this stage adds to
every response, the error pages and the short answers of the other stages
included: ``X-Frame-Options`` (``security_headers.frame_options``, default
``SAMEORIGIN``), ``Content-Security-Policy: frame-ancestors ...``
(``security_headers.frame_ancestors``, default ``'self'``) and
``X-Content-Type-Options: nosniff`` (``security_headers.nosniff``, default
on: no browser guesses another type for text a client put in a URL).  An
empty value (``false`` for nosniff) sends none.  A header the response
already has is kept as it is: a view may allow framing by setting its
own ``X-Frame-Options``, or its own policy with ``frame-ancestors``; a
policy of its own without ``frame-ancestors`` is kept and this one is
sent beside it (browsers enforce both).  Only ``start_response`` is
wrapped: the body, ``write()`` and ``close()`` are the application's own.
"""

import re

from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool

from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import NOSNIFF

FRAME_OPTIONS = 'X-Frame-Options'
CONTENT_SECURITY_POLICY = 'Content-Security-Policy'
#: What ``security_headers.frame_options`` accepts (RFC 7034; ALLOW-FROM
#: is obsolete: use frame_ancestors).
FRAME_OPTIONS_VALUES = ('DENY', 'SAMEORIGIN')
#: A CSP source list: no directive separator, no second policy, no
#: control character.
SOURCE_LIST_RE = re.compile(r'^[\x21-\x2b\x2d-\x3a\x3c-\x7e ]*$')


class ISecurityHeadersSettings(Interface):

    frame_options = ASCIILine(
        title='X-Frame-Options of every response: SAMEORIGIN, DENY, or '
              'empty for none', default='SAMEORIGIN', required=False)
    frame_ancestors = ASCIILine(
        title="Content-Security-Policy frame-ancestors of every response "
              "(a CSP source list, e.g. 'self' https://partner.example; "
              "'none' forbids every frame; empty for none)",
        default="'self'", required=False)
    nosniff = Bool(
        title='X-Content-Type-Options: nosniff on every response',
        default=True, required=False)


def frame_options_header(value):
    """The X-Frame-Options header for the setting, or None."""
    value = (value or '').strip().upper()
    if not value:
        return None
    if value not in FRAME_OPTIONS_VALUES:
        raise ConfigurationError(
            'security_headers.frame_options: %r is not one of %s, or empty '
            'for none.' % (value, ', '.join(FRAME_OPTIONS_VALUES)))
    return (FRAME_OPTIONS, value)


def frame_ancestors_header(value):
    """The Content-Security-Policy header for the setting, or None."""
    value = ' '.join((value or '').split())
    if not value:
        return None
    if not SOURCE_LIST_RE.match(value):
        raise ConfigurationError(
            "security_headers.frame_ancestors: %r is not a CSP source list "
            "(sources separated by spaces, e.g. 'self' "
            "https://partner.example; no ';' or ',')." % value)
    return (CONTENT_SECURITY_POLICY, 'frame-ancestors ' + value)


def missing_headers(headers, wanted):
    """The headers of ``wanted`` the response's ``headers`` lack: an
    ``X-Frame-Options`` or ``X-Content-Type-Options`` of its own is kept, a
    policy of its own counts only if it has ``frame-ancestors``."""
    present = set()
    for name, value in headers:
        name = name.lower()
        if name != CONTENT_SECURITY_POLICY.lower():
            present.add(name)
        elif 'frame-ancestors' in value.lower():
            present.add(name)
    return [header for header in wanted if header[0].lower() not in present]


class SecurityHeadersStage:
    """Add the configured headers to every response that lacks them."""

    settings_schema = ISecurityHeadersSettings

    def __init__(self, next_app, headers):
        self.next_app = next_app
        self.headers = tuple(headers)
        #: Their names, lowercase: a response without any of them gets all.
        self.names = frozenset(name.lower() for name, _value in headers)

    def __call__(self, environ, start_response):
        wanted = self.headers
        names = self.names

        def start_with_headers(status, headers, exc_info=None):
            headers = list(headers)
            for name, _value in headers:
                if name.lower() in names:  # the response set one itself
                    headers += missing_headers(headers, wanted)
                    break
            else:
                headers += wanted
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.next_app(environ, start_with_headers)


def security_headers_stage(next_app, frame_options='SAMEORIGIN',
                           frame_ancestors="'self'", nosniff=True, build=None):
    """The stage factory: SecurityHeadersStage with the headers the
    settings ask for, or ``next_app`` itself when they ask for none."""
    headers = [header for header in (
        frame_options_header(frame_options),
        frame_ancestors_header(frame_ancestors),
        NOSNIFF if nosniff else None) if header is not None]
    if not headers:
        return next_app
    return SecurityHeadersStage(next_app, headers)


security_headers_stage.settings_schema = ISecurityHeadersSettings
security_headers_stage.contract = Contract()
