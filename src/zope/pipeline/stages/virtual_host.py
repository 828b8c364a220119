"""virtual_host: where the client really was (trusted proxies, ++vh++),
and which host names the site answers to.

Forwarded headers are believed only when the connection comes from an
address in ``virtual_host.trusted_proxies``, and of those only one family,
the one ``virtual_host.forwarded_headers`` names: ``x-forwarded`` (the
default: ``X-Forwarded-For``, ``-Host``, ``-Proto``, ``-Port``, and the
informative ``-Server`` and ``-By``) or ``forwarded`` (RFC 7239
``Forwarded``).  A proxy passes on the headers of the other family that
its client sent, so those are removed from the environ, with
``X-Real-IP``, which no family believes; from anyone else every forwarded
header is removed, so no later code can be fooled by them.  repoze.vhm's
``X-Vhm-Host`` / ``X-Vhm-Root`` are believed from trusted proxies under
either family (a proxy must set or clear them).  A ``++vh++`` segment in
the path is accepted from those proxies
only (``vh_from_anyone = true`` restores the classic publisher, which took
it from anyone), and one the server added itself (``SiteAtRoot`` names the
object in ``zope.pipeline.site_root``; this stage rewrites the path after
checking the client's).  The directives it checked go to
``zope.pipeline.vh_directives``: traversal applies those and no other, so
a ``++vh++`` that a ``:method`` form field or an XML-RPC method name adds
after the path is refused.  The host of the request, forwarded or not, and
the host of every ``++vh++`` directive must be in
``virtual_host.allowed_hosts`` (default: the loopback names).  A refused
request gets 400 with a page that says why; the client address, after
trusted proxies, goes to ``zope.pipeline.client_address``.  Dot segments
are resolved by ``zope.pipeline.http.paths`` (400 above the root).  The
zope.traversing ``vh`` namespace applies ``++vh++`` during traversal.
"""

import functools
import html
import logging
import re
from urllib.parse import urlsplit

from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine
from zope.schema import Bool
from zope.schema import Choice

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http import paths
from zope.pipeline.http.addresses import PARSED_ADDRESSES
from zope.pipeline.http.addresses import AddressList
from zope.pipeline.http.addresses import address_text
from zope.pipeline.http.addresses import node_address
from zope.pipeline.http.addresses import parse_address
from zope.pipeline.http.hosts import DEFAULT_PORTS
from zope.pipeline.http.hosts import HOST_RE
from zope.pipeline.http.hosts import LOOPBACK
from zope.pipeline.http.hosts import AllowedHosts
from zope.pipeline.http.hosts import split_host
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.wsgi import plain_response

logger = logging.getLogger('zope.pipeline.virtual_host')


class IVirtualHostSettings(Interface):

    trusted_proxies = ASCIILine(
        title='Addresses or networks (space separated) of proxies whose '
              'forwarded headers and ++vh++ paths are believed',
        default='', required=False)

    forwarded_headers = Choice(
        title="The one family of forwarded headers believed from trusted "
              "proxies: 'x-forwarded' (X-Forwarded-For, -Host, -Proto, "
              "-Port) or 'forwarded' (RFC 7239 Forwarded); the other is "
              "removed, with X-Real-IP",
        values=('x-forwarded', 'forwarded'), default='x-forwarded')

    allowed_hosts = ASCIILine(
        title='Host names the site answers to (space separated; '
              '*.example.com for the names below example.com, name:port '
              'for one port only, * for any host)',
        default=LOOPBACK)

    vh_from_anyone = Bool(
        title='Accept ++vh++ in the path from any client, as the classic '
              'publisher did (its host must still be allowed)',
        default=False, required=False)

    set_https = Bool(
        title="Set HTTPS=on when wsgi.url_scheme is https (zope.publisher "
              "builds URLs from it)", default=True, required=False)


FORWARDED_KEYS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_HOST',
                  'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_PORT',
                  'HTTP_X_FORWARDED_FOR', 'HTTP_X_FORWARDED_SERVER',
                  'HTTP_X_FORWARDED_BY', 'HTTP_X_REAL_IP', 'HTTP_X_VHM_HOST',
                  'HTTP_X_VHM_ROOT')
FORWARDED_SET = frozenset(FORWARDED_KEYS)
#: Headers that say a proxy forwarded the request for another client.
FORWARDED_FOR_KEYS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_FOR',
                      'HTTP_X_REAL_IP')
#: The families of forwarded headers (``virtual_host.forwarded_headers``):
#: the headers of each that are believed from a trusted proxy, or kept.
FAMILIES = {
    'x-forwarded': ('HTTP_X_FORWARDED_FOR', 'HTTP_X_FORWARDED_HOST',
                    'HTTP_X_FORWARDED_PROTO', 'HTTP_X_FORWARDED_PORT',
                    'HTTP_X_FORWARDED_SERVER', 'HTTP_X_FORWARDED_BY'),
    'forwarded': ('HTTP_FORWARDED',),
}
#: The headers of repoze.vhm, believed from a trusted proxy whatever the
#: family.
VHM_KEYS = ('HTTP_X_VHM_HOST', 'HTTP_X_VHM_ROOT')


def not_believed(family):
    """The forwarded headers a trusted proxy's request loses when
    ``family`` is believed: the other family's, and X-Real-IP."""
    if family not in FAMILIES:
        raise ConfigurationError(
            'virtual_host.forwarded_headers: %r is not a family of '
            'forwarded headers; expected one of: %s.'
            % (family, ', '.join(FAMILIES)))
    return tuple(key for key in FORWARDED_KEYS
                 if key not in FAMILIES[family] and key not in VHM_KEYS)

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


class Refused(ValueError):
    """A request this stage answers with 400; the text says why."""


def last_value(header):
    """The value the nearest proxy appended (the last of a list)."""
    return header.split(',')[-1].strip()


def unquote(value):
    if len(value) > 1 and value[0] == value[-1] == '"':
        return QUOTED_PAIR_RE.sub(r'\1', value[1:-1])
    return value


def parse_forwarded(header):
    """Return the parameters of each element of a Forwarded header, the
    nearest proxy's last; quoted values may hold ',' and ';'."""
    elements = [{}]
    position = 0
    while position < len(header):
        match = FORWARDED_PAIR_RE.match(header, position)
        if match is None or match.end() == position:
            raise Refused('Bad Forwarded header.')
        key, value, separator = match.groups()
        elements[-1][key.lower()] = unquote(value)
        if separator == ',':
            elements.append({})
        position = match.end()
    return elements


def check_port(port):
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise Refused('Bad forwarded port %r.' % port[:20])
    return port


# -- the client address

def forwarded_for(environ):
    """The client addresses a trusted proxy forwarded, the first client
    first (the headers of the family not believed are removed by then)."""
    if environ.get('HTTP_FORWARDED'):
        return [element['for'] for element in
                parse_forwarded(environ['HTTP_FORWARDED'])
                if 'for' in element]
    if environ.get('HTTP_X_FORWARDED_FOR'):
        return environ['HTTP_X_FORWARDED_FOR'].split(',')
    return []


def client_address(environ, trusted, proxies):
    """The client's address as text, after trusted proxies; '' when it
    cannot be known (an unknown or hidden node, or forwarded headers from
    a proxy that is not trusted)."""
    if not trusted:
        for key in FORWARDED_FOR_KEYS:
            if environ.get(key):
                return ''
        return remote_text(environ.get('REMOTE_ADDR', ''))
    remote = parse_address(environ.get('REMOTE_ADDR', ''))
    address = remote
    for node in reversed(forwarded_for(environ)):
        address = node_address(node)
        if address is None:
            return ''
        if address not in proxies:
            break
    return address_text(address)


@functools.lru_cache(maxsize=PARSED_ADDRESSES)
def remote_text(remote_addr):
    """REMOTE_ADDR as the client address text ('' if it is no address),
    remembered like ``parse_address``."""
    remote = parse_address(remote_addr)
    return '' if remote is None else address_text(remote)


# -- ++vh++ and the path

def vh_directives(names):
    """(index, directive) of each ``++vh++`` name in ``names``."""
    return [(index, name[len(paths.VH_PREFIX):])
            for index, name in enumerate(names)
            if name.startswith(paths.VH_PREFIX)]


def check_vh(names, index, directive, allowed_hosts):
    """Refuse a malformed ``++vh++`` directive or one on a host that is
    not allowed."""
    if directive:
        match = VH_RE.match(directive)
        if match is None or not 0 < int(match.group(3)) < 65536:
            raise Refused(
                'Bad virtual host directive %r: it must be '
                '++vh++scheme:host:port with scheme http or https, a host '
                'name and a port from 1 to 65535.'
                % html.escape('++vh++' + directive[:74], quote=False))
        scheme, host, port = match.groups()
        if not allowed_hosts.allows('%s:%s' % (host, port), scheme):
            raise Refused(
                'This site does not answer to the host name %r of the '
                '++vh++ directive: its administrator lists the names it '
                'answers to in virtual_host.allowed_hosts.' % host)
    if paths.VH_END not in names[index + 1:]:
        raise Refused("A '++vh++' segment must be followed by a '++' "
                      "segment.")


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
            raise Refused('Bad X-Vhm-Host header.')
        hostname, port = split_host(parts.netloc)
        port = check_port(port) if port else DEFAULT_PORTS[scheme]
        names.append('++vh++%s:%s:%s' % (scheme, hostname, port))
        names.extend(name for name in parts.path.split('/') if name)
    else:
        names.append('++vh++')
    names.append('++')
    return '/' + '/'.join(names) + path_info


def site_root_path(root, environ):
    """The path that publishes ``root`` at the root URL (and the mount
    point, SCRIPT_NAME): ``/folder/++vh++/site/++`` + PATH_INFO."""
    mount = ''.join(name + '/' for name in
                    environ.get('SCRIPT_NAME', '').split('/') if name)
    return '/%s/++vh++/%s++%s' % (root.strip('/'), mount,
                                  environ.get('PATH_INFO', ''))


class VirtualHostStage:
    """Believe forwarded headers and ++vh++ only from trusted proxies;
    answer allowed hosts only."""

    settings_schema = IVirtualHostSettings
    contract = Contract(
        reads_if_present=(keys.SITE_ROOT,),
        writes=(keys.CLIENT_ADDRESS, keys.VH_DIRECTIVES, 'PATH_INFO',
                'HTTP_HOST', 'SERVER_PORT', 'wsgi.url_scheme', 'HTTPS'))

    def __init__(self, next_app, trusted_proxies='', allowed_hosts=LOOPBACK,
                 vh_from_anyone=False, set_https=True,
                 forwarded_headers='x-forwarded', build=None):
        self.next_app = next_app
        self.proxies = AddressList(trusted_proxies,
                                   'virtual_host.trusted_proxies')
        self.forwarded_headers = forwarded_headers
        #: What a trusted proxy's request loses: the headers its client
        #: may have sent that the proxy passed on.
        self.not_believed = not_believed(forwarded_headers)
        self.has_proxies = bool(self.proxies)
        self.allowed_hosts = AllowedHosts(allowed_hosts,
                                          'virtual_host.allowed_hosts')
        self.vh_from_anyone = vh_from_anyone
        self.set_https = set_https

    def __call__(self, environ, start_response):
        try:
            self.check(environ)
        except (Refused, paths.ClimbsAboveRoot) as error:
            logger.info('400 for %s %s: %s', client_text(
                environ.get('HTTP_HOST')), client_text(
                environ.get('PATH_INFO')), client_text(str(error)))
            return plain_response(start_response, '400 Bad Request',
                                  str(error))
        if self.set_https and environ.get('wsgi.url_scheme') == 'https':
            environ['HTTPS'] = 'on'
        return self.next_app(environ, start_response)

    def check(self, environ):
        """Apply or remove forwarded headers; refuse what is not allowed;
        map the server's site root."""
        trusted = self.has_proxies and \
            environ.get('REMOTE_ADDR', '') in self.proxies
        if trusted:
            for key in self.not_believed:
                environ.pop(key, None)
            environ[keys.CLIENT_ADDRESS] = client_address(environ, True,
                                                          self.proxies)
            apply_forwarded(environ)
        elif environ.keys().isdisjoint(FORWARDED_SET):
            # most requests: what client_address would find, at once
            environ[keys.CLIENT_ADDRESS] = remote_text(
                environ.get('REMOTE_ADDR', ''))
        else:
            environ[keys.CLIENT_ADDRESS] = client_address(environ, False,
                                                          self.proxies)
            for key in FORWARDED_KEYS:
                environ.pop(key, None)
        self.check_host(environ)
        directives = self.check_path(environ.get('PATH_INFO', ''), trusted)
        root = environ.get(keys.SITE_ROOT)
        if root:
            environ['PATH_INFO'] = site_root_path(root, environ)
            directives = ('',) + directives
        environ[keys.VH_DIRECTIVES] = directives

    def check_host(self, environ):
        host = environ.get('HTTP_HOST')
        if not host:
            environ.pop('HTTP_HOST', None)  # URLs from SERVER_NAME
            return
        if not HOST_RE.match(host):
            raise Refused('Bad Host header.')
        if not self.allowed_hosts.allows(
                host, environ.get('wsgi.url_scheme', 'http')):
            raise Refused(
                'This site does not answer to the host name %r: its '
                'administrator lists the names it answers to in '
                'virtual_host.allowed_hosts.' % split_host(host)[0])

    def check_path(self, path, trusted):
        """Refuse a client's ++vh++, a bad or disallowed ++vh++ directive
        and a path that climbs above the root; return the directives
        checked."""
        if paths.VH_PREFIX not in path:
            if paths.has_dot_segments(path):
                paths.resolve(path)
            return ()
        if not (trusted or self.vh_from_anyone):
            raise Refused(
                'A ++vh++ segment in the path is accepted only from the '
                'proxies in virtual_host.trusted_proxies (or from anyone '
                'with virtual_host.vh_from_anyone = true).')
        names = paths.resolve(path)
        directives = vh_directives(names)
        for index, directive in directives:
            check_vh(names, index, directive, self.allowed_hosts)
        return tuple(directive for _index, directive in directives)


def apply_forwarded(environ):
    """Apply the forwarded headers of a trusted proxy to the environ (the
    family believed: the other is removed by then)."""
    if 'HTTP_FORWARDED' in environ:
        params = parse_forwarded(environ['HTTP_FORWARDED'])[-1]
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
            raise Refused('Bad forwarded host %r.' % host[:80])
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
        raise Refused('Bad forwarded protocol %r.' % proto[:20])
    environ['wsgi.url_scheme'] = proto
    if proto == 'http':
        environ.pop('HTTPS', None)


def apply_port(environ, port):
    """The forwarded port replaces the port of the host."""
    environ['SERVER_PORT'] = port
    host = environ.get('HTTP_HOST') or environ.get('SERVER_NAME', '')
    environ['HTTP_HOST'] = '%s:%s' % (split_host(host)[0], port)
