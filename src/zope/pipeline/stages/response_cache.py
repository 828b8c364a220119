"""response_cache: pages that did not change are not rendered again, and
are never served stale.

Off unless ``response_cache.enabled = true``.  Placed right after
``open_root`` and ``handle_error``, before ``csrf`` and ``transaction``,
so that a hit needs only what its validation needs: the request's
connection, a transaction begun on it (``begin``, as the transaction
stage does: the connection polls the storage, so it sees every commit
of every process and host), the serials of the objects the page read,
then nothing but the stored page (open_root aborts the transaction and
closes the connection: nothing is committed, no site is set, nobody is
authenticated; a candidate carries no credentials).  The outer stages
(security_headers, virtual_host with its allowed hosts and ``++vh++``,
retry, create_request) run for hits as for every request.  A miss
renders through the whole chain: what transaction, site_events,
authenticate, traversal and the view read is recorded.

When the stage is on, it says so in the build context's ``shared``
(``responsecache.RECORDING``), and open_root, built after it, makes its
database open ``RecordingConnection``s; without it connections are
ZODB's plain ``Connection``.

A request is a candidate when it is a GET or HEAD without credentials
(``Authorization``, ``CGI-Authorization``, ``REMOTE_USER``), without
cookies other than ``response_cache.ignored_cookies``, without a body,
conditional headers other than ``If-None-Match`` or ``Range``.  Its key
is what the page can depend on besides the database: the request type
and the interfaces (skin) the request provides, the scheme, host and
port, the script name and path (after ``virtual_host``: ``++vh++`` and
trusted forwarded headers applied), the query string, the checked
``++vh++`` directives, ``Accept-Language`` and ``Accept-Charset``, the
headers in ``response_cache.vary``, and the headers the view declares
(``responsecache.CachePolicy.vary``).

A key is learned lazily, so requests of pages that are not cacheable pay
only the key: its first request renders as usual and, when the published
view is cacheable and the answer can be kept, the key is remembered; the
next request ghostifies the connection's cache, records every object
whose state is loaded while it renders (``RecordingConnection``) and
stores the page with those objects' serials; later requests begin a
transaction and check, object by object, that each still has its serial
in that snapshot, and then send the stored page with ``Age`` (hits) or,
when one changed, drop it and record again (an invalidation).

Nothing is kept of an answer that is not a 200, sets a cookie, carries
its own ``ETag`` or a ``Vary`` beyond the key, is streamed or larger than
``response_cache.max_entry_bytes``, was made for a principal that is not
the unauthenticated one, or whose rendering changed anything, or began
a transaction besides the transaction stage's (it read two snapshots).
Stored pages get an ``ETag`` (a digest of the key and of the (oid,
serial) pairs read) and ``Cache-Control`` (the view's,
else ``response_cache.cache_control``); an ``If-None-Match`` naming the
current ETag gets ``304 Not Modified``.  Memory: at most
``response_cache.max_bytes`` per process (per chain), least recently used
entries dropped first.
"""

import time

from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.interface import Interface
from zope.interface import providedBy
from zope.schema import Bool
from zope.schema import Int
from zope.schema import TextLine

from zope.pipeline import environ as keys
from zope.pipeline.contract import Contract
from zope.pipeline.responsecache import RECORDING
from zope.pipeline.responsecache import Entry
from zope.pipeline.responsecache import Learned
from zope.pipeline.responsecache import RecordingConnection
from zope.pipeline.responsecache import ResponseCache
from zope.pipeline.responsecache import changed_since
from zope.pipeline.responsecache import environ_key
from zope.pipeline.responsecache import etag_matches
from zope.pipeline.responsecache import etag_of
from zope.pipeline.responsecache import policy_of
from zope.pipeline.wsgi import DeferredStart
from zope.pipeline.wsgi import close_iterable
from zope.pipeline.wsgi import listed_chunks


class IResponseCacheSettings(Interface):

    enabled = Bool(title='Keep the pages of cacheable views and serve them '
                         'while nothing they read changed',
                   default=False, required=False)
    max_bytes = Int(title='Bytes of pages kept per process (least recently '
                          'used dropped first)',
                    default=64 << 20, min=0)
    max_entry_bytes = Int(title='The largest page kept, in bytes',
                          default=1 << 20, min=0)
    cache_control = TextLine(
        title='Cache-Control of stored pages whose view sets none',
        default='no-cache', required=False)
    ignored_cookies = TextLine(
        title='Names of cookies (space separated) that do not change any '
              'page; a request with any other cookie is not cached',
        default='', required=False)
    vary = TextLine(
        title='Request headers (space separated) every page depends on, '
              'besides Accept-Language and Accept-Charset',
        default='', required=False)


#: What the server (or virtual_host) sets that a page's URL and answer
#: are made of, in every key.
KEY_ENVIRON = ('wsgi.url_scheme', 'HTTPS', 'HTTP_HOST', 'SERVER_NAME',
               'SERVER_PORT', 'SCRIPT_NAME', 'PATH_INFO', 'QUERY_STRING',
               'HTTP_ACCEPT_LANGUAGE', 'HTTP_ACCEPT_CHARSET')
#: Requests with any of these are rendered and not stored: credentials,
#: conditions the cache does not evaluate, ranges.
REFUSED_ENVIRON = ('HTTP_AUTHORIZATION', 'HTTP_CGI_AUTHORIZATION',
                   'REMOTE_USER', 'HTTP_IF_MODIFIED_SINCE',
                   'HTTP_IF_UNMODIFIED_SINCE', 'HTTP_IF_MATCH',
                   'HTTP_IF_RANGE', 'HTTP_RANGE')
#: Response headers that keep a page from being stored (checked
#: lowercase): it sets a cookie, or validates itself.
REFUSED_HEADERS = frozenset(('set-cookie', 'etag', 'last-modified'))
#: The headers kept for a 304 (RFC 9110 15.4.5).
NOT_MODIFIED_HEADERS = frozenset(('etag', 'cache-control', 'vary',
                                  'expires', 'content-location'))

#: The key of the cache in ``IBuildContext.shared``.
SHARED_KEY = 'zope.pipeline.response_cache'


def cookie_names(header):
    """The names of the cookies of a ``Cookie`` header."""
    return {part.partition('=')[0].strip() for part in header.split(';')
            if part.strip()}


class ResponseCacheStage:
    """Serve stored pages while what they read is unchanged."""

    settings_schema = IResponseCacheSettings

    def __init__(self, next_app, max_bytes=64 << 20,
                 max_entry_bytes=1 << 20, cache_control='no-cache',
                 ignored_cookies='', vary='', clock=time.monotonic,
                 build=None):
        self.next_app = next_app
        # one cache for the chains of every request type of a publisher
        shared = build.shared if build is not None else {}
        self.cache = shared.get(SHARED_KEY)
        if self.cache is None:
            self.cache = shared[SHARED_KEY] = ResponseCache(max_bytes)
        # open_root (built after this stage) makes its database record
        shared[RECORDING] = True
        self.max_entry_bytes = max_entry_bytes
        self.cache_control = cache_control or ''
        self.ignored_cookies = frozenset((ignored_cookies or '').split())
        self.vary = tuple(vary.split()) if vary else ()
        self.key_environ = KEY_ENVIRON + tuple(environ_key(name)
                                               for name in self.vary)
        self.clock = clock

    # -- which requests

    def candidate(self, environ):
        if environ.get('REQUEST_METHOD') not in ('GET', 'HEAD'):
            return False
        for name in REFUSED_ENVIRON:
            if environ.get(name):
                return False
        if environ.get('CONTENT_LENGTH', '0') not in ('', '0'):
            return False
        cookies = environ.get('HTTP_COOKIE')
        if cookies and not cookie_names(cookies) <= self.ignored_cookies:
            return False
        return True

    def key_of(self, environ, request):
        get = environ.get
        # every interface the request provides (its skin and layers)
        return (get(keys.REQUEST_TYPE, ''), type(request).__qualname__,
                providedBy(request).__iro__,
                tuple(get(name) for name in self.key_environ),
                get(keys.VH_DIRECTIVES), get(keys.SITE_ROOT))

    # -- the request

    def __call__(self, environ, start_response):
        if not self.candidate(environ):
            return self.next_app(environ, start_response)
        connection = environ[keys.CONNECTION]
        if not isinstance(connection, RecordingConnection):
            # a database that does not record (another connection class)
            return self.next_app(environ, start_response)
        base = self.key_of(environ, environ[keys.REQUEST_KEY])
        learned = self.cache.get(base)
        if learned is None:
            return self.render(environ, start_response, base, None)
        key = (base, varied(environ, learned.environ_keys))
        entry = self.cache.get(key)
        if entry is not None:
            # the snapshot a rendering would read: begin, as the
            # transaction stage does (the connection polls the storage);
            # open_root aborts it and closes the connection
            environ[keys.TRANSACTION_MANAGER].begin()
            if not changed_since(connection, entry.reads):
                return self.hit(environ, start_response, entry)
            self.cache.discard(key, entry)
            self.count(environ, 'invalidations')
        self.count(environ, 'misses')
        return self.render(environ, start_response, base, learned)

    def hit(self, environ, start_response, entry):
        self.count(environ, 'hits')
        environ[keys.VIEW_NAME] = entry.view
        inm = environ.get('HTTP_IF_NONE_MATCH')
        if inm and etag_matches(inm, entry.etag):
            return not_modified(start_response, entry.headers)
        age = max(0, int(self.clock() - entry.stored))
        start_response(entry.status,
                       entry.headers + [('Age', str(age))])
        if environ['REQUEST_METHOD'] == 'HEAD':
            return []
        return [entry.body]

    def render(self, environ, start_response, base, learned):
        """Render; record what is read when the key is known cacheable
        (``learned``); keep the page or learn the key when it qualifies."""
        connection = environ[keys.CONNECTION]
        recording = (learned is not None and
                     environ['REQUEST_METHOD'] == 'GET')
        connection.wrote = False
        connection.begun = 0
        if recording:
            connection.cacheMinimize()
            connection.reads = reads = {}
        held = DeferredStart()
        try:
            result = self.next_app(environ, held.__call__)
        finally:
            connection.reads = None
        policy = self.qualifies(environ, held, result, connection)
        if policy is None:
            if learned is not None:
                self.cache.discard(base, learned)
            return held.send(start_response, result)
        environ_keys = policy.environ_keys
        if learned is None or learned.environ_keys != environ_keys:
            self.cache.put(base, Learned(environ_keys, key_size(base) + 100))
        if not recording:
            return held.send(start_response, result)
        key = (base, varied(environ, environ_keys))
        body = b''.join(listed_chunks(result))
        etag = etag_of(key, reads)
        headers = with_validators(held.headers, etag,
                                  policy.cache_control or self.cache_control,
                                  self.vary + policy.vary)
        if len(body) <= self.max_entry_bytes:
            entry = Entry(held.status, headers, body, reads, etag,
                          environ.get(keys.VIEW_NAME), self.clock(),
                          key_size(key))
            self.count(environ, 'stores')
            evicted = self.cache.put(key, entry)
            if evicted:
                self.count(environ, 'evictions', evicted)
        inm = environ.get('HTTP_IF_NONE_MATCH')
        if inm and etag_matches(inm, etag):
            close_iterable(result)
            return not_modified(start_response, headers)
        start_response(held.status, headers)
        return result

    def qualifies(self, environ, held, result, connection):
        """The view's CachePolicy when this answer may be kept, else
        None."""
        if listed_chunks(result) is None or held.written or \
                not (held.status or '').startswith('200'):
            return None
        policy = policy_of(environ.get(keys.PUBLISHED))
        if policy is None:
            return None
        vary_ok = {'accept-language', 'accept-charset', 'cookie'} | {
            name.lower() for name in self.vary + policy.vary}
        for name, value in held.headers:
            lower = name.lower()
            if lower in REFUSED_HEADERS:
                return None
            if lower == 'vary' and not {
                    part.strip().lower() for part in value.split(',')
                    } <= vary_ok:
                return None
        request = environ[keys.REQUEST_KEY]
        if not IUnauthenticatedPrincipal.providedBy(
                getattr(request, 'principal', None)):
            return None
        # one transaction (the transaction stage's: one snapshot), nothing
        # written, one database
        if connection.wrote or connection.begun != 1 or \
                len(connection.connections) > 1:
            return None
        return policy

    def count(self, environ, name, amount=1):
        self.cache.count(name, amount)
        record = environ.get(keys.RECORD_KEY)
        if record is not None:
            cache = record.cache
            if cache is None:
                cache = record.cache = {}
            cache[name] = cache.get(name, 0) + amount


def varied(environ, environ_keys):
    return tuple(environ.get(name) for name in environ_keys)


def key_size(key):
    return len(repr(key))


def with_validators(headers, etag, cache_control, vary):
    """The page's headers with ETag, Cache-Control (unless the view set
    one) and Vary (the request headers of the key)."""
    headers = list(headers)
    names = {name.lower() for name, _value in headers}
    headers.append(('ETag', etag))
    if 'cache-control' not in names and cache_control:
        headers.append(('Cache-Control', cache_control))
    varies = ['Accept-Language', 'Accept-Charset', 'Cookie'] + list(vary)
    if 'vary' in names:
        headers = [(name, value) for name, value in headers
                   if name.lower() != 'vary']
    headers.append(('Vary', ', '.join(varies)))
    return headers


def not_modified(start_response, headers):
    start_response('304 Not Modified',
                   [(name, value) for name, value in headers
                    if name.lower() in NOT_MODIFIED_HEADERS])
    return []


def response_cache_stage(next_app, enabled=False, build=None, **settings):
    """The stage factory: ResponseCacheStage when enabled, else
    ``next_app`` (the stage costs nothing)."""
    if not enabled:
        return next_app
    return ResponseCacheStage(next_app, build=build, **settings)


response_cache_stage.settings_schema = IResponseCacheSettings
response_cache_stage.contract = Contract(
    reads=(keys.CONNECTION, keys.TRANSACTION_MANAGER, keys.REQUEST_KEY),
    reads_if_present=(keys.REQUEST_TYPE, keys.PUBLISHED, keys.VIEW_NAME,
                      keys.VH_DIRECTIVES, keys.SITE_ROOT, keys.RECORD_KEY),
    writes=(keys.VIEW_NAME,),
    results=(keys.VIEW_NAME,))
