"""Failed logins counted per key (a client address, a login) over a sliding
window: after ``limit`` failures in ``window`` seconds a key is refused
until the oldest of them is ``window`` seconds old.

The authenticate stage keeps one store per publisher.  ``FailedLogins``
keeps the counts in the memory of one process; ``SharedFailedLogins``
keeps them in a SQLite file in a private directory, so that every
process of a server that uses that directory (the mod_wsgi daemons of
every process group) counts the same failures: the limits hold for the
whole site.  What is counted is bounded: at most ``limit`` times per key,
and at most ``max_keys`` keys in memory (the least recently failed are
forgotten first) or ``max_rows`` failures in the file (the oldest go),
so a client sending a new login every time cannot grow it.
"""

import collections
import logging
import math
import os
import sqlite3
import threading
import time

from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import private_directory

logger = logging.getLogger('zope.pipeline.security.failedlogins')

#: How many keys are remembered at most (the least recently failed go).
MAX_KEYS = 10000
#: How many failures a shared store keeps at most (the oldest go).
MAX_ROWS = 100000
#: The file of a shared store, in its directory.
STORE_FILE = 'failed-logins.sqlite'
#: Milliseconds a process waits for another's write to the shared store.
BUSY_TIMEOUT = 2000
#: Seconds a process counts in memory only after the shared store failed,
#: before it tries the file again.
RETRY_INTERVAL = 10


class FailedLogins:
    """The times of the last failures of each key; thread-safe."""

    def __init__(self, window, max_keys=MAX_KEYS, clock=time.monotonic):
        self.window = window
        self.max_keys = max_keys
        self.clock = clock
        self._failures = collections.OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, key, limit):
        """Seconds (at least 1) until ``key`` may try again, or 0 when it
        has failed fewer than ``limit`` times in the window (``limit`` 0:
        never refused)."""
        if not limit:
            return 0
        with self._lock:
            times = self._failures.get(key)
            if times is None or len(times) < limit:
                return 0
            left = times[-limit] + self.window - self.clock()
        return math.ceil(left) if left > 0 else 0

    def fail(self, key, limit):
        """Count a failure of ``key`` (keeping its last ``limit``)."""
        if not limit:
            return
        with self._lock:
            times = self._failures.pop(key, None)
            if times is None or times.maxlen != limit:
                times = collections.deque(times or (), maxlen=limit)
            times.append(self.clock())
            self._failures[key] = times
            self._forget_old()

    def reset(self, key):
        """Forget the failures of ``key`` (a successful login)."""
        with self._lock:
            self._failures.pop(key, None)

    def _forget_old(self):
        """Drop the least recently failed keys beyond ``max_keys``, and
        the first whose last failure left the window."""
        while len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)
        oldest = next(iter(self._failures))
        if self._failures[oldest][-1] + self.window <= self.clock():
            del self._failures[oldest]

    def __len__(self):
        return len(self._failures)


SCHEMA = (
    'CREATE TABLE IF NOT EXISTS failures (key TEXT NOT NULL, '
    'time REAL NOT NULL)',
    'CREATE INDEX IF NOT EXISTS failures_by_key ON failures (key, time)',
    'CREATE INDEX IF NOT EXISTS failures_by_time ON failures (time)',
)


def key_text(key):
    """A key (a tuple of texts, or a text) as one text."""
    return '\0'.join(key) if isinstance(key, tuple) else key


class SharedFailedLogins:
    """``FailedLogins``'s counts, kept in ``directory`` for every process
    that uses it (a SQLite file, in WAL mode: reads do not wait for
    writes); thread-safe.

    The directory is made (mode 0700) or checked to be private when the
    store is first used, in the process that serves: a process that only
    loads the site (``serve`` run as root, before the daemons start)
    creates nothing.  Times are the wall clock (shared by the processes
    and kept across restarts); a key is never refused longer than the
    window, should the clock go back.  Processes that open a new file
    at once wait for each other (``BUSY_TIMEOUT``).  When the file cannot
    be used, the error is logged and this process counts in its memory
    too, and tries the file again ``RETRY_INTERVAL`` seconds later: a
    key is refused while either count refuses it.
    """

    def __init__(self, directory, window, max_rows=MAX_ROWS,
                 clock=time.time):
        self.directory = directory
        self.window = window
        self.max_rows = max_rows
        self.clock = clock
        self._lock = threading.Lock()
        self._connection = None
        self._pid = None
        #: The counts in memory, made when the file first failed.
        self._fallback = None
        #: ``time.monotonic()`` before which the file is not tried again.
        self._retry_at = None

    def retry_after(self, key, limit):
        """Seconds (at least 1) until ``key`` may try again, or 0 when it
        has failed fewer than ``limit`` times in the window (``limit`` 0:
        never refused)."""
        if not limit:
            return 0
        found = self._query(
            'SELECT time FROM failures WHERE key = ? ORDER BY time DESC '
            'LIMIT 1 OFFSET ?', (key_text(key), limit - 1))
        in_memory = (self._fallback.retry_after(key, limit)
                     if self._fallback is not None else 0)
        if not found:
            return in_memory
        left = min(found[0][0] + self.window - self.clock(), self.window)
        return max(math.ceil(left) if left > 0 else 0, in_memory)

    def fail(self, key, limit):
        """Count a failure of ``key`` (keeping its last ``limit``), and
        forget the failures that left the window and the oldest beyond
        ``max_rows``."""
        if not limit:
            return
        now = self.clock()
        text = key_text(key)
        if not self._write(
                ('INSERT INTO failures (key, time) VALUES (?, ?)',
                 (text, now)),
                ('DELETE FROM failures WHERE key = ? AND rowid NOT IN '
                 '(SELECT rowid FROM failures WHERE key = ? ORDER BY time '
                 'DESC LIMIT ?)', (text, text, limit)),
                ('DELETE FROM failures WHERE time <= ?',
                 (now - self.window,)),
                ('DELETE FROM failures WHERE rowid IN (SELECT rowid FROM '
                 'failures ORDER BY time DESC LIMIT -1 OFFSET ?)',
                 (self.max_rows,))):
            self._fallback.fail(key, limit)

    def reset(self, key):
        """Forget the failures of ``key`` (a successful login); writes
        only when it has some."""
        text = key_text(key)
        found = self._query('SELECT 1 FROM failures WHERE key = ? LIMIT 1',
                            (text,))
        if found:
            self._write(('DELETE FROM failures WHERE key = ?', (text,)))
        if self._fallback is not None:
            self._fallback.reset(key)

    def __len__(self):
        """How many keys have failures."""
        found = self._query('SELECT COUNT(DISTINCT key) FROM failures', ())
        return len(self._fallback) if found is None else found[0][0]

    def _query(self, statement, values):
        """The rows of a query, or None when the file cannot be used (this
        process counts in its memory then)."""
        if self._file_usable():
            try:
                with self._lock:
                    return self._connect().execute(statement,
                                                   values).fetchall()
            except (sqlite3.Error, OSError, UnsafePathError) as error:
                self._fall_back(error)
        return None

    def _write(self, *statements):
        """Run ``statements`` (statement, values) in one transaction;
        False when the file cannot be used."""
        if self._file_usable():
            try:
                with self._lock:
                    connection = self._connect()
                    with connection:
                        for statement, values in statements:
                            connection.execute(statement, values)
                return True
            except (sqlite3.Error, OSError, UnsafePathError) as error:
                self._fall_back(error)
        return False

    def _connect(self):
        """This process's connection (a forked process makes its own)."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        directory = private_directory(self.directory, parents=True)
        connection = sqlite3.connect(
            os.path.join(directory, STORE_FILE), timeout=BUSY_TIMEOUT / 1000,
            isolation_level=None, check_same_thread=False)
        try:
            set_up(connection)
        except sqlite3.Error:
            connection.close()
            raise
        connection.isolation_level = 'IMMEDIATE'  # a write waits
        self._connection, self._pid = connection, os.getpid()
        return connection

    def _file_usable(self):
        """False while this process waits to try the file again."""
        retry_at = self._retry_at
        return retry_at is None or time.monotonic() >= retry_at

    def _fall_back(self, error):
        """Count in memory (too) for ``RETRY_INTERVAL`` seconds; log the
        first failure after the file was last usable."""
        with self._lock:
            if self._retry_at is not None and not self._file_usable():
                return  # another thread saw it too
            if self._retry_at is None:
                logger.error(
                    'Failed logins are counted in this process only: the '
                    'shared store in %s cannot be used (%s); tried again '
                    'every %d seconds.  Check that directory '
                    '(authenticate.state_dir).', self.directory, error,
                    RETRY_INTERVAL)
            if self._fallback is None:
                self._fallback = FailedLogins(self.window)
            self._retry_at = time.monotonic() + RETRY_INTERVAL
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def set_up(connection):
    """Put a store's file in WAL mode and make its table.  Processes
    that open a new file at once take turns for up to ``BUSY_TIMEOUT``:
    SQLite answers a change of journal mode that another connection holds
    up with "database is locked" at once, without its busy handler."""
    deadline = time.monotonic() + BUSY_TIMEOUT / 1000
    while True:
        try:
            if connection.execute('PRAGMA journal_mode').fetchone()[0] \
                    != 'wal':
                connection.execute('PRAGMA journal_mode=WAL')
            break
        except sqlite3.OperationalError as error:
            if ('locked' not in str(error)
                    or time.monotonic() >= deadline):
                raise
            time.sleep(0.01)
    connection.execute('PRAGMA synchronous=NORMAL')
    for statement in SCHEMA:
        connection.execute(statement)
