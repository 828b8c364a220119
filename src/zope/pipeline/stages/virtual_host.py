"""virtual_host: where the client really was (trusted proxies, ++vh++).

Forwarded headers (RFC 7239 ``Forwarded``, ``X-Forwarded-Host``,
``-Proto``, ``-Port``, and repoze.vhm's ``X-Vhm-Host`` / ``X-Vhm-Root``)
are believed only when the connection comes from an address listed in
``virtual_host.trusted_proxies``; from anyone else they are removed from the
environ, so no later code can be fooled by them.  ``X-Vhm-Host`` and
``X-Vhm-Root`` are applied by rewriting the path into the ``++vh++`` form.
A malformed Host header or ``++vh++`` segment is rejected here with 400;
the zope.traversing ``vh`` namespace applies ``++vh++`` during traversal.
An https ``wsgi.url_scheme`` sets ``HTTPS=on``, which zope.publisher builds
URLs from.
"""

import html
import ipaddress
import re
from urllib.parse import urlsplit

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
    'REMOTE_ADDR': 'read: is the connection from a trusted proxy?',
    'wsgi.url_scheme': 'written from a trusted Forwarded/X-Forwarded-Proto',
    'HTTP_HOST': 'checked (400 when malformed); written from a trusted '
                 'Forwarded/X-Forwarded-Host/-Port',
    'SERVER_PORT': 'written from a trusted X-Forwarded-Port',
    'PATH_INFO': 'read: ++vh++ checked; rewritten for a trusted X-Vhm-Host',
    'HTTPS': "set to 'on' for https requests",
    'HTTP_FORWARDED, HTTP_X_FORWARDED_*, HTTP_X_VHM_*':
        'removed unless trusted',
}

FORWARDED_KEYS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_HOST',
                  'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_PORT',
                  'HTTP_X_FORWARDED_FOR', 'HTTP_X_FORWARDED_SERVER',
                  'HTTP_X_VHM_HOST', 'HTTP_X_VHM_ROOT')

DEFAULT_PORTS = {'http': '80', 'https': '443'}

#: A Host header: a name, IPv4 or [IPv6] address, and an optional port.
HOST_RE = re.compile(r'^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9][A-Za-z0-9_.-]{0,252})'
                     r'(:[0-9]{1,5})?$')
#: ``++vh++scheme:host:port``; zope.traversing splits it on ':', so an IPv6
#: host cannot be written there.
VH_RE = re.compile(r'^(https?):([A-Za-z0-9][A-Za-z0-9.-]{0,252}):'
                   r'([0-9]{1,5})$')
#: One element of a Forwarded header: pairs separated by ';', elements by
#: ','; a value is a token or a quoted string (RFC 7239, section 4).
FORWARDED_PAIR_RE = re.compile(
    r'\s*([A-Za-z0-9!#$%&\'*+.^_`|~-]+)\s*=\s*'
    r'("(?:[^"\\]|\\.)*"|[^\s;,"]*)\s*(;|,|$)')
QUOTED_PAIR_RE = re.compile(r'\\(.)')


class BadForwarding(ValueError):
    """A trusted proxy sent a forwarded header that cannot be used (400)."""


def parse_networks(text):
    return tuple(ipaddress.ip_network(item, strict=False)
                 for item in (text or '').split())


def last_value(header):
    """The value the nearest proxy appended (the last of a list)."""
    return header.split(',')[-1].strip()


def unquote(value):
    if len(value) > 1 and value[0] == value[-1] == '"':
        return QUOTED_PAIR_RE.sub(r'\1', value[1:-1])
    return value


def parse_forwarded(header):
    """Return the parameters of the last element of a Forwarded header.

    The nearest proxy appends its element last; quoted values may hold
    ',' and ';'.
    """
    elements = [{}]
    position = 0
    while position < len(header):
        match = FORWARDED_PAIR_RE.match(header, position)
        if match is None or match.end() == position:
            raise BadForwarding('Bad Forwarded header.')
        key, value, separator = match.groups()
        elements[-1][key.lower()] = unquote(value)
        if separator == ',':
            elements.append({})
        position = match.end()
    return elements[-1]


def split_host(host):
    """Return (hostname, port or None) of a Host header value."""
    if host.startswith('['):
        hostname, _, rest = host.partition(']')
        return hostname + ']', rest[1:] or None
    hostname, _, port = host.partition(':')
    return hostname, port or None


def check_port(port):
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise BadForwarding('Bad forwarded port %r.' % port[:20])
    return port


def traversal_names(path):
    """The names zope.publisher will traverse for ``path``, in order.

    The same cleaning as zope.publisher's request (``_setupPath_helper``):
    empty names and '.' dropped, '..' removes the name before it and is
    kept itself.
    """
    names = []
    for name in path.split('/'):
        if not name or name == '.':
            continue
        if name == '..' and names:
            del names[-1]
        names.append(name)
    return names


def check_vh(path):
    """Return an error text for a malformed ++vh++ path, else None."""
    names = traversal_names(path)
    for index, name in enumerate(names):
        if not name.startswith('++vh++'):
            continue
        directive = name[6:]
        if directive:
            match = VH_RE.match(directive)
            if match is None or not 0 < int(match.group(3)) < 65536:
                return ('Bad virtual host directive %r: it must be '
                        '++vh++scheme:host:port with scheme http or https, a '
                        'host name and a port from 1 to 65535.'
                        % html.escape(name[:80], quote=False))
        if '++' not in names[index + 1:]:
            return "A '++vh++' segment must be followed by a '++' segment."
    return None


def vh_path(host_url, root, path_info):
    """Rewrite a path for repoze.vhm's X-Vhm-Host and X-Vhm-Root headers.

    ``X-Vhm-Host: https://example.com/site`` and ``X-Vhm-Root: /folder``
    give ``/folder/++vh++https:example.com:443/site/++`` + path_info.
    """
    names = [name for name in (root or '').split('/') if name]
    if host_url:
        parts = urlsplit(host_url)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not HOST_RE.match(parts.netloc):
            raise BadForwarding('Bad X-Vhm-Host header.')
        hostname, port = split_host(parts.netloc)
        port = check_port(port) if port else DEFAULT_PORTS[scheme]
        names.append('++vh++%s:%s:%s' % (scheme, hostname, port))
        names.extend(name for name in parts.path.split('/') if name)
    else:
        names.append('++vh++')
    names.append('++')
    return '/' + '/'.join(names) + path_info


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
        address = getattr(address, 'ipv4_mapped', None) or address
        return any(address in network for network in self.networks)

    def __call__(self, environ, start_response):
        error = None
        if self.trusted(environ):
            try:
                apply_forwarded(environ)
            except BadForwarding as exc:
                error = str(exc)
        else:
            for key in FORWARDED_KEYS:
                environ.pop(key, None)
        if error is None and environ.get('HTTP_HOST') and \
                not HOST_RE.match(environ['HTTP_HOST']):
            error = 'Bad Host header.'
        if error is None and '++vh++' in environ.get('PATH_INFO', ''):
            error = check_vh(environ['PATH_INFO'])
        if error is not None:
            return plain_response(start_response, '400 Bad Request', error)
        if self.set_https and environ.get('wsgi.url_scheme') == 'https':
            environ['HTTPS'] = 'on'
        return self.next_app(environ, start_response)


def apply_forwarded(environ):
    """Apply the forwarded headers of a trusted proxy to the environ."""
    if 'HTTP_FORWARDED' in environ:
        params = parse_forwarded(environ['HTTP_FORWARDED'])
        host, proto, port = params.get('host'), params.get('proto'), None
    else:
        host, proto, port = (
            last_value(environ[key]) if environ.get(key) else None
            for key in ('HTTP_X_FORWARDED_HOST', 'HTTP_X_FORWARDED_PROTO',
                        'HTTP_X_FORWARDED_PORT'))
    if proto:
        apply_proto(environ, proto)
    if host:
        if not HOST_RE.match(host):
            raise BadForwarding('Bad forwarded host %r.' % host[:80])
        environ['HTTP_HOST'] = host
    if port:
        apply_port(environ, check_port(port))
    host_url = environ.pop('HTTP_X_VHM_HOST', None)
    root = environ.pop('HTTP_X_VHM_ROOT', None)
    if host_url or root:
        environ['PATH_INFO'] = vh_path(host_url, root,
                                       environ.get('PATH_INFO', ''))


def apply_proto(environ, proto):
    proto = proto.lower()
    if proto not in DEFAULT_PORTS:
        raise BadForwarding('Bad forwarded protocol %r.' % proto[:20])
    environ['wsgi.url_scheme'] = proto
    if proto == 'http':
        environ.pop('HTTPS', None)


def apply_port(environ, port):
    """The forwarded port replaces the port of the host."""
    environ['SERVER_PORT'] = port
    host = environ.get('HTTP_HOST') or environ.get('SERVER_NAME', '')
    environ['HTTP_HOST'] = '%s:%s' % (split_host(host)[0], port)
