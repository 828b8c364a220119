"""metrics_endpoint: the Prometheus text of the metrics, for allowed
clients only.

An outer stage after ``virtual_host``, so the client it decides on is the
one trusted proxies forwarded (``zope.pipeline.client_address``), never
the proxy itself.  A GET or HEAD of ``metrics_endpoint.path`` from an
address in ``metrics_endpoint.allow`` is answered here, and not counted by
the ``metrics`` stage (``zope.pipeline.unmetered``); with a token set
(``token``, or ``token_file`` to keep it out of the ini), it also needs
``Authorization: Bearer <token>`` (compared in constant time), else 401.
With ``require_token`` (a production ini sets it) and no token, the
endpoint is off, and says so in the log at startup: a loopback address is
no proof of who asks (every local user, a local reverse proxy forwarding
the internet).  Anyone else's request for that path goes on down the
pipeline like any other (usually a 404).
"""

import hmac
import logging
import os
import stat

from zope.component import queryUtility
from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool
from zope.schema import TextLine

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.addresses import AddressList
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.metrics import IMetricsRuntime

logger = logging.getLogger('zope.pipeline.metrics')

#: Who may read the endpoint when ``allow`` is not set: this machine.
LOOPBACK = '127.0.0.0/8 ::1'


class IMetricsEndpointSettings(Interface):

    path = ASCIILine(title='Path of the Prometheus endpoint',
                     default='/_metrics')
    allow = ASCIILine(title='Client addresses or networks (space '
                            'separated) the endpoint answers, after '
                            'virtual_host.trusted_proxies',
                      default=LOOPBACK)
    token = ASCIILine(title="Bearer token the endpoint requires; '' for "
                            'none', default='', required=False)
    token_file = TextLine(title='File holding the bearer token (instead '
                                'of token)', default='', required=False)
    require_token = Bool(title='Serve the endpoint only with a token (no '
                               'token set: the endpoint is off)',
                         default=False)


def read_token(token, token_file):
    """The token of the settings; fail naming the ini key."""
    if token and token_file:
        raise ConfigurationError(
            'metrics_endpoint.token and metrics_endpoint.token_file are '
            'both set: keep one of them.')
    if not token_file:
        return token
    try:
        with open(token_file, encoding='ascii') as source:
            token = source.read().strip()
            mode = os.fstat(source.fileno()).st_mode
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            'metrics_endpoint.token_file: cannot read the token from %s '
            '(%s).' % (token_file, exc)) from None
    if not token:
        raise ConfigurationError('metrics_endpoint.token_file: %s is empty.'
                                 % token_file)
    if mode & stat.S_IROTH:
        logger.warning('metrics_endpoint.token_file: %s is readable by '
                       'every user of this machine; chmod o-r it.',
                       token_file)
    return token


def check_path(path):
    if not path.startswith('/'):
        raise ConfigurationError(
            "metrics_endpoint.path must start with '/': %r" % path)
    return path


class MetricsEndpointStage:
    """Answer the Prometheus endpoint for allowed clients."""

    settings_schema = IMetricsEndpointSettings
    contract = Contract(reads=(keys.CLIENT_ADDRESS,), writes=(keys.UNMETERED,))

    def __init__(self, next_app, path='/_metrics', allow=LOOPBACK, token='',
                 token_file='', require_token=False, build=None):
        self.next_app = next_app
        self.path = check_path(path)
        self.allow = AddressList(allow, 'metrics_endpoint.allow')
        token = read_token(token, token_file)
        #: The file the token was read from ('' for none): a secret file
        #: the server's processes read (``ownership.secret_files``).
        self.token_file = token_file
        self.authorization = ('Bearer ' + token).encode('ascii') \
            if token else None
        self.off = require_token and not token
        if self.off:
            # every command and process builds the stage: `serve` warns
            # once (``unserved_message``)
            logger.debug(self.unserved_message())

    def unserved_message(self):
        """What is said when the endpoint is off for want of a token."""
        return ('metrics_endpoint.require_token is true and no token is '
                'set: %s is not served.  Set metrics_endpoint.token_file '
                '(a file readable by the server only) to serve it.'
                % self.path)

    def __call__(self, environ, start_response):
        if self.off or environ.get('PATH_INFO') != self.path or \
                environ.get('REQUEST_METHOD') not in ('GET', 'HEAD') or \
                environ.get(keys.CLIENT_ADDRESS, '') not in self.allow:
            return self.next_app(environ, start_response)
        runtime = queryUtility(IMetricsRuntime)
        if runtime is None:
            return self.next_app(environ, start_response)
        environ[keys.UNMETERED] = True
        if not self.authorized(environ):
            return plain_response(
                start_response, '401 Unauthorized',
                'The metrics need the bearer token of '
                'metrics_endpoint.token.',
                [('WWW-Authenticate', 'Bearer realm="metrics"')])
        return expose(runtime, environ, start_response)

    def authorized(self, environ):
        if self.authorization is None:
            return True
        given = environ.get('HTTP_AUTHORIZATION', '').strip()
        return hmac.compare_digest(given.encode('latin-1', 'replace'),
                                   self.authorization)


def expose(runtime, environ, start_response):
    # late: prometheus_client, for the scrapes only (about 15 ms of each
    # worker's start; the endpoint is off without a token)
    from zope.pipeline.metrics import prometheus
    body = prometheus.render(runtime.group_snapshot()).encode('utf-8')
    start_response('200 OK', [
        ('Content-Type', prometheus.CONTENT_TYPE),
        ('Content-Length', str(len(body))),
        ('Cache-Control', 'no-store')])
    return [] if environ['REQUEST_METHOD'] == 'HEAD' else [body]
