"""response_cache: pages that did not change are not rendered again, and
are never served stale.

Off unless ``response_cache.enabled = true``.  Two stages: this one,
placed right after ``open_root`` and ``handle_error``, before ``csrf``
and ``transaction``, renders, records and keeps pages; and
``response_cache_hit`` (``ResponseCacheHitStage``), an outer stage
placed right after ``virtual_host`` and before ``retry``, answers hits
before the request is made and before any ZODB connection is opened.
It keeps one ``responsecache.SharedPoll`` per process: a storage
instance whose invalidation polls (RelStorage: the commits of every
process and host) drop the kept pages that read a changed object; a
request is answered from a kept page only after a poll that started
after it arrived has completed: concurrent requests share one, and so do
the requests that waited in mod_wsgi's queue, by when Apache received
them (``mod_wsgi.request_start``; ``response_cache.server_arrival``).  A
third, outer stage, ``response_cache_poll`` (``ResponseCachePollStage``), right
after ``metrics``, sends that poll ahead as a request for a page whose
key was known comes in (``SharedPoll.send``, where the storage says how:
RelStorage on MySQL, with the speedups), so that the database answers
while the outer stages run; ``response_cache_hit`` reads the answer
(``response_cache.poll_ahead``).  Then
nothing but the stored page is sent: nothing is committed, no site is
set, nobody is authenticated (a candidate carries no credentials).  The
outer stages before it (metrics, security_headers, virtual_host with
its allowed hosts and ``++vh++``) run for hits as for every request.

A key includes what the request provides (its skin and layers), which
the front door knows without the request only where the request type's
factory makes every request provide the same interfaces
(``factories.request_spec_inputs``: the standard factories, and a default
skin that does not depend on the request): it learns them from the first
request of the type the ``response_cache`` stage sees (``RequestKind``),
and uses them while what decided them is the same.  Otherwise the key is
made here, from the request, and hits are answered here, through the
same shared poll.  A miss renders through the whole chain, which
``response_cache_hit`` hands the key and the poll's mark
(``environ.RESPONSE_CACHE_FRONT``): what transaction, site_events,
authenticate, traversal and the view read is recorded, and the page is
kept through ``SharedPoll.store``.

For storages that do not poll themselves (FileStorage, MappingStorage,
ZEO) and databases chosen per request, ``response_cache_hit`` stands
aside and this stage validates on its own: the request's
connection, a transaction begun on it (``begin``, as the transaction
stage does), the serials of the objects the page read compared.

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
stores the page with those objects' serials; later requests are answered
from it with ``Age`` (hits) while no poll reported an object it read;
when one changed it is dropped, and the next request records it again
(an invalidation).

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

import logging
import threading
import time

from zope.authentication.interfaces import IUnauthenticatedPrincipal
from zope.interface import Interface
from zope.interface import providedBy
from zope.schema import Bool
from zope.schema import Int
from zope.schema import TextLine

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.factories import request_spec_inputs
from zope.pipeline.engine.factories import same_inputs
from zope.pipeline.engine.settings import convert
from zope.pipeline.http.wsgi import DeferredStart
from zope.pipeline.http.wsgi import close_iterable
from zope.pipeline.http.wsgi import listed_chunks
from zope.pipeline.zodb.responsecache import DATABASE_SOURCE
from zope.pipeline.zodb.responsecache import RECORDING
from zope.pipeline.zodb.responsecache import Entry
from zope.pipeline.zodb.responsecache import Learned
from zope.pipeline.zodb.responsecache import RecordingConnection
from zope.pipeline.zodb.responsecache import ResponseCache
from zope.pipeline.zodb.responsecache import changed_since
from zope.pipeline.zodb.responsecache import environ_key
from zope.pipeline.zodb.responsecache import etag_matches
from zope.pipeline.zodb.responsecache import etag_of
from zope.pipeline.zodb.responsecache import policy_of
from zope.pipeline.zodb.responsecache import shared_poll_for


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
    server_arrival = Bool(
        title="Let a request share the poll of an earlier one that began "
              "after the server received it (mod_wsgi's request_start, "
              "the host's wall clock)",
        default=True, required=False)
    poll_ahead = Bool(
        title='Send the shared poll as a request for a page answered '
              'before comes in, so that the database answers while the '
              'outer stages run (RelStorage on MySQL)',
        default=True, required=False)


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
logger = logging.getLogger(__name__)


def cookie_names(header):
    """The names of the cookies of a ``Cookie`` header."""
    return {part.partition('=')[0].strip() for part in header.split(';')
            if part.strip()}


class Keys:
    """Which requests the cache may answer, and what their keys are made
    of, by the ``response_cache`` settings (both stages have one)."""

    def __init__(self, ignored_cookies='', vary=''):
        self.ignored_cookies = frozenset((ignored_cookies or '').split())
        self.vary = tuple(vary.split()) if vary else ()
        self.key_environ = KEY_ENVIRON + tuple(environ_key(name)
                                               for name in self.vary)

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

    def key_of(self, environ, request_type, shape):
        """The key of a request of ``request_type`` whose requests provide
        what ``shape`` says (``shape_of``)."""
        get = environ.get
        return (request_type, shape,
                tuple(get(name) for name in self.key_environ),
                get(keys.VH_DIRECTIVES), get(keys.SITE_ROOT))


def server_arrival(environ):
    """When the server received the request, in seconds since the epoch
    on the host's wall clock, or None: ``mod_wsgi.request_start`` (a
    float since mod_wsgi 6, a string of microseconds before), set by
    Apache after it read the request line; clients cannot set it."""
    value = environ.get('mod_wsgi.request_start')
    if value.__class__ is float:
        return value
    if isinstance(value, str):
        try:
            return int(value) / 1e6
        except ValueError:
            return None
    return None


def unknown_arrival(environ):
    """``server_arrival`` when ``response_cache.server_arrival`` is off."""
    return None


def shape_of(request):
    """What of the request a page may depend on besides its environ: its
    class and every interface it provides (its skin and layers)."""
    return (type(request).__qualname__, providedBy(request).__iro__)


def shared_cache(shared, max_bytes):
    """The ``ResponseCache`` the stages of one publisher share (made by
    the first stage built, with the ``max_bytes`` of the settings)."""
    cache = shared.get(SHARED_KEY)
    if cache is None:
        cache = shared[SHARED_KEY] = ResponseCache(max_bytes)
    return cache


class CacheStage:
    """What both stages do with the cache: count hits, misses,
    invalidations, stores and evictions (in the cache and in the
    request's metrics record), and find a page valid after a poll."""

    def valid_entry(self, environ, base, learned, poll, arrived, sent=None):
        """The kept page of ``base`` once a poll that began after
        ``arrived`` (``poll.arrival(received)``) has dropped the pages whose
        objects changed, or None (a miss, counted); ``sent``, a poll sent
        ahead for the request (``SentPoll``), is completed first."""
        cache = self.cache
        key = (base, varied(environ, learned.environ_keys))
        before = cache.get(key)
        if sent is not None:
            sent.complete()
        poll.sync(cache, arrived)
        entry = cache.get(key)
        if entry is None:
            if before is not None:      # the poll dropped it
                self.count(environ, 'invalidations')
            self.count(environ, 'misses')
        return entry

    def count(self, environ, name, amount=1):
        self.cache.count(name, amount)
        record = environ.get(keys.RECORD_KEY)
        if record is not None:
            cache = record.cache
            if cache is None:
                cache = record.cache = {}
            cache[name] = cache.get(name, 0) + amount


class ResponseCacheStage(CacheStage):
    """Render, record and keep the pages of cacheable views; answer the
    hits the front door could not (``Front.base`` None) or, for storages
    that do not poll, all of them."""

    settings_schema = IResponseCacheSettings

    def __init__(self, next_app, max_bytes=64 << 20,
                 max_entry_bytes=1 << 20, cache_control='no-cache',
                 ignored_cookies='', vary='', clock=time.monotonic,
                 build=None):
        self.next_app = next_app
        # one cache for the chains of every request type of a publisher
        shared = build.shared if build is not None else {}
        self.cache = shared_cache(shared, max_bytes)
        # open_root (built after this stage) makes its database record
        shared[RECORDING] = True
        self.max_entry_bytes = max_entry_bytes
        self.cache_control = cache_control or ''
        self.keys = Keys(ignored_cookies, vary)
        self.clock = clock

    def key_of(self, environ, request):
        return self.keys.key_of(environ, environ.get(keys.REQUEST_TYPE, ''),
                                shape_of(request))

    # -- the request

    def __call__(self, environ, start_response):
        if not self.keys.candidate(environ):
            return self.next_app(environ, start_response)
        connection = environ[keys.CONNECTION]
        if not isinstance(connection, RecordingConnection):
            # a database that does not record (another connection class)
            return self.next_app(environ, start_response)
        front = environ.get(keys.RESPONSE_CACHE_FRONT)
        if front is not None:
            return self.behind_front(environ, start_response, front)
        if self.cache.poll is not None:
            # pages are validated by the shared poll only: one kept here
            # without it could miss an invalidation
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
                return hit(self, environ, start_response, entry)
            self.cache.discard(key, entry)
            self.count(environ, 'invalidations')
        self.count(environ, 'misses')
        return self.render(environ, start_response, base, learned)

    def behind_front(self, environ, start_response, front):
        """A request the front door passed on, with its shared poll: its
        key made from the request; the front door taught the shape of its
        request type; answered here from a kept page when the front door
        could not make the key, else rendered, and kept through the
        poll."""
        base = self.key_of(environ, environ[keys.REQUEST_KEY])
        if front.base == base:
            return self.render(environ, start_response, base,
                               front.learned, front)
        if front.kind is not None:
            if front.base is None:
                front.kind.learn(front.inputs, base[1])
            else:
                front.kind.refuse(front.base[1], base[1])
        learned = self.cache.get(base)
        if learned is not None:
            entry = self.valid_entry(environ, base, learned, front.poll,
                                     front.arrived)
            if entry is not None:
                return hit(self, environ, start_response, entry)
            # the transaction stage (after this one) begins the rendering's
            # transaction after the poll just made
            front.mark = front.poll.mark()
        return self.render(environ, start_response, base, learned, front)

    def render(self, environ, start_response, base, learned, front=None):
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
                                  self.keys.vary + policy.vary)
        if len(body) <= self.max_entry_bytes:
            entry = Entry(held.status, headers, body, reads, etag,
                          environ.get(keys.VIEW_NAME), self.clock(),
                          key_size(key))
            if front is None:
                evicted = self.cache.put(key, entry)
            else:
                evicted = front.poll.store(self.cache, key, entry,
                                           front.mark)
            if evicted is not None:
                self.count(environ, 'stores')
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
            name.lower() for name in self.keys.vary + policy.vary}
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


def hit(stage, environ, start_response, entry):
    """Answer with the stored ``entry`` (``stage`` counts and dates)."""
    stage.count(environ, 'hits')
    environ[keys.VIEW_NAME] = entry.view
    inm = environ.get('HTTP_IF_NONE_MATCH')
    if inm and etag_matches(inm, entry.etag):
        return not_modified(start_response, entry.headers)
    age = max(0, int(stage.clock() - entry.stored))
    start_response(entry.status, entry.headers + [('Age', str(age))])
    if environ['REQUEST_METHOD'] == 'HEAD':
        return []
    return [entry.body]


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


def response_cache_stage(next_app, enabled=False, server_arrival=True,
                         poll_ahead=True, build=None, **settings):
    """The stage factory: ResponseCacheStage when enabled, else
    ``next_app`` (the stage costs nothing).  ``server_arrival`` and
    ``poll_ahead`` are the outer stages' (``front_settings``)."""
    if not enabled:
        return next_app
    return ResponseCacheStage(next_app, build=build, **settings)


response_cache_stage.settings_schema = IResponseCacheSettings
response_cache_stage.contract = Contract(
    reads=(keys.CONNECTION, keys.TRANSACTION_MANAGER, keys.REQUEST_KEY),
    reads_if_present=(keys.REQUEST_TYPE, keys.PUBLISHED, keys.VIEW_NAME,
                      keys.VH_DIRECTIVES, keys.SITE_ROOT, keys.RECORD_KEY,
                      keys.RESPONSE_CACHE_FRONT),
    writes=(keys.VIEW_NAME,),
    results=(keys.VIEW_NAME,))


class Front:
    """What ``response_cache_hit`` hands the ``response_cache`` stage for
    a request it did not answer: the key it made (None when it could not
    make one without the request), the learned key (or None), the shared
    poll, when the request arrived (``arrived``: ``SharedPoll.arrival``)
    and the poll's ``mark()`` taken before the request's transaction
    began; what it knows of the request type (``kind``, a
    ``RequestKind``, or None) and the ``request_spec_inputs`` of its
    factory now (``inputs``)."""

    __slots__ = ('base', 'learned', 'poll', 'arrived', 'mark', 'kind',
                 'inputs')

    def __init__(self, base, learned, poll, arrived, mark, kind=None,
                 inputs=None):
        self.base = base
        self.learned = learned
        self.poll = poll
        self.arrived = arrived
        self.mark = mark
        self.kind = kind
        self.inputs = inputs


class RequestKind:
    """What the front door knows of the requests of one request type: the
    shape of its requests (``shape_of``), learned from a request the
    ``response_cache`` stage saw, and what decided it (``inputs``,
    ``factories.request_spec_inputs``).  The shape is used while the
    inputs are the same objects, so a request's key is made before the
    request is."""

    __slots__ = ('factory', 'inputs', 'shape', 'refused')

    def __init__(self, factory):
        self.factory = factory
        self.inputs = None
        self.shape = None
        #: The requests of this type did not all have the learned shape.
        self.refused = False

    def now(self):
        """(the factory's inputs now, the shape valid for them or None)."""
        inputs = request_spec_inputs(self.factory)
        if inputs is None or self.shape is None or \
                not same_inputs(inputs, self.inputs):
            return inputs, None
        return inputs, self.shape

    def learn(self, inputs, shape):
        """A request made while the factory's inputs were ``inputs`` had
        ``shape``."""
        if inputs is not None and not self.refused:
            self.inputs = inputs
            self.shape = shape

    def refuse(self, learned, shape):
        """A request of this type had ``shape``, not the ``learned`` one
        its key was made with: never make a key without the request again
        (which ``request_spec_inputs`` should have made impossible)."""
        logger.warning(
            'response_cache: a request of %s had the interfaces %s, not '
            'the learned %s; its pages are answered after the request is '
            'made from now on', self.factory, shape[1], learned[1])
        self.refused = True
        self.shape = None


class ResponseCacheHitStage(CacheStage):
    """The front door of the response cache, an outer stage: it answers
    from a stored page before the request is made and before a ZODB
    connection is opened, once a poll shared by the process's requests
    (``SharedPoll``: RelStorage's invalidation polling on one storage
    instance of the process), started after the request arrived, has
    dropped every page that read an object changed since it was stored.

    A page's key needs what the request provides (its skin and layers):
    the front door makes it without the request only where the request
    type's factory gives every request the same interfaces
    (``RequestKind``), and hands everything else to the ``response_cache``
    stage behind (``Front``), with the shared poll."""

    def __init__(self, next_app, keys_, cache, choose, sources,
                 received=server_arrival):
        self.next_app = next_app
        self.keys = keys_
        self.cache = cache
        self.choose = choose        # the registry's choose_request_factory
        #: environ -> when the server received the request, or None.
        self.received = received
        #: Request type name -> open_root's database source, filled as the
        #: inner chains are built (those whose database is the process's).
        self.sources = sources
        self.kinds = {}
        self.lock = threading.Lock()
        #: The last database seen whose storage does not poll.
        self.plain = None

    def poll(self, source):
        """The shared poll of the process's database (made, and the pages
        kept before it dropped, when the database is new: the first
        request, or a forked process), or None when its storage does not
        poll."""
        db = source.get()
        cache = self.cache
        poll = cache.poll
        if poll is not None and poll.db is db:
            return poll
        if db is self.plain:
            return None
        with self.lock:
            poll = cache.poll
            if poll is None or poll.db is not db:
                poll = shared_poll_for(db)
                if poll is None:
                    self.plain = db
                    return None
                cache.invalidate(None)
                cache.poll = poll
        return poll

    def kind_of(self, registration):
        kind = self.kinds.get(registration.name)
        if kind is None:
            kind = self.kinds.setdefault(registration.name,
                                         RequestKind(registration.factory))
        return kind

    def __call__(self, environ, start_response):
        ahead = environ.get(keys.RESPONSE_CACHE_POLL)
        if not self.keys.candidate(environ):
            return self.passed(environ, start_response, ahead)
        registration = self.choose(environ)
        source = (self.sources.get(registration.name)
                  if registration is not None else None)
        if source is None:
            # no request type, or a database chosen per request
            return self.passed(environ, start_response, ahead)
        try:
            poll = self.poll(source)
        except Exception:
            # the database cannot be opened: the chain answers (retry's
            # 503 with Retry-After, and its one log line)
            logger.debug('response_cache: no shared poll', exc_info=True)
            return self.passed(environ, start_response, ahead)
        if poll is None:
            return self.passed(environ, start_response, ahead)
        sent = None
        if ahead is not None and ahead.poll is poll:
            arrived, sent = ahead.arrived, ahead.sent
        else:
            if ahead is not None:
                ahead.settle()
            arrived = poll.arrival(self.received(environ))
        kind = self.kind_of(registration)
        inputs, shape = kind.now()
        base = learned = None
        if shape is not None:
            base = self.keys.key_of(environ, registration.name, shape)
            learned = self.cache.get(base)
            if ahead is not None:
                self.cache.heat(ahead.request, learned is not None)
            if learned is not None:
                try:
                    entry = self.valid_entry(environ, base, learned, poll,
                                             arrived, sent)
                except Exception:
                    # nothing kept is answered without a poll; the chain
                    # renders, or answers the outage
                    logger.debug('response_cache: the shared poll failed',
                                 exc_info=True)
                    return self.passed(environ, start_response, ahead)
                if entry is not None:
                    return hit(self, environ, start_response, entry)
        if sent is not None:
            ahead.settle()
        environ[keys.RESPONSE_CACHE_FRONT] = Front(
            base, learned, poll, arrived, poll.mark(), kind, inputs)
        return self.next_app(environ, start_response)

    def passed(self, environ, start_response, ahead):
        """Pass the request on, the poll sent ahead for it completed."""
        if ahead is not None:
            ahead.settle()
        return self.next_app(environ, start_response)

    #: The clock of the ``Age`` of hits (the stored pages' clock).
    clock = staticmethod(time.monotonic)


def front_settings(build):
    """The ``response_cache`` settings of the outer stages' build, or None
    when the ``response_cache`` stage is off."""
    if build is None:
        return None
    settings = convert(response_cache_stage, 'response_cache',
                       build.settings.get('response_cache', {}))
    return settings if settings['enabled'] else None


def arrival_of(settings):
    """How the outer stages read when the server received a request."""
    return server_arrival if settings['server_arrival'] else unknown_arrival


def response_cache_hit_stage(next_app, build=None):
    """The stage factory: ResponseCacheHitStage when the
    ``response_cache`` stage is on (its settings say so), else
    ``next_app``."""
    settings = front_settings(build)
    if settings is None:
        return next_app
    return ResponseCacheHitStage(
        next_app, Keys(settings['ignored_cookies'], settings['vary']),
        shared_cache(build.shared, settings['max_bytes']),
        build.registry.choose_request_factory,
        build.shared.setdefault(DATABASE_SOURCE, {}), arrival_of(settings))


response_cache_hit_stage.contract = Contract(
    reads_if_present=(keys.VH_DIRECTIVES, keys.SITE_ROOT, keys.RECORD_KEY,
                      keys.RESPONSE_CACHE_POLL),
    writes=(keys.VIEW_NAME, keys.RESPONSE_CACHE_FRONT),
    results=(keys.VIEW_NAME,))


def raw_request(environ):
    """A request as it came in, before ``virtual_host``: its host, script
    name, path and query string."""
    get = environ.get
    return (get('HTTP_HOST'), get('SCRIPT_NAME'), get('PATH_INFO'),
            get('QUERY_STRING'))


class Ahead:
    """What ``response_cache_poll`` hands ``response_cache_hit``: the
    request as it came in (``raw_request``), the shared poll, when the
    request arrived (``SharedPoll.arrival``) and the poll sent ahead for
    it (a ``SentPoll``, or None)."""

    __slots__ = ('request', 'poll', 'arrived', 'sent')

    def __init__(self, request, poll, arrived, sent=None):
        self.request = request
        self.poll = poll
        self.arrived = arrived
        self.sent = sent

    def settle(self):
        """Complete the poll sent ahead, if any (a failed poll only means
        that no poll was made: the next request polls again)."""
        sent = self.sent
        if sent is not None:
            try:
                sent.complete()
            except Exception:
                logger.debug('response_cache: the poll sent ahead failed',
                             exc_info=True)


class ResponseCachePollStage:
    """An outer stage, ahead of the others: a candidate request for a
    page whose key the front door knew (``ResponseCache.hot``) sends the
    process's shared poll as it comes in (``SharedPoll.send``), so that
    the database answers while the outer stages run;
    ``response_cache_hit`` reads the answer before it looks for the
    page.  Whatever it does, the poll is completed before the request
    leaves this stage: it holds the poll's lock.  Where the storage's
    poll is not sent ahead (``SharedPoll.sender``), it passes every
    request on untouched."""

    def __init__(self, next_app, keys_, cache, received=server_arrival):
        self.next_app = next_app
        self.keys = keys_
        self.cache = cache
        #: environ -> when the server received the request, or None.
        self.received = received

    def __call__(self, environ, start_response):
        cache = self.cache
        poll = cache.poll
        if poll is None or poll.sender() is None or \
                not self.keys.candidate(environ):
            # no poll yet, or one that is not sent ahead (SQLite)
            return self.next_app(environ, start_response)
        request = raw_request(environ)
        arrived = poll.arrival(self.received(environ))
        sent = None
        if request in cache.hot:
            try:
                sent = poll.send(cache, arrived)
            except Exception:
                # response_cache_hit polls, and handles the outage
                logger.debug('response_cache: the poll could not be sent',
                             exc_info=True)
        ahead = environ[keys.RESPONSE_CACHE_POLL] = Ahead(
            request, poll, arrived, sent)
        try:
            return self.next_app(environ, start_response)
        finally:
            ahead.settle()


def response_cache_poll_stage(next_app, build=None):
    """The stage factory: ResponseCachePollStage when the
    ``response_cache`` stage is on and ``response_cache.poll_ahead``,
    else ``next_app``."""
    settings = front_settings(build)
    if settings is None or not settings['poll_ahead']:
        return next_app
    return ResponseCachePollStage(
        next_app, Keys(settings['ignored_cookies'], settings['vary']),
        shared_cache(build.shared, settings['max_bytes']),
        arrival_of(settings))


response_cache_poll_stage.contract = Contract(
    writes=(keys.RESPONSE_CACHE_POLL,))
