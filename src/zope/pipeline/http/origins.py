"""Web origins, ``(scheme, host, port)``: of a URL or an ``Origin``
header, of the site a request addresses, and of a list of trusted ones
(what the csrf stage compares)."""

from urllib.parse import urlsplit

DEFAULT_PORTS = {'http': 80, 'https': 443}
#: The zope.traversing namespace that sets the server of a request.
VH_PREFIX = '++vh++'


def origin_of(url):
    """The origin of an absolute http(s) URL or of an ``Origin`` header
    value; None for anything else ('null', a relative URL, a list of
    origins, a bad port)."""
    if not url or url != ''.join(url.split()):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def serialize(origin):
    """``origin`` written as a browser writes it in an ``Origin`` header."""
    scheme, host, port = origin
    if ':' in host:
        host = '[%s]' % host
    if port == DEFAULT_PORTS[scheme]:
        return '%s://%s' % (scheme, host)
    return '%s://%s:%d' % (scheme, host, port)


def parse_origins(text):
    """The origins of a space separated list; ValueError naming the first
    item that is not ``scheme://host[:port]``."""
    origins = set()
    for item in (text or '').split():
        origin = origin_of(item)
        parts = urlsplit(item)
        if origin is None or parts.path not in ('', '/') or parts.query or \
                parts.fragment or parts.username is not None:
            raise ValueError(
                '%r is not an origin: write scheme://host[:port], e.g. '
                'https://www.example.com or http://localhost:8080' % item)
        origins.add(origin)
    return frozenset(origins)


def virtual_host_origin(path):
    """The origin the first ``++vh++scheme:host:port`` segment of ``path``
    gives the request (zope.traversing's ``vh`` namespace applies it
    during traversal; a proxy puts its own first), or None."""
    for segment in path.split('/'):
        if segment.startswith(VH_PREFIX) and segment != VH_PREFIX:
            try:
                scheme, host, port = segment[len(VH_PREFIX):].split(':')
            except ValueError:
                return None
            return origin_of('%s://%s:%s' % (scheme, host, port))
    return None


def request_origin(request, path):
    """The origin of the site ``request`` addresses, as its URLs will
    name it: its application URL (Host, HTTPS, a trusted proxy's
    forwarded headers) or the ``++vh++`` of ``path``."""
    return virtual_host_origin(path) or origin_of(
        request.getApplicationURL())
