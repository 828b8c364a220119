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
"""

import logging

from relstorage.config import MySQLAdapterFactory
from ZConfig import ConfigurationError

__all__ = (
    'MySQLAdapterWithTimeouts',
    'without_timeouts',
)

logger = logging.getLogger(__name__)

#: The keys this section adds to RelStorage's ``<mysql>``.
TIMEOUT_KEYS = ('read_timeout', 'write_timeout')


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
        return MySQLAdapter(options=options, **params)

    def connect_params(self):
        """mysqlclient's ``connect()`` arguments: every key of the section
        that has a value but the driver's name; a 0 timeout is none."""
        params = {}
        for key in self.config.getSectionAttributes():
            value = getattr(self.config, key)
            if key == 'driver' or value is None:
                continue
            if key in TIMEOUT_KEYS and not value:
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
