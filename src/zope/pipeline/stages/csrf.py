"""csrf: refuse unsafe browser requests that another site made.

A browser sends a form to any site with the credentials it holds for that
site (cached Basic credentials, cookies), so a page on evil.example can
make it POST to this site's edit form; it also says who made the request,
in ``Origin`` (on every cross-origin POST) or ``Referer``.  An unsafe
request (any method but GET, HEAD, OPTIONS, TRACE) whose ``Origin``, or
without one its ``Referer``, is neither the origin of the site it
addresses (``origins.request_origin``: its application URL, or its
``++vh++``) nor one of ``csrf.trusted_origins`` gets 403 and a short
page, before its body is parsed, its principal found or its path
traversed.  ``Origin: null`` is another site.  A request with neither
header passes unless ``csrf.require_origin`` is on: browsers send one,
non-browser clients (curl, scripts, test suites) send none and hold no
victim's credentials.  Registered for browser requests only: XML-RPC and
plain HTTP methods need a CORS preflight that this site never grants.
"""

import logging

from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.origins import origin_of
from zope.pipeline.http.origins import parse_origins
from zope.pipeline.http.origins import request_origin
from zope.pipeline.http.origins import serialize
from zope.pipeline.http.wsgi import html_response

logger = logging.getLogger('zope.pipeline.csrf')

#: Methods that change nothing (RFC 9110): never checked.
SAFE_METHODS = frozenset(('GET', 'HEAD', 'OPTIONS', 'TRACE'))


class ICSRFSettings(Interface):

    enabled = Bool(
        title='Refuse unsafe browser requests made by another site',
        default=True, required=False)
    trusted_origins = ASCIILine(
        title='Other origins (scheme://host[:port], space separated) whose '
              'pages may send forms here', default='', required=False)
    require_origin = Bool(
        title='Refuse an unsafe browser request that has neither Origin '
              'nor Referer (non-browser clients send neither)',
        default=False, required=False)


PAGE = ('<!DOCTYPE html>\n<html><head><title>403 Forbidden</title></head>'
        '<body><h1>403 Forbidden</h1><p>%s</p></body></html>')
FROM_ANOTHER_SITE = (
    'This request came from another site, so it was not carried out. '
    'To send a form of this site, open it on this site and send it from '
    'there.')
FROM_NOWHERE = (
    'This request did not say which site it came from (no Origin or '
    'Referer header), so it was not carried out.')


def sender(environ):
    """``(header name, value)`` of who made the request, or None."""
    origin = environ.get('HTTP_ORIGIN')
    if origin:
        return 'Origin', origin
    referer = environ.get('HTTP_REFERER')
    if referer:
        return 'Referer', referer
    return None


def forbidden(start_response, message):
    return html_response(start_response, '403 Forbidden', PAGE % message)


class CSRFStage:
    """Pass safe and same-site requests on; answer the others 403."""

    settings_schema = ICSRFSettings

    def __init__(self, next_app, trusted_origins=frozenset(),
                 require_origin=False):
        self.next_app = next_app
        self.trusted_origins = trusted_origins
        self.require_origin = require_origin

    def __call__(self, environ, start_response):
        if environ.get('REQUEST_METHOD') in SAFE_METHODS:
            return self.next_app(environ, start_response)
        found = sender(environ)
        if found is None:
            if not self.require_origin:
                return self.next_app(environ, start_response)
            log_refusal(environ, 'it has no Origin or Referer header '
                        '(csrf.require_origin is on)')
            return forbidden(start_response, FROM_NOWHERE)
        header, value = found
        origin = origin_of(value)
        own = request_origin(environ[keys.REQUEST_KEY],
                             environ.get('PATH_INFO', ''))
        if origin is not None and (origin == own or
                                   origin in self.trusted_origins):
            return self.next_app(environ, start_response)
        log_refusal(environ, '%s %s is not this site (%s) nor one of '
                    'csrf.trusted_origins (behind a proxy, is it in '
                    'virtual_host.trusted_proxies?)'
                    % (header, client_text(value),
                       serialize(own) if own else '-'))
        return forbidden(start_response, FROM_ANOTHER_SITE)


def log_refusal(environ, reason):
    logger.warning('Refused %s %s made by another site: %s; answered 403',
                   client_text(environ.get('REQUEST_METHOD')),
                   client_text(environ.get('PATH_INFO')), reason)


def csrf_stage(next_app, enabled=True, trusted_origins='',
               require_origin=False, build=None):
    """The stage factory: CSRFStage when enabled, else ``next_app``."""
    try:
        trusted = parse_origins(trusted_origins)
    except ValueError as error:
        raise ConfigurationError('csrf.trusted_origins: %s' % error) \
            from None
    if not enabled:
        return next_app
    return CSRFStage(next_app, trusted, require_origin)


csrf_stage.settings_schema = ICSRFSettings
csrf_stage.contract = Contract(reads=(keys.REQUEST_KEY,))
