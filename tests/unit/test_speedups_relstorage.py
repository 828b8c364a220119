"""_speedups.relstorage: SharedPoll's own methods for storages other
than RelStorage on MySQL, and the seam putting them back.  The poll in
one statement on MariaDB: tests/integration/test_relstorage_poll_speedup.py.
"""

import types

import pytest
import transaction

from zope.pipeline import _speedups
from zope.pipeline._speedups import relstorage as seam
from zope.pipeline.zodb.responsecache import SharedPoll
from zope.pipeline.zodb.responsecache import shared_poll_for


@pytest.fixture
def seam_restored():
    """The seam's state as it was (an application made before may have
    installed it)."""
    was_installed = bool(seam._saved)
    installed = _speedups.State.installed
    yield
    if was_installed:
        seam.install()
    else:
        seam.uninstall()
    _speedups.State.installed = installed


def stock_methods():
    return {name: seam._saved.get(name, vars(SharedPoll)[name])
            for name in ('changes', 'close')}


def test_install_replaces_the_poll_and_uninstall_puts_it_back(
        seam_restored):
    stock = stock_methods()
    seam.uninstall()
    assert vars(SharedPoll)['changes'] is stock['changes']
    seam.install()
    seam.install()                  # once
    assert vars(SharedPoll)['changes'] is seam.changes
    assert vars(SharedPoll)['close'] is seam.close
    seam.uninstall()
    seam.uninstall()                # nothing of ours to take away
    assert vars(SharedPoll)['changes'] is stock['changes']
    assert vars(SharedPoll)['close'] is stock['close']


def test_the_seam_installs_it(seam_restored):
    assert 'relstorage' in _speedups.MODULES
    seam.uninstall()
    _speedups.State.installed = False
    _speedups.install()
    try:
        assert vars(SharedPoll)['changes'] is seam.changes
    finally:
        _speedups.uninstall()
    assert vars(SharedPoll)['changes'] is not seam.changes


def test_relstorage_on_sqlite_polls_in_one_statement(tmp_path,
                                                     seam_restored):
    from zope.pipeline.zodb.storage import open_database

    from tests.functional.inner import sqlite_config
    seam.install()
    config = sqlite_config(tmp_path)
    db, other = open_database(config), open_database(config)
    poll = shared_poll_for(db)
    try:
        assert poll.changes() is None       # the first: every object
        reader = seam.reader_of(poll)
        assert isinstance(reader, seam.SqliteReader)
        assert not reader.connection.in_transaction     # no snapshot held
        manager = transaction.TransactionManager(explicit=True)
        connection = other.open(transaction_manager=manager)
        manager.begin()
        connection.root()['a'] = 1
        manager.commit()
        oid = connection.root()._p_oid
        connection.close()
        assert poll.changes() == {oid}
        assert poll.changes() == frozenset()
        assert not reader.connection.in_transaction
    finally:
        poll.close()
        db.close()
        other.close()
    assert reader.connection is None


def test_other_storages_poll_the_stock_way(seam_restored):
    class Poll:
        db = types.SimpleNamespace(storage=object())

        def __init__(self):
            self.asked = 0

    stock = stock_methods()['changes']
    seam.install()
    poll = Poll()
    assert seam.reader_of(poll) is None
    # the stock method is called with the poll
    seam._saved['changes'] = lambda poll: 'stock'
    try:
        assert seam.changes(poll) == 'stock'
    finally:
        seam._saved['changes'] = stock
