"""The response cache: a page kept with the ZODB objects it read, served
only while none of them changed (the ``response_cache`` stage uses it).

Exactness comes from three facts:

- what a cacheable view renders is a function of the request's inputs
  (those in the cache key, and those the view declares with ``vary``) and
  of the states of the ZODB objects the rendering loads;
- a ``RecordingConnection`` notes the object id and serial of every state
  it loads while a request records (its cache ghostified first, with the
  public ``cacheMinimize``, so every object used is loaded again);
- when a request's transaction begins, the connection has polled the
  storage (RelStorage invalidation polling: the commits of every process
  and host), so ``_p_serial`` of each recorded object, activated, is its
  serial in the snapshot the request would render with.  Equal serials
  for every object read mean the rendering would read the same states
  and give the same bytes.

A view declares itself cacheable with ``<pipeline:cacheable for="..."
name="..." />`` (``CacheableDirective``) or a class attribute
``response_cache = CachePolicy(...)``.
"""

import collections
import hashlib
import threading
import time

from ZODB.Connection import Connection
from ZODB.interfaces import IMVCCStorage
from zope.component import getGlobalSiteManager
from zope.configuration.fields import GlobalInterface
from zope.configuration.fields import Tokens
from zope.interface import Interface
from zope.interface import providedBy
from zope.schema import TextLine
from zope.security.proxy import removeSecurityProxy

# -- the connection that records what it loads


class RecordingConnection(Connection):
    """A ZODB connection that notes, while ``reads`` is a dict, the serial
    of every object whose state it loads, whether anything was changed or
    added through it (``wrote``) and how many transactions began on it
    (``begun``: a page that read two snapshots is not kept).  Outside a
    recording request it is a plain ``Connection`` (one attribute test per
    load)."""

    #: {oid: serial} of the states loaded while recording, else None.
    reads = None
    #: Whether an object was changed or added since the stage reset it.
    wrote = False
    #: Transactions begun (``newTransaction``) since the stage reset it.
    begun = 0

    def newTransaction(self, transaction, sync=True):
        self.begun += 1
        Connection.newTransaction(self, transaction, sync)

    def setstate(self, obj):
        Connection.setstate(self, obj)
        reads = self.reads
        if reads is not None:
            reads[obj._p_oid] = obj._p_serial

    def register(self, obj):
        self.wrote = True
        Connection.register(self, obj)

    def add(self, obj):
        self.wrote = True
        Connection.add(self, obj)


#: The key in ``IBuildContext.shared`` saying that a response cache stage
#: of the publisher is on: open_root, built after it, makes its database
#: record (``install``).  Without it, connections are ZODB's own.
RECORDING = 'zope.pipeline.zodb.responsecache.recording'
#: The key in ``IBuildContext.shared`` of open_root's database source (its
#: ``get()`` returns the process's ``ZODB.DB``), set when it records and
#: its database is not chosen per request: response_cache_hit, built after
#: open_root, polls that database.
DATABASE_SOURCE = 'zope.pipeline.zodb.responsecache.database'


def install(db):
    """Make ``db`` open ``RecordingConnection``s (``ZODB.DB.klass``, the
    class its ``open()`` makes connections of); return whether it does.

    The idle connections it made before (``ZODB.DB`` opens one for its
    root) are closed, by setting its pool size to 0 and back
    (``setPoolSize``), so the next requests get recording ones.  A
    database whose connection class is another subclass is left as it
    is: its pages are never stored.
    """
    klass = db.klass
    if issubclass(klass, RecordingConnection):
        return True
    if klass is not Connection:
        return False
    db.klass = RecordingConnection
    size = db.getPoolSize()
    db.setPoolSize(0)
    db.setPoolSize(size)
    return True


def changed_since(connection, reads):
    """Whether any object of ``reads`` ({oid: serial}) has another serial,
    or is gone, in the snapshot of ``connection``'s transaction."""
    get = connection.get
    for oid, serial in reads.items():
        try:
            ob = get(oid)
            if ob._p_changed is None:
                ob._p_activate()
        except KeyError:        # POSKeyError: the object is gone
            return True
        if ob._p_serial != serial:
            return True
    return False


# -- what a view declares


class CachePolicy:
    """How a cacheable view's pages are cached.

    ``vary``: request headers (as the HTTP names, ``Accept``) the view's
    output depends on besides those every key has; ``cache_control``: the
    ``Cache-Control`` header of its pages ('' for the site's default).
    Called as an adapter factory it returns itself (the ZCML directive
    registers it as one).
    """

    __slots__ = ('vary', 'environ_keys', 'cache_control')

    def __init__(self, vary=(), cache_control=''):
        self.vary = tuple(vary)
        self.environ_keys = tuple(sorted(environ_key(name)
                                         for name in self.vary))
        self.cache_control = cache_control or ''

    def __call__(self, context):
        return self

    def __repr__(self):
        return 'CachePolicy(vary=%r, cache_control=%r)' % (
            self.vary, self.cache_control)


def environ_key(header):
    """``'Accept-Language'`` -> ``'HTTP_ACCEPT_LANGUAGE'``."""
    return 'HTTP_' + header.strip().upper().replace('-', '_')


class ICachePolicy(Interface):
    """A ``CachePolicy`` registered for a view's context and name."""


class ICacheableDirective(Interface):
    """Declare the view ``name`` for ``for`` cacheable: its output is a
    function of the ZODB objects it reads and of the request's URL, skin,
    languages and charsets, plus the headers named in ``vary``."""

    for_ = GlobalInterface(title='The interface of the views\' context',
                           required=False)
    name = TextLine(title='The view name (e.g. index.html)')
    vary = Tokens(title='Request headers the page also depends on',
                  value_type=TextLine(), required=False)
    cache_control = TextLine(
        title="Cache-Control of its pages ('': response_cache."
              "cache_control)", required=False)


def cacheable(_context, name, for_=None, vary=(), cache_control=''):
    """The ``pipeline:cacheable`` directive."""
    policy = CachePolicy(vary, cache_control)
    _context.action(
        discriminator=('pipeline:cacheable', for_ or Interface, name),
        callable=register_policy,
        args=(policy, for_ or Interface, name))


def register_policy(policy, for_, name):
    getGlobalSiteManager().registerAdapter(policy, (for_,), ICachePolicy,
                                           name)


def policy_of(published):
    """The CachePolicy of the published object, or None: a view (an object
    with ``context`` and a ``__name__``, or its ``__call__``: the page,
    not another method) whose class says
    ``response_cache = CachePolicy(...)`` or that ``pipeline:cacheable``
    declared."""
    view = removeSecurityProxy(published)
    owner = getattr(view, '__self__', None)
    if owner is not None:       # the view's __call__, or its page method
        method = getattr(view, '__name__', None)
        if method != '__call__' and \
                getattr(owner, '__page_attribute__', None) != method:
            return None
        view = owner
    own = getattr(type(view), 'response_cache', None)
    if isinstance(own, CachePolicy):
        return own
    context = getattr(view, 'context', None)
    name = getattr(view, '__name__', None)
    if context is None or not isinstance(name, str):
        return None
    factory = getGlobalSiteManager().adapters.lookup(
        (providedBy(removeSecurityProxy(context)),), ICachePolicy, name)
    return factory


# -- entries


class Learned:
    """A key whose page was cacheable when last rendered: the next request
    of it records what it reads.  ``environ_keys`` are the headers its view
    varies on."""

    __slots__ = ('environ_keys', 'size')

    def __init__(self, environ_keys, size):
        self.environ_keys = environ_keys
        self.size = size


class Entry:
    """A stored page: status, headers (ETag and Cache-Control included),
    body, the {oid: serial} it read, the view's name (metrics), when it
    was stored (``time.monotonic``), its size in bytes (an estimate)."""

    __slots__ = ('status', 'headers', 'body', 'reads', 'etag', 'view',
                 'stored', 'size')

    def __init__(self, status, headers, body, reads, etag, view, stored,
                 key_size):
        self.status = status
        self.headers = headers
        self.body = body
        self.reads = reads
        self.etag = etag
        self.view = view
        self.stored = stored
        self.size = (ENTRY_OVERHEAD + key_size + len(body) +
                     sum(len(name) + len(value) for name, value in headers) +
                     READ_SIZE * len(reads))


#: Bytes counted per entry besides its key, body, headers and reads, and
#: per object read (an 8-byte oid and serial in a dict).
ENTRY_OVERHEAD = 400
READ_SIZE = 100


def etag_of(key, reads):
    """A strong ETag: a digest of the key (the request's inputs) and of
    every (oid, serial) the page read."""
    digest = hashlib.sha256()
    for part in key:
        digest.update(repr(part).encode('utf-8'))
        digest.update(b'\0')
    for oid in sorted(reads):
        digest.update(oid)
        digest.update(reads[oid])
    return '"zp-%s"' % digest.hexdigest()[:32]


def etag_matches(if_none_match, etag):
    """Whether an ``If-None-Match`` header matches ``etag`` (weak
    comparison, as RFC 9110 says for If-None-Match; ``*`` matches)."""
    for tag in if_none_match.split(','):
        tag = tag.strip()
        if tag == '*':
            return True
        if tag.startswith('W/'):
            tag = tag[2:]
        if tag == etag:
            return True
    return False


class ResponseCache:
    """Entries and learned keys of one process, least recently used first,
    bounded in bytes; safe under threads (one lock around each dict
    operation; nothing is rendered or validated under it).

    The counters (hits, misses, invalidations, stores, evictions) are this
    cache's lifetime totals; the metrics stage counts them per view too.
    """

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.size = 0
        self._entries = collections.OrderedDict()
        #: {oid: {key, ...}}: the stored pages that read each object.
        self._readers = {}
        self._lock = threading.Lock()
        self.counts = collections.Counter()
        #: The process's SharedPoll, once the ``response_cache_hit`` stage
        #: made one (a database with RelStorage's invalidation polling).
        self.poll = None
        #: The requests, as they came in (``response_cache_poll``'s
        #: ``raw_request``), whose keys the front door knew: their polls
        #: are sent as they come in.  A hint, bounded by ``HOT_MAX``.
        self.hot = {}

    def __len__(self):
        return len(self._entries)

    def get(self, key):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key, value):
        """Keep ``value`` under ``key``; return how many were evicted."""
        if value.size > self.max_bytes:
            return 0
        evicted = 0
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._forget(key, old)
            self._entries[key] = value
            self.size += value.size
            reads = getattr(value, 'reads', None)
            if reads:
                readers = self._readers
                for oid in reads:
                    keys = readers.get(oid)
                    if keys is None:
                        keys = readers[oid] = set()
                    keys.add(key)
            while self.size > self.max_bytes:
                dropped_key, dropped = self._entries.popitem(last=False)
                self._forget(dropped_key, dropped)
                evicted += 1
        return evicted

    def _forget(self, key, value):
        """Account for ``value`` (under ``key``) gone; under the lock."""
        self.size -= value.size
        reads = getattr(value, 'reads', None)
        if reads:
            readers = self._readers
            for oid in reads:
                keys = readers.get(oid)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del readers[oid]

    def discard(self, key, value):
        """Drop ``key`` if it still holds ``value``."""
        with self._lock:
            if self._entries.get(key) is value:
                del self._entries[key]
                self._forget(key, value)

    def invalidate(self, oids):
        """Drop the pages that read any of ``oids`` (None: every page; the
        learned keys stay); return how many were dropped."""
        dropped = 0
        with self._lock:
            entries = self._entries
            if oids is None:
                keys = [key for key, value in entries.items()
                        if isinstance(value, Entry)]
            else:
                readers = self._readers
                keys = set()
                for oid in oids:
                    found = readers.get(oid)
                    if found:
                        keys.update(found)
            for key in keys:
                value = entries.pop(key)
                self._forget(key, value)
                dropped += 1
        return dropped

    def count(self, name, amount=1):
        with self._lock:
            self.counts[name] += amount

    #: The most requests ``hot`` holds: past it, it starts again empty.
    HOT_MAX = 4096

    def heat(self, request, known):
        """Note whether the front door knew the key of ``request`` (a
        ``raw_request``)."""
        hot = self.hot
        if known:
            if request not in hot:
                if len(hot) >= self.HOT_MAX:
                    hot.clear()
                hot[request] = True
        else:
            hot.pop(request, None)


# -- one invalidation poll shared by the hits of a process


def shared_poll_for(db):
    """A SharedPoll of ``db`` when its storage polls for invalidations
    itself (``IMVCCStorage``: RelStorage), else None."""
    if IMVCCStorage.providedBy(db.storage):
        return SharedPoll(db)
    return None


class SharedPoll:
    """One instance of the database's storage (``new_instance``) whose
    invalidation polls (``poll_invalidations``) keep the process's stored
    pages exact, shared by the requests of the process.

    A request may be answered from a stored page only after a poll that
    *started after the request arrived* completed.  ``arrival(received)``
    says when it arrived: the number of polls started by then, and the
    instant the server received it on the wall clock (``received``, e.g.
    ``mod_wsgi.request_start``, or None); ``sync(arrived)`` returns at
    once when a poll with a greater number, or one that began on the wall
    clock after ``received``, has completed, and otherwise polls.  Polls
    run one at a time, under ``lock``; a poll drops from the cache every
    page that read an object it reports changed
    (``ResponseCache.invalidate``), and is kept in a short log (``log``)
    for the pages being rendered meanwhile.

    The server's instant lets the requests that waited in the server's
    queue share the poll of the request before them.  It is the wall
    clock of the same host (mod_wsgi's daemons listen on unix sockets
    only), which the system may set: a poll counts as after ``received``
    only when it began more than ``WALL_CLOCK_MARGIN`` later and the wall
    clock was not set back by more than that margin since the poll began
    (the difference between the wall clock and the monotonic clock
    changes only when the wall clock is set; ``clock_offsets``).  A poll
    that truly began before the request arrived would need the clock set
    back between the two, which the second condition sees, unless it was
    set forward again by as much before the request was answered.

    A poll may also be sent ahead (``send``): its statement goes to the
    database as the request comes in, and its answer is read
    (``SentPoll.complete``) when the front door needs it, so that the
    database works while the outer stages run.  It holds ``lock`` from
    the send to the answer, and is numbered and dated as it is sent.  The
    storage's poll is sent ahead only where ``sender()`` says how (the
    speedups seam does for RelStorage on MySQL); otherwise ``send``
    declines and ``sync`` polls.

    A page rendered in a snapshot older than the last poll could have
    missed what that poll dropped: ``mark()``, taken before the rendering's
    transaction begins, is the number of the last poll (its snapshot is
    no newer than the rendering's), and ``store`` keeps the page only when
    no poll since reported an object the page read.
    """

    #: Polls remembered for ``store``: a page whose rendering outlasted
    #: more polls than this is not kept.
    LOG_SIZE = 64
    #: Seconds: wall-clock instants closer than this are not told apart,
    #: and a wall clock set back by more is seen.
    WALL_CLOCK_MARGIN = 0.0001

    #: The clocks (replaced in tests).
    wall_clock = staticmethod(time.time)
    monotonic_clock = staticmethod(time.monotonic)

    def __init__(self, db):
        self.db = db
        self.instance = db.storage.new_instance()
        self.lock = threading.Lock()
        #: Polls started, and the number of the last one that completed.
        self.started = 0
        self.done = 0
        #: When the last completed poll began: the wall clock, and the
        #: most the wall clock was ahead of the monotonic one.
        self.began = None
        #: (number, oids or None) of the last polls that completed.
        self.log = collections.deque(maxlen=self.LOG_SIZE)

    def close(self):
        self.instance.release()

    def arrival(self, received=None):
        """What a request arriving now passes to ``sync``: the polls
        started by now, and the wall-clock instant the server received it
        (None when unknown)."""
        return self.started, received

    def clock_offsets(self):
        """The wall clock now, and bounds of how far it is ahead of the
        monotonic clock: (now, low, high)."""
        before = self.monotonic_clock()
        now = self.wall_clock()
        after = self.monotonic_clock()
        return now, now - after, now - before

    def began_after(self, received):
        """Whether the last completed poll began after the wall-clock
        instant ``received``, the wall clock not set back since."""
        began = self.began
        if began is None:
            return False
        began_at, ahead = began
        margin = self.WALL_CLOCK_MARGIN
        if began_at - received <= margin:
            return False
        low = self.clock_offsets()[1]
        return ahead - low <= margin

    def covered(self, arrived):
        """Whether a completed poll started after ``arrived``: one with a
        greater number, or one that began after the server received the
        request."""
        started, received = arrived
        if self.done > started:
            return True
        return received is not None and self.began_after(received)

    def sync(self, cache, arrived):
        """Make sure a poll that started after ``arrived`` (``arrival()``
        when the request arrived) completed and its invalidations were
        applied to ``cache``."""
        with self.lock:
            if self.covered(arrived):
                return
            number, began = self.next_poll()
            self.completed(cache, number, self.changes(), began)

    def next_poll(self):
        """Number and date the poll about to be made, under the lock, before
        it asks the storage: (its number, when it began)."""
        now, _, ahead = self.clock_offsets()
        self.started += 1
        return self.started, (now, ahead)

    def completed(self, cache, number, oids, began):
        """Poll ``number``, begun at ``began`` (wall clock, its lead on the
        monotonic clock), reported ``oids``: drop the pages that read them,
        and log it; under the lock."""
        cache.invalidate(oids)
        self.log.append((number, oids))
        self.done = number
        self.began = began

    def send(self, cache, arrived):
        """Send ahead the poll ``sync(cache, arrived)`` would make: a
        ``SentPoll`` holding the lock until its ``complete()``; None when
        no poll is needed, another is under way (``sync`` waits for it)
        or the storage's poll cannot be sent ahead (``sync`` polls)."""
        if self.covered(arrived):
            return None
        sender = self.sender()
        if sender is None or not self.lock.acquire(blocking=False):
            return None
        try:
            if self.covered(arrived):
                self.lock.release()
                return None
            number, began = self.next_poll()
            receive = sender()
        except BaseException:
            self.lock.release()
            raise
        return SentPoll(self, cache, number, began, receive)

    def sender(self):
        """A callable that sends the storage's poll and returns the
        callable that reads its answer (the oids, as ``changes()``
        returns them), or None: RelStorage's ``poll_invalidations`` asks
        and waits in one call."""
        return None

    def changes(self):
        """Poll the storage: the oids of the objects changed since the
        last poll (a frozenset), or None for every object (the first
        poll, a pack); no snapshot is held after it."""
        instance = self.instance
        oids = instance.poll_invalidations()
        # roll the snapshot back at once: an idle process holds none (the
        # next poll rolls back before it asks again)
        instance.sync()
        return frozenset(oids) if oids is not None else None

    def mark(self):
        """The number of the last completed poll, no poll running: a
        transaction begun after this call sees at least its snapshot."""
        with self.lock:
            return self.done

    def store(self, cache, key, entry, mark):
        """Keep ``entry`` (rendered in a transaction begun after ``mark()``
        returned ``mark``) unless a poll since reported an object it read;
        return how many pages were evicted, or None when it was not
        kept."""
        with self.lock:
            if self.done > mark:
                log = self.log
                if not log or log[0][0] > mark + 1:
                    return None         # too many polls since
                reads = entry.reads
                for number, oids in log:
                    if number > mark and (oids is None or
                                          not oids.isdisjoint(reads)):
                        return None
            # under the lock: no poll runs between the check and the put
            return cache.put(key, entry)


class SentPoll:
    """A poll ``SharedPoll.send`` sent ahead, holding the poll's lock:
    ``complete()`` reads its answer, drops the pages that read a changed
    object and releases the lock; the first call raises what the poll
    raised, later calls do nothing."""

    __slots__ = ('poll', 'cache', 'number', 'began', 'receive')

    def __init__(self, poll, cache, number, began, receive):
        self.poll = poll
        self.cache = cache
        self.number = number
        self.began = began
        self.receive = receive

    def complete(self):
        receive = self.receive
        if receive is None:
            return
        self.receive = None
        poll = self.poll
        try:
            poll.completed(self.cache, self.number, receive(), self.began)
        finally:
            poll.lock.release()
