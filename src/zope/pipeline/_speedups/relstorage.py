"""RelStorage's invalidation poll in one statement, for the response
cache's shared poll.

The response cache answers a hit only after a poll of the storage that
began after the request arrived (``zodb.responsecache.SharedPoll``).
Its stock ``changes()`` asks the poll's storage instance: RelStorage's
``poll_invalidations`` restarts the instance's load connection (a
rollback; on SQLite also a ``BEGIN``) and asks for the objects changed
since the last poll, and ``sync()`` rolls it back again so that an idle
process holds no snapshot.  On MySQL that is three round trips per poll;
in process, half of a hit on SQLite.

``install()`` replaces ``SharedPoll.changes`` (and ``close``) for a
RelStorage on MySQL or SQLite: RelStorage's own poll query (its
adapter's ``poller.poll_invalidations``, the query and rules its load
connections poll with) on a connection of the poll's own, in
autocommit, so that each poll is one statement that reads the latest
committed state and holds no snapshot after it.  On MySQL the
connection is opened as RelStorage opens load connections
(``connmanager.open_for_load``: the same server, replica selector and
isolation) and ``restart_load``'s replica checks and hooks run before
each poll (``Reader``); on SQLite it is a read-only connection in
SQLite's autocommit (``SqliteReader``).  The transaction id polled last
is the poll's own, kept across a lost connection, so a poll after a
reconnect still reports what changed meanwhile.  Other RelStorage
adapters go the stock way.

It reads RelStorage's private ``_adapter`` and drives its adapter's
connection manager and poller (documented interfaces of
``relstorage.adapters.interfaces``, ``IConnectionManager`` and
``IPoller``, but reached only through that attribute).

Measured (issue 46, the peers' page with its response cache on, every
request a hit, mod_wsgi-express 2x1, medians of 5 interleaved rounds of
one run, the code without this module served beside it with ``python
-m benchmarks --peers --peer-apps
ceiling,pipeline-cached,pipeline-cached@CHECKOUT``): MariaDB 2,534 ->
3,044 requests per second at ``-c 8`` (+20 %), 1,312 -> 1,440 at ``-c 1``
(+10 %); SQLite 3,642 -> 4,227 (+16 %) and 1,707 -> 1,942 (+14 %)
(``GAIN``).

What would retire it: a RelStorage method that returns the objects
changed since a transaction id without restarting a load connection's
snapshot (``poll_invalidations`` asked by a caller that holds none),
or a storage instance whose load connection can poll in autocommit.

**Sent ahead** (``SharedPoll.sender``, MySQL only): the outer stage
``response_cache_poll`` sends a request's poll as the request comes in
and ``response_cache_hit`` reads the answer, so that MySQL runs the
query while the outer stages run (``SharedPoll.send``).  ``Reader.send``
sends the first statement RelStorage's poll would execute, recorded by
running ``poll_invalidations`` on a cursor that stops there
(``Recorder``, once per transaction id), with mysqlclient's
``send_query``; ``Reader.receive`` reads its answer
(``read_query_result``, ``store_result``) and runs
``poll_invalidations`` again on a cursor that answers that statement
with the rows read and sends any other to the server (``Answered``),
so RelStorage's rules (stale and backwards transaction ids) decide as
they do for a poll made at once.  SQLite answers in process: nothing
to overlap, nothing sent.  Measured side by side as above, medians of 7
interleaved rounds: MariaDB 1,705 -> 1,870 requests per second at
``-c 1`` (+10 %), 3,601 -> 3,614 at ``-c 8`` (the same: under load a
poll is shared by the requests queued behind it) (``SENT_AHEAD_GAIN``).
What would retire it: an ``IPoller`` method in two halves, one that
sends the poll's query and one that reads its answer and applies the
poller's rules.
"""

import functools

from ZODB.utils import p64

from zope.pipeline.zodb.responsecache import SharedPoll

#: The measured gain: requests per second of the cached peers' page,
#: mod_wsgi 2x1, per storage and ``-c``, without and with this module.
GAIN = {('mysql', '-c 8'): (2534, 3044), ('mysql', '-c 1'): (1312, 1440),
        ('sqlite', '-c 8'): (3642, 4227), ('sqlite', '-c 1'): (1707, 1942)}

#: The measured gain of sending the poll ahead: requests per second of
#: the cached peers' page, mod_wsgi 2x1, MariaDB, before and after.
SENT_AHEAD_GAIN = {('mysql', '-c 8'): (3601, 3614),
                   ('mysql', '-c 1'): (1705, 1870)}

#: SharedPoll's own methods while installed.
_saved = {}


class Reader:
    """The connection a SharedPoll polls on (MySQL), and the transaction
    id it polled last (None before its first poll)."""

    __slots__ = ('adapter', 'connection', 'cursor', 'tid', 'recorded')

    def __init__(self, adapter):
        self.adapter = adapter
        self.connection = self.cursor = None
        self.tid = None
        #: (tid, (statement, params)) of the last ``statement()``.
        self.recorded = None

    def open(self):
        """A load connection (the same server, replica selector and
        isolation), in autocommit."""
        connection, cursor = self.adapter.connmanager.open_for_load()
        connection.autocommit(True)
        return connection, cursor

    def before_poll(self):
        """The replica checks and hooks of a load connection's restart
        (no rollback: nothing is open)."""
        self.adapter.connmanager.restart_load(self.connection, self.cursor,
                                              needs_rollback=False)

    def changes(self):
        """The oids changed since the last poll (None: every object)."""
        if self.connection is None:
            self.connection, self.cursor = self.open()
        try:
            self.before_poll()
            return self.polled(self.cursor)
        except BaseException:
            self.close()
            raise

    def polled(self, cursor):
        """RelStorage's poll on ``cursor``: the oids changed since the
        last poll (None: every object); the transaction id it polled is
        kept."""
        rows, tid = self.adapter.poller.poll_invalidations(
            self.connection, cursor, self.tid)
        oids = (None if rows is None else
                frozenset(p64(oid) for oid, _tid in rows))
        self.tid = tid
        return oids

    def sender(self):
        """``SharedPoll.sender``: ``send`` once this reader polled (its
        first poll, which reads the newest transaction id, is made the
        stock way); None on SQLite."""
        if self.connection is None or self.tid is None:
            return None
        return self.send

    def send(self):
        """Send the first statement of RelStorage's poll (``statement``)
        without waiting for its answer; return the callable that reads
        the answer and finishes the poll (``receive``)."""
        connection = self.connection
        try:
            self.before_poll()
            statement, params = self.statement()
            connection.send_query(self.cursor.mogrify(
                statement, params).encode(connection.encoding))
        except BaseException:
            self.close()
            raise
        return functools.partial(self.receive, statement, params)

    def statement(self):
        """The first statement RelStorage's poll executes after the
        transaction id polled last, and its parameters: recorded by
        running the poll on a cursor that stops at it (``Recorder``),
        once per transaction id."""
        recorded = self.recorded
        if recorded is not None and recorded[0] == self.tid:
            return recorded[1]
        try:
            self.adapter.poller.poll_invalidations(
                self.connection, Recorder(self.connection), self.tid)
        except Recorded as stopped:
            self.recorded = (self.tid, stopped.args)
            return stopped.args
        raise RuntimeError('RelStorage polled without a statement')

    def receive(self, statement, params):
        """Read the answer of the statement ``send`` sent, and finish the
        poll with RelStorage's own rules (``Answered``)."""
        connection = self.connection
        try:
            connection.read_query_result()
            result = connection.store_result()
            rows = result.fetch_row(0) if result is not None else ()
            return self.polled(Answered(self.cursor, statement, params,
                                        rows))
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.connection is not None:
            self.adapter.connmanager.close(self.connection, self.cursor)
        self.connection = self.cursor = None


class SqliteReader(Reader):
    """The connection a SharedPoll polls on (SQLite): read-only, in
    SQLite's autocommit (each statement its own read transaction)."""

    __slots__ = ()

    def open(self):
        return self.adapter.connmanager.open(isolation=None, read_only=True)

    def before_poll(self):
        """Nothing: SQLite has no replicas, and the load connection's
        restart would begin a transaction."""

    def sender(self):
        """None: SQLite answers in process, there is nothing to overlap."""
        return None


class Recorded(Exception):
    """What ``Recorder`` was asked to execute: (statement, params)."""


class Recorder:
    """A cursor that stops RelStorage's poll at its first statement
    (``Recorded``)."""

    def __init__(self, connection):
        self.connection = connection

    def execute(self, statement, params=None):
        raise Recorded(statement, params)


class Answered:
    """The poll's cursor, the answer of its first statement already read:
    executing that statement again takes the answer (its rows, for the
    next ``fetchall``); any other statement goes to the cursor."""

    def __init__(self, cursor, statement, params, rows):
        self.cursor = cursor
        self.connection = cursor.connection
        self.sent = (statement, params)
        self.rows = rows
        self.pending = None

    def execute(self, statement, params=None):
        if self.rows is not None and (statement, params) == self.sent:
            self.pending, self.rows = self.rows, None
            return
        self.pending = None
        self.cursor.execute(statement, params)

    def fetchall(self):
        if self.pending is not None:
            rows, self.pending = self.pending, None
            return rows
        return self.cursor.fetchall()


#: RelStorage's adapter class names -> the reader that polls them.
READERS = {'MySQLAdapter': Reader, 'Sqlite3Adapter': SqliteReader}


def reader_of(poll):
    """The poll's Reader, made at its first poll; None when its storage
    is not a RelStorage on MySQL or SQLite."""
    reader = poll.__dict__.get('_relstorage_reader', False)
    if reader is False:
        adapter = getattr(poll.db.storage, '_adapter', None)
        kind = READERS.get(type(adapter).__name__)
        reader = kind(adapter) if kind is not None else None
        poll.__dict__['_relstorage_reader'] = reader
    return reader


def changes(self):
    """``SharedPoll.changes``: one statement on MySQL."""
    reader = reader_of(self)
    if reader is None:
        return _saved['changes'](self)
    return reader.changes()


def sender(self):
    """``SharedPoll.sender``: the reader's (MySQL: ``Reader.send``)."""
    reader = reader_of(self)
    if reader is None:
        return _saved['sender'](self)
    return reader.sender()


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
    for name, value in (('changes', changes), ('sender', sender),
                        ('close', close)):
        _saved[name] = vars(SharedPoll)[name]
        setattr(SharedPoll, name, value)


def uninstall():
    """Put SharedPoll's own methods back."""
    for name in list(_saved):
        setattr(SharedPoll, name, _saved.pop(name))
