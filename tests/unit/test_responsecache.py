"""The pieces of the response cache: the recording connection, the
policies views declare, ETags, the byte-bounded LRU."""

import pytest
import transaction
import ZODB
from persistent.mapping import PersistentMapping
from ZODB.Connection import Connection
from ZODB.MappingStorage import MappingStorage

from zope.pipeline.zodb import responsecache
from zope.pipeline.zodb.responsecache import CachePolicy
from zope.pipeline.zodb.responsecache import Learned
from zope.pipeline.zodb.responsecache import RecordingConnection
from zope.pipeline.zodb.responsecache import ResponseCache

from tests.functional.inner import root_oid


@pytest.fixture
def db():
    db = ZODB.DB(MappingStorage())
    yield db
    db.close()


def opened(db):
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    manager.begin()
    return connection, manager


def test_install_makes_the_pools_next_connections_record(db):
    assert responsecache.install(db) and db.klass is RecordingConnection
    connection, manager = opened(db)
    assert isinstance(connection, RecordingConnection)
    assert responsecache.install(db)    # once is enough
    manager.abort()
    connection.close()


def test_a_database_with_another_connection_class_is_left_alone(db):
    class Other(Connection):
        pass
    db.klass = Other
    assert not responsecache.install(db) and db.klass is Other


def test_the_connection_records_what_it_loads_and_notes_writes(db):
    responsecache.install(db)
    connection, manager = opened(db)
    connection.root()['a'] = PersistentMapping(x=1)
    manager.commit()
    manager.begin()
    connection.cacheMinimize()
    connection.reads = {}
    connection.wrote = False
    assert connection.root()['a']['x'] == 1
    reads = connection.reads
    assert len(reads) == 2 and not connection.wrote
    connection.add(PersistentMapping())
    assert connection.wrote
    assert not responsecache.changed_since(connection, reads)
    connection.root()['a']['x'] = 2
    manager.commit()
    manager.begin()
    assert responsecache.changed_since(connection, reads)
    manager.abort()
    connection.close()


def test_an_object_gone_is_a_change(db):
    connection, manager = opened(db)
    assert responsecache.changed_since(connection, {b'\0' * 7 + b'\x09':
                                                    b'\0' * 8})
    manager.abort()
    connection.close()


def test_a_policy_adapts_to_itself_and_names_its_headers():
    policy = CachePolicy(vary=('Accept', 'X-Theme'), cache_control='x')
    assert policy(object()) is policy
    assert policy.environ_keys == ('HTTP_ACCEPT', 'HTTP_X_THEME')
    assert repr(policy) == \
        "CachePolicy(vary=('Accept', 'X-Theme'), cache_control='x')"


class View:
    response_cache = CachePolicy()

    def __init__(self, context=None):
        self.context = context

    def __call__(self):
        return ''

    def other(self):
        return ''


def test_a_view_class_declares_its_policy_by_attribute():
    view = View()
    assert responsecache.policy_of(view) is View.response_cache
    assert responsecache.policy_of(view.__call__) is View.response_cache
    assert responsecache.policy_of(view.other) is None


def test_objects_that_are_not_views_have_no_policy():
    assert responsecache.policy_of(None) is None
    assert responsecache.policy_of(object()) is None


@pytest.mark.parametrize('header, matches', [
    ('"a"', True), ('W/"a"', True), ('"b", "a"', True), ('*', True),
    ('"b"', False), ('a', False)])
def test_if_none_match_compares_weakly(header, matches):
    assert responsecache.etag_matches(header, '"a"') is matches


def test_the_etag_changes_with_the_key_and_each_serial():
    reads = {b'\0' * 8: b'\0' * 7 + b'\1'}
    etag = responsecache.etag_of(('k',), reads)
    assert etag.startswith('"zp-') and etag.endswith('"')
    assert responsecache.etag_of(('k2',), reads) != etag
    assert responsecache.etag_of(('k',), {b'\0' * 8: b'\0' * 7 + b'\2'}
                                 ) != etag


def test_the_cache_drops_the_least_recently_used_beyond_its_bytes():
    cache = ResponseCache(250)
    for name in 'abc':
        assert cache.put(name, Learned((), 100)) == (1 if name == 'c' else 0)
    assert cache.get('a') is None and len(cache) == 2
    cache.get('b')          # now the most recently used
    assert cache.put('d', Learned((), 100)) == 1
    assert cache.get('c') is None and cache.get('b') is not None
    assert cache.size == 200


def test_a_value_larger_than_the_cache_is_not_kept():
    cache = ResponseCache(50)
    assert cache.put('a', Learned((), 100)) == 0 and len(cache) == 0


def test_a_key_put_again_replaces_its_value_and_size():
    cache = ResponseCache(1000)
    cache.put('a', Learned((), 100))
    cache.put('a', Learned((), 300))
    assert cache.size == 300 and len(cache) == 1


def test_discard_drops_only_the_value_it_was_given():
    cache = ResponseCache(1000)
    first, second = Learned((), 10), Learned((), 20)
    cache.put('a', first)
    cache.put('a', second)
    cache.discard('a', first)
    assert cache.get('a') is second
    cache.discard('a', second)
    assert cache.get('a') is None and cache.size == 0


# -- which databases record: only those of a publisher whose response
# cache is on (built before open_root, it says so in the build's shared)


class Build:

    request_type = 'browser'

    def __init__(self, recording):
        self.shared = {responsecache.RECORDING: True} if recording else {}


def test_open_root_makes_a_given_database_record_for_a_response_cache(db):
    from zope.pipeline.stages.open_root import OpenRootStage
    OpenRootStage(None, database=db, build=Build(False))
    assert db.klass is Connection
    build = Build(True)
    stage = OpenRootStage(None, database=db, build=build)
    assert db.klass is RecordingConnection
    # the front door polls it for the chain's request type
    assert build.shared[responsecache.DATABASE_SOURCE] == {
        'browser': stage.database}


def test_open_root_makes_each_chosen_database_record(db):
    from zope.pipeline.stages.open_root import OpenRootStage
    plain = OpenRootStage(None, database=lambda: db, build=Build(False))
    assert plain.database.get() is db and db.klass is Connection
    stage = OpenRootStage(None, database=lambda: db, build=Build(True))
    assert stage.database.get() is db and db.klass is RecordingConnection


def test_a_process_database_records_from_its_opening_or_at_once():
    from zope.pipeline.zodb.storage import ProcessDatabase
    opened_first = ProcessDatabase('', 'Application', PersistentMapping)
    later = ProcessDatabase('', 'Application', PersistentMapping)
    try:
        assert opened_first.get().klass is Connection
        opened_first.record()
        assert opened_first.db.klass is RecordingConnection
        later.record()
        assert later.get().klass is RecordingConnection
    finally:
        opened_first.close()
        later.close()


# -- the pages each object's change drops, and the shared poll


def entry(reads):
    return responsecache.Entry('200 OK', [], b'page', reads, '"e"', None,
                               0.0, 10)


def test_invalidate_drops_the_pages_that_read_an_object_and_only_them():
    cache = ResponseCache(1 << 20)
    cache.put('base', Learned((), 10))
    cache.put('a', entry({b'1': b's', b'2': b's'}))
    cache.put('b', entry({b'2': b's'}))
    cache.put('c', entry({b'3': b's'}))
    assert cache.invalidate({b'2', b'9'}) == 2
    assert [cache.get(key) is None for key in 'abc'] == [True, True, False]
    assert cache.invalidate({b'1', b'2'}) == 0      # forgotten with them
    assert cache.invalidate(None) == 1              # every page ...
    assert cache.get('base') is not None and len(cache) == 1  # ... no key


def test_a_page_replaced_or_evicted_is_no_longer_dropped_for_its_reads():
    cache = ResponseCache(1600)         # three pages of 514 bytes
    cache.put('a', entry({b'1': b's'}))
    cache.put('a', entry({b'2': b's'}))
    assert cache.invalidate({b'1'}) == 0 and cache.get('a') is not None
    for name in 'bcd':                  # 'a' is the least recently used
        cache.put(name, entry({b'3': b's'}))
    assert cache.get('a') is None
    assert cache.invalidate({b'2'}) == 0
    assert cache.invalidate({b'3'}) == 3 and len(cache) == 0
    assert cache.size == 0


def test_a_storage_that_does_not_poll_has_no_shared_poll(db):
    assert responsecache.shared_poll_for(db) is None


@pytest.fixture
def relstorage(tmp_path):
    """The process's database and another process's, on the same SQLite
    files; yields (db, commit(name, value) as the other process)."""
    from zope.pipeline.zodb.storage import open_database

    from tests.functional.inner import commit_root
    from tests.functional.inner import sqlite_config
    config = sqlite_config(tmp_path)
    db, other = open_database(config), open_database(config)

    def commit(name, value):
        commit_root(other, name, value)
    commit('a', 1)
    commit('b', 1)
    yield db, commit
    db.close()
    other.close()


@pytest.fixture
def two_relstorages(tmp_path):
    """Two databases on the same SQLite files (as a process's, then its
    forked child's)."""
    from zope.pipeline.zodb.storage import open_database

    from tests.functional.inner import sqlite_config
    config = sqlite_config(tmp_path)
    first, second = open_database(config), open_database(config)
    yield first, second
    first.close()
    second.close()


@pytest.fixture
def shared_poll(relstorage):
    """(db, commit, an empty cache, the db's SharedPoll), closed after."""
    db, commit = relstorage
    poll = responsecache.shared_poll_for(db)
    yield db, commit, ResponseCache(1 << 20), poll
    poll.close()


def test_a_commit_landing_between_two_hits_is_seen_by_the_second(
        shared_poll):
    db, commit, cache, poll = shared_poll
    poll.sync(cache, poll.arrival())
    cache.put('page', entry({root_oid(db): b's'}))
    first = poll.arrival()
    poll.sync(cache, first)
    assert cache.get('page') is not None        # the first hit
    commit('a', 2)                              # lands between them
    second = poll.arrival()         # arrived after the first's poll
    poll.sync(cache, second)
    assert cache.get('page') is None            # never stale


def test_a_poll_started_after_the_arrival_is_shared_an_older_one_is_not(
        shared_poll):
    db, commit, cache, poll = shared_poll
    early = poll.arrival()          # arrived before the next poll
    late = poll.arrival()
    poll.sync(cache, early)         # the poll of a concurrent request
    assert poll.done == early[0] + 1
    poll.sync(cache, late)          # it started after `late` arrived
    assert poll.done == early[0] + 1    # shared: no second poll
    now = poll.arrival()            # arrived after it started
    cache.put('page', entry({root_oid(db): b's'}))
    commit('a', 3)
    poll.sync(cache, now)
    assert poll.done == early[0] + 2 and cache.get('page') is None


class Clocks:
    """A SharedPoll's wall and monotonic clocks, set by the test: the
    wall clock is ``offset`` ahead of the monotonic one."""

    def __init__(self, poll, now=1000.0, offset=5e8):
        self.now, self.offset = now, offset
        poll.wall_clock = lambda: self.now + self.offset
        poll.monotonic_clock = lambda: self.now

    def wall(self, later=0.0):
        return self.now + self.offset + later


def queued_behind_one(poll, cache, clocks, gap):
    """A request received, then ``gap`` seconds later another that polls
    first; then the queued one is synced."""
    received = clocks.wall()
    clocks.now += gap
    poll.sync(cache, poll.arrival(clocks.wall()))
    poll.sync(cache, poll.arrival(received))


def counted_polls(poll):
    """The polls ``poll`` makes from now on, counted in a list."""
    made = []
    changes = poll.changes

    def counting():
        made.append(1)
        return changes()
    poll.changes = counting
    return made


def test_a_request_received_before_a_poll_began_shares_it(shared_poll):
    db, commit, cache, poll = shared_poll
    clocks = Clocks(poll)
    polls = counted_polls(poll)
    # the poll of the request before it began 2 ms after it was received
    queued_behind_one(poll, cache, clocks, 0.002)
    assert len(polls) == 1                  # shared


def test_a_request_received_after_a_commit_and_a_poll_sees_the_commit(
        shared_poll):
    db, commit, cache, poll = shared_poll
    clocks = Clocks(poll)
    polls = counted_polls(poll)
    poll.sync(cache, poll.arrival(clocks.wall()))
    cache.put('page', entry({root_oid(db): b's'}))
    clocks.now += 0.001
    commit('a', 6)
    received = poll.arrival(clocks.wall())  # after the poll began
    poll.sync(cache, received)
    assert len(polls) == 2 and cache.get('page') is None   # never stale


def test_a_poll_within_the_clocks_margin_of_the_arrival_is_not_shared(
        shared_poll):
    db, commit, cache, poll = shared_poll
    clocks = Clocks(poll)
    polls = counted_polls(poll)
    queued_behind_one(poll, cache, clocks, poll.WALL_CLOCK_MARGIN / 2)
    assert len(polls) == 2


def test_a_wall_clock_set_back_since_the_poll_began_is_not_trusted(
        shared_poll):
    db, commit, cache, poll = shared_poll
    clocks = Clocks(poll)
    polls = counted_polls(poll)
    poll.sync(cache, poll.arrival(clocks.wall()))  # began at wall w
    # the wall clock is set back 10 ms; a request received 1 ms later
    # reads w - 9 ms on the wall clock: before the poll, by the clock
    clocks.offset -= 0.010
    clocks.now += 0.001
    cache.put('page', entry({root_oid(db): b's'}))
    commit('a', 7)
    poll.sync(cache, poll.arrival(clocks.wall()))
    assert len(polls) == 2 and cache.get('page') is None
    # the clock set forward again is no reason not to share a later poll
    clocks.offset += 0.010
    queued_behind_one(poll, cache, clocks, 0.001)
    assert len(polls) == 3


def test_a_request_without_a_server_arrival_never_shares_an_older_poll(
        shared_poll):
    db, commit, cache, poll = shared_poll
    polls = counted_polls(poll)
    arrived = poll.arrival()
    assert arrived == (0, None)
    poll.sync(cache, arrived)
    poll.sync(cache, poll.arrival(None))
    assert len(polls) == 2


def test_a_page_is_kept_unless_a_poll_since_its_mark_saw_what_it_read(
        shared_poll):
    db, commit, cache, poll = shared_poll
    poll.sync(cache, poll.arrival())
    oid = root_oid(db)
    mark = poll.mark()
    # no poll since the mark: kept
    assert poll.store(cache, 'kept', entry({oid: b's'}), mark) == 0
    # a poll since, of a commit to what it read: not kept
    commit('a', 4)
    poll.sync(cache, poll.arrival())
    assert poll.store(cache, 'stale', entry({oid: b's'}), mark) is None
    assert cache.get('kept') is None and cache.get('stale') is None
    # a poll since, of a commit to another object only: kept
    mark = poll.mark()
    commit('a', 5)                  # changes the root only
    poll.sync(cache, poll.arrival())
    assert poll.store(cache, 'other', entry({b'x': b's'}), mark) == 0
    # more polls since than the log holds: not kept
    mark = poll.mark()
    for _ in range(poll.LOG_SIZE + 1):
        poll.sync(cache, poll.arrival())
    assert poll.store(cache, 'late', entry({b'x': b's'}), mark) is None


def sending(poll):
    """Let ``poll`` send ahead (``sender``): each send records the number
    of polls started and whether the lock was held as it was sent; the
    answer is the storage's poll, made when it is read."""
    sent = []

    def sender():
        def send():
            sent.append((poll.started, poll.lock.locked()))
            return lambda: poll.changes()
        return send
    poll.sender = sender
    return sent


def test_a_storage_poll_is_not_sent_ahead_unless_it_says_how(shared_poll):
    db, commit, cache, poll = shared_poll
    assert poll.sender() is None
    assert poll.send(cache, poll.arrival()) is None
    assert poll.started == 0 and not poll.lock.locked()


def test_a_poll_sent_ahead_is_numbered_and_locked_before_it_is_sent(
        shared_poll):
    db, commit, cache, poll = shared_poll
    sent = sending(poll)
    polls = counted_polls(poll)
    poll.sync(cache, poll.arrival())
    cache.put('page', entry({root_oid(db): b's'}))
    commit('a', 8)
    arrived = poll.arrival()
    ahead = poll.send(cache, arrived)
    assert sent == [(arrived[0] + 1, True)]
    later = poll.arrival()          # arrived once it was sent
    assert poll.lock.locked() and poll.done == arrived[0]
    ahead.complete()
    assert not poll.lock.locked() and poll.done == arrived[0] + 1
    assert cache.get('page') is None        # the commit before it, seen
    ahead.complete()                        # once only
    assert len(polls) == 2
    poll.sync(cache, arrived)               # answered by it
    assert len(polls) == 2
    poll.sync(cache, later)                 # not: it was sent before
    assert len(polls) == 3


def test_no_poll_is_sent_when_one_after_the_arrival_completed_or_runs(
        shared_poll):
    db, commit, cache, poll = shared_poll
    sent = sending(poll)
    arrived = poll.arrival()
    poll.sync(cache, arrived)
    assert poll.send(cache, arrived) is None            # completed
    arrived = poll.arrival()
    with poll.lock:                                     # another runs
        assert poll.send(cache, arrived) is None
    assert sent == []


def test_a_poll_covering_the_arrival_completed_while_waiting_is_enough(
        shared_poll):
    db, commit, cache, poll = shared_poll
    sent = sending(poll)
    arrived = poll.arrival()
    covered = []
    acquire = poll.lock.acquire

    class Lock:
        """The lock, acquired once another request's poll completed."""

        def acquire(self, blocking=True):
            poll.lock = lock
            poll.sync(cache, poll.arrival())
            covered.append(poll.done)
            return acquire(blocking)

        def release(self):
            lock.release()
    lock = poll.lock
    poll.lock = Lock()
    assert poll.send(cache, arrived) is None
    assert covered == [arrived[0] + 1] and sent == []
    assert not lock.locked()


def test_a_poll_that_cannot_be_sent_releases_the_lock(shared_poll):
    db, commit, cache, poll = shared_poll

    def sender():
        def send():
            raise ConnectionError('the database went away')
        return send
    poll.sender = sender
    with pytest.raises(ConnectionError):
        poll.send(cache, poll.arrival())
    assert not poll.lock.locked() and poll.done == 0
    del poll.sender
    polls = counted_polls(poll)
    poll.sync(cache, poll.arrival())
    assert len(polls) == 1 and poll.done == 2


def test_a_poll_sent_ahead_whose_answer_fails_raises_once(shared_poll):
    db, commit, cache, poll = shared_poll
    sending(poll)
    poll.sync(cache, poll.arrival())
    arrived = poll.arrival()
    ahead = poll.send(cache, arrived)

    def unreachable():
        raise ConnectionError('the database went away')
    poll.changes = unreachable
    with pytest.raises(ConnectionError):
        ahead.complete()
    ahead.complete()
    assert not poll.lock.locked() and poll.done == arrived[0]


def test_the_requests_whose_keys_were_known_are_a_bounded_hint():
    cache = ResponseCache(1 << 20)
    cache.HOT_MAX = 2
    cache.heat('a', True)
    cache.heat('b', True)
    cache.heat('b', True)
    assert set(cache.hot) == {'a', 'b'}
    cache.heat('a', False)
    cache.heat('a', False)
    assert set(cache.hot) == {'b'}
    cache.heat('c', True)
    cache.heat('d', True)           # past the bound: it starts again
    assert set(cache.hot) == {'d'}


# -- the stages around the shared poll


class Source:
    """open_root's database source: ``get()`` returns the next of
    ``dbs`` each time (the last one once they are used up)."""

    def __init__(self, *dbs):
        self.dbs = list(dbs)

    def get(self):
        return self.dbs.pop(0) if len(self.dbs) > 1 else self.dbs[0]


def cache_stage(**kw):
    from zope.pipeline.stages.response_cache import ResponseCacheStage
    return ResponseCacheStage(lambda environ, start_response: ['rendered'],
                              **kw)


def door(cache=None, choose=None, sources=None):
    from zope.pipeline.stages.response_cache import Keys
    from zope.pipeline.stages.response_cache import ResponseCacheHitStage
    return ResponseCacheHitStage(None, Keys(), cache or ResponseCache(1000),
                                 choose, {} if sources is None else sources)


def test_a_new_database_gets_a_new_poll_and_drops_the_pages_kept(
        two_relstorages):
    first, second = two_relstorages
    hit = door()
    cache = hit.cache
    source = Source(first, first, second)
    poll = hit.poll(source)
    assert poll.db is first and hit.poll(source) is poll
    cache.put('base', Learned((), 10))
    cache.put('page', entry({b'1': b's'}))
    renewed = hit.poll(source)      # the database of a forked process
    assert renewed.db is second and cache.poll is renewed
    assert cache.get('page') is None and cache.get('base') is not None
    poll.close()
    renewed.close()


def test_a_database_that_does_not_poll_is_asked_once(db, monkeypatch):
    from zope.pipeline.stages import response_cache
    asked = []
    monkeypatch.setattr(response_cache, 'shared_poll_for', lambda db: (
        asked.append(db), responsecache.shared_poll_for(db))[1])
    hit = door()
    assert hit.poll(Source(db)) is None and hit.poll(Source(db)) is None
    assert asked == [db]


def test_without_a_front_the_stage_keeps_nothing_once_a_poll_exists(db):
    from zope.pipeline import environ as keys
    responsecache.install(db)
    stage = cache_stage()
    stage.cache.poll = object()     # a response_cache_hit polls
    connection = db.open()
    try:
        environ = {'REQUEST_METHOD': 'GET', keys.CONNECTION: connection}
        assert stage(environ, None) == ['rendered']
        assert len(stage.cache) == 0    # not even a learned key
    finally:
        connection.close()


class Registry:
    """The pipeline registry's request factory choice: ``registration``
    for every request."""

    def __init__(self, registration=None):
        self.registration = registration

    def choose_request_factory(self, environ):
        return self.registration


class Settings:

    def __init__(self, shared=None, **cache):
        self.settings = {'response_cache': cache} if cache else {}
        self.shared = {} if shared is None else shared
        self.registry = Registry()


def test_the_front_door_is_built_when_the_cache_is_on_and_shares_its_cache():
    from zope.pipeline.stages import response_cache as module
    app = object()
    assert module.response_cache_hit_stage(app) is app
    assert module.response_cache_hit_stage(app, build=Settings()) is app
    assert module.response_cache_hit_stage(
        app, build=Settings(enabled='false')) is app
    build = Settings(enabled='true', max_bytes='500', vary='X-Theme',
                     ignored_cookies='consent')
    built = module.response_cache_hit_stage(app, build=build)
    assert built.next_app is app and built.cache.max_bytes == 500
    assert built.keys.vary == ('X-Theme',)
    assert built.keys.ignored_cookies == {'consent'}
    # the inner stage, built after, shares the cache; open_root fills
    # the sources
    assert cache_stage(build=build).cache is built.cache
    assert built.sources is build.shared[responsecache.DATABASE_SOURCE]
    assert built.choose == build.registry.choose_request_factory


def test_the_server_arrival_is_mod_wsgis_request_start_of_any_version():
    from zope.pipeline.stages.response_cache import server_arrival
    assert server_arrival({}) is None
    # mod_wsgi 6: seconds, a float; before: microseconds, a string
    assert server_arrival({'mod_wsgi.request_start': 1764186000.25}) == \
        1764186000.25
    assert server_arrival({'mod_wsgi.request_start': '1764186000250000'}) \
        == 1764186000.25
    assert server_arrival({'mod_wsgi.request_start': 'soon'}) is None
    assert server_arrival({'mod_wsgi.request_start': 1764186000}) is None


def test_the_front_door_trusts_the_server_arrival_unless_turned_off():
    from zope.pipeline.stages import response_cache as module
    on = module.response_cache_hit_stage(
        object(), build=Settings(enabled='true'))
    off = module.response_cache_hit_stage(
        object(), build=Settings(enabled='true', server_arrival='false'))
    environ = {'mod_wsgi.request_start': 1764186000.5}
    assert on.received(environ) == 1764186000.5
    assert off.received(environ) is None


def test_the_front_door_passes_requests_it_cannot_poll_for(db):
    from zope.pipeline.engine.factories import browser
    from zope.pipeline.engine.registry import RequestFactoryRegistration
    passed = []

    def app(environ, start_response):
        passed.append(dict(environ))
        return ['rendered']
    hit = door(choose=Registry().choose_request_factory)
    hit.next_app = app
    environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/'}
    # no request type
    assert hit(dict(environ), None) == ['rendered']
    # a database chosen per request (no source), or one that does not poll
    hit.choose = Registry(RequestFactoryRegistration(
        'browser', browser, ('GET',), ('*',), 0)).choose_request_factory
    assert hit(dict(environ), None) == ['rendered']
    hit.sources['browser'] = Source(db)
    assert hit(dict(environ), None) == ['rendered']
    # not a candidate
    assert hit(dict(environ, REQUEST_METHOD='POST'), None) == ['rendered']
    assert len(passed) == 4
    assert not any('zope.pipeline.response_cache.front' in seen
                   for seen in passed)


def test_the_front_door_passes_requests_whose_database_cannot_be_opened():
    from zope.pipeline.engine.factories import browser
    from zope.pipeline.engine.registry import RequestFactoryRegistration

    class Down:
        def get(self):
            raise ConnectionError('the MySQL server is down')
    hit = door(choose=Registry(RequestFactoryRegistration(
        'browser', browser, ('GET',), ('*',), 0)).choose_request_factory,
        sources={'browser': Down()})
    hit.next_app = lambda environ, start_response: ['answered by retry']
    assert hit({'REQUEST_METHOD': 'GET'}, None) == ['answered by retry']


# -- what the front door knows of a request type


def test_a_request_kind_keeps_its_shape_while_its_inputs_are_the_same():
    from zope.pipeline.engine.factories import browser
    from zope.pipeline.engine.factories import request_spec_inputs
    from zope.pipeline.stages.response_cache import RequestKind
    kind = RequestKind(browser)
    inputs, shape = kind.now()
    assert shape is None and inputs is not None
    kind.learn(inputs, ('BrowserRequest', ('an', 'iro')))
    assert kind.now() == (request_spec_inputs(browser),
                          ('BrowserRequest', ('an', 'iro')))
    kind.inputs = inputs[:-1] + (object(),)     # a registration changed
    assert kind.now()[1] is None


def test_a_request_kind_of_another_factory_learns_nothing():
    from zope.pipeline.engine.factories import BrowserRequest
    from zope.pipeline.engine.factories import RequestFactory
    from zope.pipeline.stages.response_cache import RequestKind

    class SiteRequest(BrowserRequest):
        pass
    kind = RequestKind(RequestFactory(SiteRequest))
    inputs, shape = kind.now()
    assert inputs is None and shape is None
    kind.learn(inputs, ('SiteRequest', ()))
    assert kind.shape is None


def test_a_request_kind_refused_once_never_learns_again(caplog):
    from zope.pipeline.engine.factories import browser
    from zope.pipeline.stages.response_cache import RequestKind
    kind = RequestKind(browser)
    inputs = kind.now()[0]
    kind.learn(inputs, ('BrowserRequest', ('learned',)))
    kind.refuse(('BrowserRequest', ('learned',)),
                ('BrowserRequest', ('other',)))
    assert kind.now()[1] is None
    # a concurrent request made with the same learned shape
    kind.refuse(('BrowserRequest', ('learned',)),
                ('BrowserRequest', ('another',)))
    assert kind.now()[1] is None
    kind.learn(inputs, ('BrowserRequest', ('learned',)))
    assert kind.now()[1] is None
    assert "('other',), not the learned ('learned',)" in caplog.text


def behind_front(front):
    """The response_cache stage behind the front door, with ``front``, for
    a GET of a request of no interest: (answer, environ)."""
    import types

    from zope.pipeline import environ as keys
    from zope.pipeline.stages.response_cache import ResponseCacheStage

    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'rendered']
    stage = ResponseCacheStage(app)
    environ = {'REQUEST_METHOD': 'GET', keys.REQUEST_KEY: object(),
               keys.CONNECTION: types.SimpleNamespace()}
    started = []
    answer = stage.behind_front(environ, lambda *args: started.append(args),
                                front)
    return answer, started


def test_a_front_whose_key_was_not_the_requests_refuses_its_kind(caplog):
    from zope.pipeline.engine.factories import browser
    from zope.pipeline.stages.response_cache import Front
    from zope.pipeline.stages.response_cache import RequestKind
    kind = RequestKind(browser)
    inputs = kind.now()[0]
    kind.learn(inputs, ('BrowserRequest', ('learned',)))
    front = Front(('browser', ('BrowserRequest', ('learned',))), None, None,
                  0, 0, kind, inputs)
    answer, started = behind_front(front)
    assert answer == [b'rendered'] and started[0][0] == '200 OK'
    assert kind.refused and kind.now()[1] is None
    assert 'not the learned' in caplog.text


def test_a_front_without_a_kind_teaches_nothing():
    from zope.pipeline.stages.response_cache import Front
    answer, started = behind_front(Front(None, None, None, 0, 0))
    assert answer == [b'rendered'] and started[0][0] == '200 OK'
