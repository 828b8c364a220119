"""RelStorage's invalidation poll in one statement, for the response
cache's shared poll on MySQL.

The response cache answers a hit only after a poll of the storage that
began after the request arrived (``zodb.responsecache.SharedPoll``).
Its stock ``changes()`` asks the poll's storage instance: RelStorage's
``poll_invalidations`` rolls the instance's load connection back and
asks for the objects changed since the last poll, and ``sync()`` rolls
it back again so that an idle process holds no snapshot.  On MySQL that
is three round trips per poll, and a hit's largest cost after the
application's own steps.

``install()`` replaces ``SharedPoll.changes`` (and ``close``) for a
RelStorage on MySQL: RelStorage's own poll query (its adapter's
``poller.poll_invalidations``, the query and rules its load connections
poll with) on a connection of the poll's own, opened as RelStorage opens
load connections (``connmanager.open_for_load``: the same server,
replica selector, isolation and hooks, ``restart_load`` before each
poll) and put in autocommit: each poll is one statement that reads the
latest committed state and holds no snapshot after it.  The transaction
id polled last is the poll's own, kept across a lost connection, so a
poll after a reconnect still reports what changed meanwhile.  Other
storages (RelStorage on SQLite, where a poll costs no round trip) go the
stock way.

It reads RelStorage's private ``_adapter`` and drives its adapter's
connection manager and poller (documented interfaces of
``relstorage.adapters.interfaces``, ``IConnectionManager`` and
``IPoller``, but reached only through that attribute).

Measured (issue 46, the peers' page with its response cache on, served
by mod_wsgi-express 2x1 on MariaDB, every request a hit; ``python -m
benchmarks --peers --peer-apps ceiling,pipeline-cached,
pipeline-cached@CHECKOUT --storages mysql``, one run, medians of 3
interleaved rounds): 2,618 -> 3,051 requests per second at ``-c 8``
(+17 %), 1,282 -> 1,434 at ``-c 1`` (+12 %) (``GAIN``).

What would retire it: a RelStorage method that returns the objects
changed since a transaction id without restarting a load connection's
snapshot (``poll_invalidations`` asked by a caller that holds none),
or a storage instance whose load connection can poll in autocommit.
"""

from ZODB.utils import p64

from zope.pipeline.zodb.responsecache import SharedPoll

#: The measured gain: requests per second of the cached peers' page on
#: MariaDB, mod_wsgi 2x1, ``-c 8`` and ``-c 1``, without and with this
#: module.
GAIN = {'-c 8': (2618, 3051), '-c 1': (1282, 1434)}

#: The name of RelStorage's MySQL adapter class.
MYSQL_ADAPTER = 'MySQLAdapter'

#: SharedPoll's own methods while installed.
_saved = {}


class Reader:
    """The connection a SharedPoll polls on, and the transaction id it
    polled last (None before its first poll)."""

    __slots__ = ('adapter', 'connection', 'cursor', 'tid')

    def __init__(self, adapter):
        self.adapter = adapter
        self.connection = self.cursor = None
        self.tid = None

    def changes(self):
        """The oids changed since the last poll (None: every object)."""
        connmanager = self.adapter.connmanager
        if self.connection is None:
            connection, cursor = connmanager.open_for_load()
            connection.autocommit(True)
            self.connection, self.cursor = connection, cursor
        try:
            # the replica checks and hooks of a load connection's restart
            connmanager.restart_load(self.connection, self.cursor,
                                     needs_rollback=False)
            rows, tid = self.adapter.poller.poll_invalidations(
                self.connection, self.cursor, self.tid)
            if rows is not None:
                rows = list(rows)
        except BaseException:
            self.close()
            raise
        self.tid = tid
        if rows is None:
            return None
        return frozenset(p64(oid) for oid, _tid in rows)

    def close(self):
        if self.connection is not None:
            self.adapter.connmanager.close(self.connection, self.cursor)
        self.connection = self.cursor = None


def reader_of(poll):
    """The poll's Reader, made at its first poll; None when its storage
    is not a RelStorage on MySQL."""
    reader = poll.__dict__.get('_relstorage_reader', False)
    if reader is False:
        adapter = getattr(poll.db.storage, '_adapter', None)
        reader = (Reader(adapter) if type(adapter).__name__ == MYSQL_ADAPTER
                  else None)
        poll.__dict__['_relstorage_reader'] = reader
    return reader


def changes(self):
    """``SharedPoll.changes``: one statement on MySQL."""
    reader = reader_of(self)
    if reader is None:
        return _saved['changes'](self)
    return reader.changes()


def close(self):
    """``SharedPoll.close``: the reader's connection closed too."""
    reader = self.__dict__.get('_relstorage_reader')
    if reader:
        reader.close()
    _saved['close'](self)


def install():
    """Poll in one statement (nothing when installed)."""
    if _saved:
        return
    for name, value in (('changes', changes), ('close', close)):
        _saved[name] = vars(SharedPoll)[name]
        setattr(SharedPoll, name, value)


def uninstall():
    """Put SharedPoll's own methods back."""
    for name in list(_saved):
        setattr(SharedPoll, name, _saved.pop(name))
