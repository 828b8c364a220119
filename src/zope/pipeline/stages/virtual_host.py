"""virtual_host: where the client really was (trusted proxies, ++vh++).

Forwarded headers (RFC 7239 ``Forwarded``, ``X-Forwarded-Host``,
``-Proto``, ``-Port``) are believed only when the connection comes from an
address listed in ``virtual_host.trusted_proxies``; from anyone else they are
removed from the environ, so no later code can be fooled by them.  ``++vh++``
segments are checked here and rejected with 400 when malformed; the
zope.traversing ``vh`` namespace applies them during traversal.
"""

import ipaddress
import re

from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool

from zope.pipeline.wsgi import plain_response


class IVirtualHostSettings(Interface):

    trusted_proxies = ASCIILine(
        title='Addresses or networks (space separated) of proxies whose '
              'forwarded headers are believed',
        default='', required=False)

    set_https = Bool(
        title="Set HTTPS=on when wsgi.url_scheme is https (zope.publisher "
              "builds URLs from it)", default=True, required=False)


environ_keys = {
    'wsgi.url_scheme': 'written from a trusted Forwarded/X-Forwarded-Proto',
    'HTTP_HOST': 'written from a trusted Forwarded/X-Forwarded-Host',
    'SERVER_PORT': 'written from a trusted X-Forwarded-Port',
    'HTTPS': "set to 'on' for https requests",
    'HTTP_FORWARDED, HTTP_X_FORWARDED_*': 'removed unless trusted',
}

FORWARDED_KEYS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_HOST',
                  'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_PORT',
                  'HTTP_X_FORWARDED_FOR', 'HTTP_X_FORWARDED_SERVER',
                  'HTTP_X_VHM_HOST', 'HTTP_X_VHM_ROOT')

HOST_RE = re.compile(r'^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,252}))'
                     r'(:[0-9]{1,5})?$')
VH_RE = re.compile(r'^(https?):([A-Za-z0-9.-]{1,253}|\[[0-9a-fA-F:.]+\]):'
                   r'([0-9]{1,5})$')


def parse_networks(text):
    return tuple(ipaddress.ip_network(item, strict=False)
                 for item in (text or '').split())


def last_value(header):
    """The value the nearest proxy appended (the last of a list)."""
    return header.split(',')[-1].strip()


def parse_forwarded(header):
    """Return the parameters of the last element of a Forwarded header."""
    params = {}
    for pair in last_value(header).split(';'):
        key, _, value = pair.partition('=')
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] == '"':
            value = value[1:-1]
        params[key.strip().lower()] = value
    return params


def check_vh(path):
    """Return an error text for a malformed ++vh++ path, else None."""
    segments = path.split('/')
    for index, segment in enumerate(segments):
        if not segment.startswith('++vh++'):
            continue
        match = VH_RE.match(segment[6:])
        if match is None or not 0 < int(match.group(3)) < 65536:
            return ('Bad virtual host directive %r: it must be '
                    '++vh++scheme:host:port with scheme http or https and a '
                    'port from 1 to 65535.' % segment)
        if '++' not in segments[index + 1:]:
            return "A '++vh++' segment must be followed by a '++' segment."
    return None


class VirtualHostStage:
    """Believe forwarded headers only from trusted proxies; check ++vh++."""

    settings_schema = IVirtualHostSettings
    environ_keys = environ_keys

    def __init__(self, next_app, trusted_proxies='', set_https=True):
        self.next_app = next_app
        self.networks = parse_networks(trusted_proxies)
        self.set_https = set_https

    def trusted(self, environ):
        if not self.networks:
            return False
        try:
            address = ipaddress.ip_address(environ.get('REMOTE_ADDR', ''))
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def __call__(self, environ, start_response):
        if self.trusted(environ):
            error = self.apply_forwarded(environ)
        else:
            for key in FORWARDED_KEYS:
                environ.pop(key, None)
            error = None
        if error is None and '++vh++' in environ.get('PATH_INFO', ''):
            error = check_vh(environ['PATH_INFO'])
        if error is not None:
            return plain_response(start_response, '400 Bad Request', error)
        if self.set_https and environ.get('wsgi.url_scheme') == 'https':
            environ['HTTPS'] = 'on'
        return self.next_app(environ, start_response)

    def apply_forwarded(self, environ):
        if 'HTTP_FORWARDED' in environ:
            params = parse_forwarded(environ['HTTP_FORWARDED'])
            host, proto = params.get('host'), params.get('proto')
            port = None
        else:
            host = environ.get('HTTP_X_FORWARDED_HOST')
            proto = environ.get('HTTP_X_FORWARDED_PROTO')
            port = environ.get('HTTP_X_FORWARDED_PORT')
            host = host and last_value(host)
            proto = proto and last_value(proto)
            port = port and last_value(port)
        if proto:
            if proto.lower() not in ('http', 'https'):
                return 'Bad forwarded protocol %r.' % proto
            environ['wsgi.url_scheme'] = proto.lower()
            if proto.lower() == 'http':
                environ.pop('HTTPS', None)
        if host:
            if not HOST_RE.match(host):
                return 'Bad forwarded host %r.' % host
            environ['HTTP_HOST'] = host
        if port:
            if not port.isdigit() or not 0 < int(port) < 65536:
                return 'Bad forwarded port %r.' % port
            environ['SERVER_PORT'] = port
            if host and ':' not in host.rsplit(']', 1)[-1]:
                environ['HTTP_HOST'] = '%s:%s' % (host, port)
        return None
