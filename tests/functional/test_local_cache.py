"""compat: RelStorage's local cache never serves a request a state older
than its snapshot after another thread vacuums the MVCC index.

``LocalClient.delitems({oid: tid})`` must drop the cached states of ``oid``
up to ``tid``.  RelStorage 4.3's C cache drops a single cached state when it
is *newer* and keeps it when it is older; ``compat.patch_local_client``
makes it do what its docstring says.
"""

import contextlib

import pytest
import transaction
from BTrees.Length import Length
from conftest import need
from persistent.mapping import PersistentMapping
from relstorage.cache.cache import MultipleValues
from relstorage.cache.local_client import LocalClient
from relstorage.options import Options

from zope.pipeline.zodb import compat
from zope.pipeline.zodb import storage

from . import inner
from .inner import mariadb

OID = 7


def unpatched_delitems(client, oids_tids):
    """RelStorage's own ``delitems``, whichever class attribute is in
    place: the C cache's method the original one calls."""
    client._cache.delitems(oids_tids)


@pytest.fixture
def client():
    compat.apply()
    return LocalClient(Options(cache_local_mb=1))


def store(client, tid, state, frozen=False):
    client[(OID, tid)] = (state, tid)
    if frozen:
        client.freeze({OID: tid})


def cached_tids(client, candidates=(100, 150, 200, 300)):
    return [tid for tid in candidates
            if client._cache.peek_item_with_tid(OID, tid) is not None]


def test_a_single_older_state_is_discarded_up_to_the_tid_given(client):
    store(client, 100, b'old', frozen=True)
    client.delitems({OID: 200})
    assert cached_tids(client) == []
    assert client[(OID, None)] is None


def test_a_single_state_at_the_tid_given_is_discarded(client):
    store(client, 200, b'old')
    client.delitems({OID: 200})
    assert cached_tids(client) == []


def test_a_single_newer_state_is_kept(client):
    store(client, 300, b'new')
    client.delitems({OID: 200})
    assert cached_tids(client) == [300]
    assert client[(OID, 300)] == (b'new', 300)


def test_multiple_states_keep_only_those_newer_than_the_tid_given(client):
    store(client, 100, b'a', frozen=True)
    store(client, 150, b'b')
    store(client, 300, b'c')
    assert isinstance(client._cache.peek(OID), MultipleValues)
    client.delitems({OID: 150})
    assert cached_tids(client) == [300]


def test_an_object_not_cached_is_left_alone(client):
    client.delitems({OID: 200})
    assert cached_tids(client) == []


def test_relstorage_itself_keeps_the_older_single_state(client):
    """The bug the patch works around; when this fails, RelStorage is
    fixed and ``patch_local_client`` can go."""
    store(client, 100, b'old', frozen=True)
    unpatched_delitems(client, {OID: 200})
    assert cached_tids(client) == [100]


def test_a_local_client_class_is_patched_once():
    class Client:
        pass

    assert compat.patch_local_client(Client) is True
    assert compat.patch_local_client(Client) is False
    assert Client.delitems.__doc__.startswith('For each OID/TID pair')


# -- the stale read it caused, on MariaDB with a persistent cache

@contextlib.contextmanager
def opened(config):
    """The database as the pipeline opens it (``compat.apply()`` first)."""
    db = storage.open_database(config)
    try:
        yield db
    finally:
        db.close()


class Reader:
    """A connection of its own transaction manager, as a request has."""

    def __init__(self, db):
        self.manager = transaction.TransactionManager(explicit=True)
        self.connection = db.open(transaction_manager=self.manager)
        self.active = False

    def begin(self):
        """End the request under way, if any, and start another one: the
        connection polls and takes a new snapshot."""
        if self.active:
            self.manager.abort()
        self.manager.begin()
        self.active = True

    def root(self):
        return self.connection.root()

    def close(self):
        if self.active:
            self.manager.abort()
        self.connection.close()


def commit(db, change):
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    try:
        manager.begin()
        change(connection.root())
        manager.commit()
    finally:
        connection.close()


def save_a_frozen_length(cached_config, plain_config):
    """Create the objects; read ``length`` in two transactions of a process
    with a persistent cache, so that its file holds ``length`` frozen."""
    def create(root):
        root['length'] = Length()
        root['other'] = PersistentMapping()

    with opened(plain_config) as db:
        commit(db, create)
    with opened(cached_config) as db:
        reader = Reader(db)
        for _ in range(2):
            reader.begin()
            assert reader.root()['length']() == 0
        reader.close()


@pytest.mark.integration
def test_a_request_under_way_reads_its_own_snapshot_after_another_thread_vacuums_the_index(  # noqa: E501
        tmp_path):
    need(mariadb.available(), 'MariaDB is not running on this machine')
    cache_dir = tmp_path / 'cache'
    cache_dir.mkdir()
    with mariadb.scratch_database() as name:
        (tmp_path / 'cached').mkdir()
        (tmp_path / 'plain').mkdir()
        cached = inner.mysql_config(tmp_path / 'cached', name, cache_dir)
        plain = inner.mysql_config(tmp_path / 'plain', name)
        save_a_frozen_length(cached, plain)
        with opened(cached) as served, opened(plain) as other_server:
            x, a = Reader(served), Reader(served)
            try:
                x.begin()
                commit(other_server, lambda root: root['length'].change(1))
                a.begin()
                commit(other_server, lambda root: root['other'].update(k=1))
                x.begin()
                a.begin()  # request A's snapshot: length is 1
                commit(other_server, lambda root: root['length'].change(1))
                x.begin()  # X's poll vacuums the record A's index shares
                assert a.root()['length']() == 1
            finally:
                x.close()
                a.close()
