"""debugger: werkzeug's interactive debugger, in development only.

Added by ``debugger = true`` in a development ini (``development =
true``; zope.pipeline.app refuses to build a site with this stage
otherwise), through ``debugger.zcml``: an outer stage in front of
``virtual_host``.  It needs werkzeug (``pip install
zope.pipeline[debug]``).

For a local client (``REMOTE_ADDR`` on loopback and no forwarding
header: no proxy passed the request on), the request carries
``zope.pipeline.debugger``: the handle_error stage then logs a server
error (a 500) and lets it through instead of rendering its page, and
werkzeug's ``DebuggedApplication`` answers with its traceback page,
where each frame's console runs Python in that frame once the debugger's
PIN is entered (werkzeug's PIN stays on; it is logged when the stage is
built, and werkzeug's console at a URL of its own is off).  Every other
error (404, 401, ...) is the site's as usual.  A client that is not
local never reaches the debugger: its requests go to the rest of the
pipeline, and those for the debugger's own resources and commands
(``__debugger__`` in the query string) are refused with 403.
"""

import ipaddress
import logging

from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.http.wsgi import plain_response

logger = logging.getLogger('zope.pipeline.debugger')

#: Headers a proxy adds when it passes a request on: a request with one
#: of them is not a local client's, whatever its REMOTE_ADDR.
FORWARDING_HEADERS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_FOR',
                      'HTTP_X_FORWARDED_HOST', 'HTTP_X_FORWARDED_PROTO',
                      'HTTP_X_FORWARDED_SERVER', 'HTTP_X_REAL_IP',
                      'HTTP_VIA')


def is_local(environ):
    """Whether the request comes from this machine, directly."""
    try:
        address = ipaddress.ip_address(environ.get('REMOTE_ADDR', ''))
    except ValueError:
        return False
    return address.is_loopback and not any(
        name in environ for name in FORWARDING_HEADERS)


def asks_the_debugger(environ):
    """Whether the request is for the debugger's resources or commands."""
    return '__debugger__' in environ.get('QUERY_STRING', '')


class DebuggerStage:
    """werkzeug's DebuggedApplication for local clients only."""
    contract = Contract(writes=(keys.DEBUGGER, keys.DEBUGGER_BODIES))


    def __init__(self, next_app, build=None):
        try:
            # late: werkzeug is the optional debug extra
            from werkzeug.debug import DebuggedApplication
        except ImportError:
            raise ConfigurationError(
                'debugger = true needs werkzeug: pip install '
                '"zope.pipeline[debug]".') from None
        self.next_app = next_app
        self.debugged = DebuggedApplication(
            self.inner, evalex=True, console_path=None, pin_security=True)
        logger.warning('The interactive debugger is on for clients on this '
                       'machine (never in production); its PIN: %s',
                       self.debugged.pin)

    def __call__(self, environ, start_response):
        if not is_local(environ):
            if asks_the_debugger(environ):
                return plain_response(
                    start_response, '403 Forbidden',
                    'The debugger answers clients on this machine only.')
            return self.next_app(environ, start_response)
        environ[keys.DEBUGGER] = True
        inner = []
        environ[keys.DEBUGGER_BODIES] = inner
        body = self.debugged(environ, start_response)
        # werkzeug closes the site's body when it is iterated to its end
        # or fails; a server that stops early closes ours, which closes
        # the site's too (once: ClosingIterator).
        return ClosingIterator(body, lambda: close_all(inner))

    def inner(self, environ, start_response):
        body = ClosingIterator(self.next_app(environ, start_response))
        environ[keys.DEBUGGER_BODIES].append(body)
        return body


def close_all(bodies):
    for body in bodies:
        body.close()
