"""The ``<mysql-with-timeouts>`` ZConfig section: RelStorage's MySQL adapter
with a read and a write timeout on every connection it opens.

RelStorage's own ``<mysql>`` section passes its keys to mysqlclient's
``connect()`` but has no key for ``read_timeout`` or ``write_timeout``, so
its pooled connections wait for ever for a server that accepted the
connection and then stopped answering (a hung or stopped ``mariadbd``, a
dead network path): every request in flight hangs until the server comes
back, and so does the commit lock one of them holds.  This section is
``<mysql>`` with both keys (``component.xml``; ``%import zope.pipeline``
after ``%import relstorage``).  With them a query waiting longer than
``read_timeout`` fails with mysqlclient's 'Lost connection to server
during query' (2013): libmariadb closes the socket, RelStorage drops the
connection (its next use reconnects), the request is answered 503 with
Retry-After (``errors.is_unavailable``), and the server, once it runs
again, rolls back what that session had not committed, releasing its
locks.

The longest wait a request legitimately has is the commit lock (and the
row locks of ``readCurrent``), bounded by the ``<relstorage>`` section's
``commit-lock-timeout``: a read timeout at or below it would cut off a
commit that is only queueing, as if the server hung, so such a
configuration is refused when the storage opens.  Maintenance that runs
long statements (``zope-pipeline pack``) opens the database with
:func:`without_timeouts`.

With ``replica_catch_up`` (seconds, 0 by default: off), each load
connection RelStorage opens on a replica (a server whose ``SHOW SLAVE
STATUS`` has a row: the fail-over of ``replica-conf``) waits, before each
transaction, for that replica to apply every transaction it has received
from its primary (MariaDB's ``MASTER_GTID_WAIT`` of its ``Gtid_IO_Pos``;
while the primary is down, nothing more arrives; once it is back, other
processes may commit there already), or fails
(``errors.ReplicaBehind``: 503, the next request tries again).  With the
primary's semi-synchronous replication (``rpl_semi_sync_master_wait_point
= AFTER_SYNC``: a commit becomes visible only once the replica has
received it), the replica then holds every state a client can have seen,
and reads do not go back in time at a fail-over.  The user needs the
``SLAVE MONITOR`` privilege (``SHOW SLAVE STATUS``).
"""

import logging
import weakref

from relstorage.config import MySQLAdapterFactory
from ZConfig import ConfigurationError

from zope.pipeline.http.errors import ReplicaBehind

__all__ = (
    'MySQLAdapterWithTimeouts',
    'without_timeouts',
)

logger = logging.getLogger(__name__)

#: The keys this section adds to RelStorage's ``<mysql>``.
TIMEOUT_KEYS = ('read_timeout', 'write_timeout')
#: The key of the wait for a replica to catch up (not mysqlclient's).
CATCH_UP_KEY = 'replica_catch_up'


def timeout_seconds(value):
    """ZConfig datatype: whole seconds, 0 for no timeout."""
    seconds = int(value)
    if seconds < 0:
        raise ValueError('a timeout is 0 (none) or a number of seconds, '
                         'not %r' % value)
    return seconds


class MySQLAdapterWithTimeouts(MySQLAdapterFactory):
    """RelStorage's MySQL adapter factory, giving mysqlclient the section's
    ``read_timeout`` and ``write_timeout`` (unless :func:`without_timeouts`
    turned them off for this open)."""

    timeouts_enabled = True

    def create(self, options):
        # late: the MySQL adapter (and mysqlclient, the optional mysql
        # extra) load only when a MySQL storage opens
        from relstorage.adapters.mysql import MySQLAdapter
        params = self.connect_params()
        if self.timeouts_enabled:
            check_commit_lock_timeout(self.config.read_timeout,
                                      options.commit_lock_timeout)
        else:
            for key in TIMEOUT_KEYS:
                params.pop(key, None)
        catch_up = params.pop(CATCH_UP_KEY, 0)
        adapter = MySQLAdapter(options=options, **params)
        if catch_up:
            check_catch_up(catch_up, params.get('read_timeout', 0))
            adapter.connmanager.add_on_load_opened(
                ReplicaCatchUp(catch_up))
        return adapter

    def connect_params(self):
        """mysqlclient's ``connect()`` arguments: every key of the section
        that has a value but the driver's name; a 0 timeout is none."""
        params = {}
        for key in self.config.getSectionAttributes():
            value = getattr(self.config, key)
            if key == 'driver' or value is None:
                continue
            if key in TIMEOUT_KEYS + (CATCH_UP_KEY,) and not value:
                continue
            params[key] = value
        return params


def check_commit_lock_timeout(read_timeout, commit_lock_timeout):
    """Refuse a read timeout that would cut off a commit waiting for the
    commit lock (``commit-lock-timeout``, RelStorage's default 30 s)."""
    if read_timeout and read_timeout <= commit_lock_timeout:
        raise ConfigurationError(
            'read_timeout %s of the <mysql-with-timeouts> section must be '
            'longer than commit-lock-timeout %s of the <relstorage> section '
            '(the longest a commit waits for the lock; RelStorage\'s '
            'default is 30): lower commit-lock-timeout (e.g. 2) or raise '
            'read_timeout' % (read_timeout, commit_lock_timeout))


def check_catch_up(catch_up, read_timeout):
    """Refuse a wait for the replica the read timeout would cut off."""
    if read_timeout and catch_up >= read_timeout:
        raise ConfigurationError(
            'replica_catch_up %s of the <mysql-with-timeouts> section must '
            'be shorter than its read_timeout %s (the wait is one query)'
            % (catch_up, read_timeout))


class ReplicaCatchUp:
    """RelStorage's hook for a load connection (``cursor``) just opened,
    and (``restart``) at each transaction's start on it: on a replica,
    wait at most ``seconds`` for it to apply what it received from its
    primary.  Whether a connection is on a replica is asked once, when
    it opens: a connection on the primary costs one query in its life."""

    def __init__(self, seconds):
        self.seconds = seconds
        #: The cursors of the load connections on a replica.
        self.on_replica = weakref.WeakSet()

    def __call__(self, cursor, restart=False):
        if restart and cursor not in self.on_replica:
            return
        received = received_position(cursor)
        if received is None:
            return
        self.on_replica.add(cursor)
        if not received:
            return    # a replica that has received nothing
        cursor.execute('SELECT MASTER_GTID_WAIT(%s, %s)',
                       (received, self.seconds))
        (waited,) = cursor.fetchone()
        if waited != 0:
            raise ReplicaBehind(
                'The replica has not applied within %s s the transactions '
                'it received from its primary (up to %s): not used.'
                % (self.seconds, received))


def received_position(cursor):
    """The GTID position a replica has received from its primary ('' for
    none yet), or None when the server is not a replica."""
    cursor.execute('SHOW SLAVE STATUS')
    row = cursor.fetchone()
    if row is None:
        return None
    names = [column[0] for column in cursor.description]
    return dict(zip(names, row)).get('Gtid_IO_Pos') or ''


def without_timeouts(config):
    """Turn the read and write timeouts off in every
    ``<mysql-with-timeouts>`` section of a loaded ZConfig database
    configuration (``storage.load_database_config``), for maintenance that
    legitimately runs long statements (a pack); return how many sections
    there were."""
    found = 0
    for factory in section_factories(config):
        if isinstance(factory, MySQLAdapterWithTimeouts):
            factory.timeouts_enabled = False
            found += 1
    return found


def section_factories(config, depth=8):
    """Every section value (a datatype's result) below ``config``: the
    storages of each database, their adapters, wrapped storages."""
    if depth <= 0:
        return
    section = getattr(config, 'config', config)
    attributes = getattr(section, 'getSectionAttributes', None)
    if attributes is None:
        return
    for name in attributes():
        values = getattr(section, name, None)
        if not isinstance(values, list):
            values = [values]
        for value in values:
            if hasattr(value, 'config') or hasattr(
                    value, 'getSectionAttributes'):
                yield value
                yield from section_factories(value, depth - 1)


def is_mysql_adapter(adapter):
    """Whether a parsed ZConfig adapter section is RelStorage's MySQL one
    (``<mysql>`` or ``<mysql-with-timeouts>``)."""
    return isinstance(adapter, MySQLAdapterFactory)
