"""The pieces of the response cache: the recording connection, the
policies views declare, ETags, the byte-bounded LRU."""

import pytest
import transaction
import ZODB
from persistent.mapping import PersistentMapping
from ZODB.Connection import Connection
from ZODB.MappingStorage import MappingStorage

from zope.pipeline import responsecache
from zope.pipeline.responsecache import CachePolicy
from zope.pipeline.responsecache import Learned
from zope.pipeline.responsecache import RecordingConnection
from zope.pipeline.responsecache import ResponseCache


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

    def __init__(self, recording):
        self.shared = {responsecache.RECORDING: True} if recording else {}


def test_open_root_makes_a_given_database_record_for_a_response_cache(db):
    from zope.pipeline.stages.open_root import OpenRootStage
    OpenRootStage(None, database=db, build=Build(False))
    assert db.klass is Connection
    OpenRootStage(None, database=db, build=Build(True))
    assert db.klass is RecordingConnection


def test_open_root_makes_each_chosen_database_record(db):
    from zope.pipeline.stages.open_root import OpenRootStage
    plain = OpenRootStage(None, database=lambda: db, build=Build(False))
    assert plain.database.get() is db and db.klass is Connection
    stage = OpenRootStage(None, database=lambda: db, build=Build(True))
    assert stage.database.get() is db and db.klass is RecordingConnection


def test_a_process_database_records_from_its_opening_or_at_once():
    from zope.pipeline.storage import ProcessDatabase
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
