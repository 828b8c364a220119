"""debug_headers: say which process served a response (development only).

With ``debug_headers.enabled = true`` every response carries
``X-Pipeline-Pid`` (the id of the process that served it: with several
mod_wsgi daemon processes the responses show them all),
``X-Pipeline-Attempt`` (the attempt of the retry stage that succeeded, when
retry ran) and, under mod_wsgi, ``X-Pipeline-Process-Group`` (the daemon
process group that served it).  Disabled, the factory returns the next
application itself, so the stage costs nothing.
"""

import os

from zope.interface import Interface
from zope.schema import Bool

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract

PID_HEADER = 'X-Pipeline-Pid'
ATTEMPT_HEADER = 'X-Pipeline-Attempt'
GROUP_HEADER = 'X-Pipeline-Process-Group'


class IDebugHeadersSettings(Interface):

    enabled = Bool(title='Add X-Pipeline-Pid, -Attempt and -Process-Group to '
                         'every response (never in production)',
                   default=False, required=False)


class DebugHeaders:
    """Add the serving process id (and the attempt) to every response."""

    settings_schema = IDebugHeadersSettings

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        def start_with_headers(status, headers, exc_info=None):
            headers = list(headers) + debug_headers(environ)
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.next_app(environ, start_with_headers)


def debug_headers(environ):
    headers = [(PID_HEADER, str(os.getpid()))]
    attempt = environ.get(keys.ATTEMPT)
    if attempt is not None:
        headers.append((ATTEMPT_HEADER, str(attempt)))
    group = environ.get('mod_wsgi.process_group')
    if group:
        headers.append((GROUP_HEADER, group))
    return headers


def debug_headers_stage(next_app, enabled=False, build=None):
    """The stage factory: DebugHeaders when enabled, else ``next_app``."""
    if not enabled:
        return next_app
    return DebugHeaders(next_app)


debug_headers_stage.settings_schema = IDebugHeadersSettings
debug_headers_stage.contract = Contract(reads_if_present=(keys.ATTEMPT,))
