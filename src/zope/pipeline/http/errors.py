"""Exceptions the stages raise, which errors are worth a retry, and which
say that the database cannot serve for now (unreachable, or its
storage full)."""

import errno
import logging
import sqlite3
import sys

from transaction.interfaces import TransientError
from ZODB.utils import oid_repr
from zope.interface import implementer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IBadRequest
from zope.publisher.interfaces import Retry

from zope.pipeline.http.logtext import client_text

try:  # pragma: no cover - RelStorage is a dependency, but stay importable
    from relstorage.adapters.interfaces import ReplicaClosedException
    from relstorage.adapters.interfaces import UnableToAcquireCommitLockError
    RELSTORAGE_RETRIABLE = (ReplicaClosedException,
                            UnableToAcquireCommitLockError)
except ImportError:  # pragma: no cover
    RELSTORAGE_RETRIABLE = ()

#: Errors after which a new attempt can succeed and nothing was committed:
#: conflicts and every other ``TransientError``, zope.publisher's ``Retry``,
#: RelStorage's closed replica (it switched replicas at a transaction
#: boundary) and commit lock timeout (which RelStorage documents as worth
#: a retry although it is not a ``TransientError``).
TRANSIENT = (TransientError, Retry) + RELSTORAGE_RETRIABLE


def is_transient(error):
    """Return whether a new attempt of the request can succeed.

    Not when the database connection was lost (``is_unavailable``), even
    behind a transient error: RelStorage reports a connection lost while
    its MySQL procedure takes the commit lock, moves the rows *and
    commits* as ``UnableToAcquireCommitLockError`` (caused by the lost
    connection), though the commit may have happened; a new attempt could
    store the same write twice.
    """
    return isinstance(error, TRANSIENT) and not is_unavailable(error)


try:  # pragma: no cover - mysqlclient is the `mysql` extra
    import MySQLdb
    from MySQLdb.constants import CR
    from MySQLdb.constants import ER
    MYSQL_OPERATIONAL = (MySQLdb.OperationalError,)
    MYSQL_CLOSED = (MySQLdb.InterfaceError,)
except ImportError:  # pragma: no cover
    MYSQL_OPERATIONAL = MYSQL_CLOSED = ()
    UNREACHABLE_CODES = frozenset()
else:
    #: MySQL/MariaDB error codes that say the server cannot be reached or
    #: the connection to it was lost (client codes 2xxx; server codes of a
    #: shutdown, a full server, a network error, a statement or connection
    #: killed by the server).  Other ``OperationalError``s (bad SQL, a
    #: deadlock, a full disk) are not outages.
    UNREACHABLE_CODES = frozenset((
        CR.CONNECTION_ERROR, CR.CONN_HOST_ERROR, CR.UNKNOWN_HOST,
        CR.SERVER_GONE_ERROR, CR.SERVER_LOST, CR.SERVER_LOST_EXTENDED,
        ER.SERVER_SHUTDOWN, ER.CON_COUNT_ERROR, ER.NET_READ_ERROR,
        ER.NET_READ_INTERRUPTED, ER.NET_ERROR_ON_WRITE,
        ER.NET_WRITE_INTERRUPTED, ER.QUERY_INTERRUPTED,
        1927,  # MariaDB's ER_CONNECTION_KILLED
    ))


#: How far down the ``__cause__`` chain of an error ``is_unavailable``
#: looks.
CAUSES_LOOKED_AT = 5


def causes(error):
    """``error`` and the errors it was raised from (``raise ... from``), at
    most ``CAUSES_LOOKED_AT`` of them."""
    for _ in range(CAUSES_LOOKED_AT):
        if error is None:
            return
        yield error
        error = error.__cause__


class ReplicaBehind(Exception):
    """A MySQL replica RelStorage failed over to has not applied, within
    the ``<mysql-with-timeouts>`` section's ``replica_catch_up``, what it
    received from its primary (``zope.pipeline.zodb.mysqltimeouts``): it is
    not used, so that no client reads a state older than one it has
    seen; the request is answered 503 and the next one tries again."""


def is_unreachable(error):
    """Return whether ``error`` says the MySQL server cannot be reached:
    it refused or dropped the connection, or did not answer within the
    connection's read or write timeout (mysqlclient's ``OperationalError``
    with one of ``UNREACHABLE_CODES``, or its ``InterfaceError``, raised
    for a connection that is already closed), or ``error`` was raised from
    such an error (``raise ... from``, as RelStorage's commit lock errors
    are)."""
    return any(
        isinstance(cause, MYSQL_CLOSED) or (
            isinstance(cause, MYSQL_OPERATIONAL) and cause.args and
            cause.args[0] in UNREACHABLE_CODES)
        for cause in causes(error))


#: MySQL/MariaDB server errors that say its storage is full: 1114
#: ER_RECORD_FILE_FULL ('The table ... is full': InnoDB found no space
#: for a row, on a full disk or at a tablespace's maximum size) and 1021
#: ER_DISK_FULL.
STORAGE_FULL_CODES = frozenset((1114, 1021))
#: OSError numbers of a full file system: no space left, quota exceeded
#: (blob files, SQLite's files).
STORAGE_FULL_ERRNOS = frozenset(
    number for number in (errno.ENOSPC, getattr(errno, 'EDQUOT', None))
    if number is not None)


#: MySQL/MariaDB server errors of a server that takes no writes: 1290
#: ER_OPTION_PREVENTS_STATEMENT naming ``--read-only`` (MariaDB) and 1836
#: ER_READ_ONLY_MODE (MySQL).  RelStorage with ``replica-conf`` fails over
#: to a read-only replica while the primary refuses connections and goes
#: back after ``replica-timeout``: until then every write is refused there,
#: nothing of it stored.
READ_ONLY_CODES = frozenset((1290, 1836))


def is_read_only(error):
    """Return whether ``error`` (or an error it was raised from) says the
    MySQL server takes no writes (``READ_ONLY_CODES``; a 1290 only for the
    read-only option, not for another option that prevents a statement)."""
    for cause in causes(error):
        if isinstance(cause, MYSQL_OPERATIONAL) and cause.args and \
                cause.args[0] in READ_ONLY_CODES and (
                    cause.args[0] != 1290 or 'read-only' in str(cause)):
            return True
    return False


def is_storage_full(error):
    """Return whether ``error`` (or an error it was raised from) says the
    database's storage is full: MySQL's ``STORAGE_FULL_CODES``, SQLite's
    ``SQLITE_FULL`` ('database or disk is full'), an ``OSError`` of
    ``STORAGE_FULL_ERRNOS`` (blob files)."""
    for cause in causes(error):
        if isinstance(cause, MYSQL_OPERATIONAL) and cause.args and \
                cause.args[0] in STORAGE_FULL_CODES:
            return True
        if isinstance(cause, sqlite3.Error) and getattr(
                cause, 'sqlite_errorcode', 0) & 0xff == sqlite3.SQLITE_FULL:
            return True
        if isinstance(cause, OSError) and \
                cause.errno in STORAGE_FULL_ERRNOS:
            return True
    return False


def is_unavailable(error):
    """Return whether ``error`` says the database cannot serve the request
    for now: its server cannot be reached (``is_unreachable``), its
    storage is full (``is_storage_full``), it takes no writes
    (``is_read_only``: a replica RelStorage failed over to) or it is a
    replica that has not caught up (``ReplicaBehind``).

    Such an error is not transient (a new attempt at once finds the server
    still gone, or the disk still full, and a commit cut off by a lost
    connection may have reached the server, so it must not be repeated):
    it is answered 503 with Retry-After, and logged in one line.
    RelStorage reconnects by itself at the next transaction once the
    server is back; a storage that is full refused the whole transaction.
    """
    return (is_unreachable(error) or is_storage_full(error)
            or is_read_only(error)
            or any(isinstance(cause, ReplicaBehind)
                   for cause in causes(error)))


class CommitOutcomeUnknown(Exception):
    """The database stopped answering while the transaction was being
    voted or finished (the second half of the two-phase commit, where
    RelStorage's MySQL procedure locks, moves the rows and commits): the
    change may have been stored, or not.  Raised ``from`` the database's
    error (``is_unavailable`` still accepts it: never retried)."""


def is_outcome_unknown(error):
    """Return whether ``error`` says a commit was cut off by the
    database (``CommitOutcomeUnknown``)."""
    return any(isinstance(cause, CommitOutcomeUnknown)
               for cause in causes(error))


#: Seconds in the Retry-After header of a 503 (``retry.retry_after``).
DEFAULT_RETRY_AFTER = 1

#: What a client is told when the database cannot be reached.
UNAVAILABLE_MESSAGE = ('The database is unavailable; please try again in a '
                       'moment.')
#: What a client is told when the database's storage is full.
STORAGE_FULL_MESSAGE = ('The database cannot store anything more for now '
                        '(its storage is full); please try again later.')


#: What a client is told when the database stopped answering during the
#: commit of its change (``CommitOutcomeUnknown``): not to send it again
#: blindly.
OUTCOME_UNKNOWN_MESSAGE = (
    'The database is unavailable: it stopped answering while your change '
    'was being saved, so the change may have been saved. Reload the page '
    'to see whether it was before you send it again.')


def unavailable_message(error):
    """The text of the 503 page for an error ``is_unavailable`` accepts."""
    if is_outcome_unknown(error):
        return OUTCOME_UNKNOWN_MESSAGE
    if is_storage_full(error):
        return STORAGE_FULL_MESSAGE
    return UNAVAILABLE_MESSAGE


def unavailable_headers(error, retry_after):
    """The headers of that 503: ``Retry-After``, except after a commit
    the database cut off (its client must look before it sends again)."""
    if is_outcome_unknown(error):
        return []
    return [('Retry-After', str(retry_after))]


def log_unavailable(logger, method, path, error):
    """Log, in one line without a traceback, that a request was answered
    503 because the database cannot be reached or its storage is full."""
    if is_storage_full(error):
        what = 'the database storage is full'
    elif is_read_only(error):
        what = 'the database is read-only'
    else:
        what = 'the database is unavailable'
    logger.error('%s %s: %s (%s); answered 503%s',
                 client_text(method), client_text(path), what,
                 describe_error(error.__cause__ if isinstance(
                     error, CommitOutcomeUnknown) else error),
                 ' (the commit was cut off: the change may be stored)'
                 if is_outcome_unknown(error) else '')


#: How the transaction package's CRITICAL record of a failed second phase
#: of a commit begins.
SECOND_PHASE_FAILED = 'A storage error occurred during the second phase'


class ReportedSecondPhaseFailure(logging.Filter):
    """Drop the transaction package's CRITICAL 'A storage error occurred
    during the second phase of the two-phase commit.  Resources may be in
    an inconsistent state.' when the error being handled is one that
    ``is_unavailable`` accepts: the request is answered 503 and logged in
    one line that names the error (``log_unavailable``).  RelStorage on
    MySQL locks, moves the rows and commits in one procedure in its second
    phase, so every database fault of a commit reaches that record (four
    per request when it was retried), and the only resource is the
    database, which refused or lost the whole transaction.  Any other
    error keeps the record.

    The record is logged while the error is being handled, in the thread
    that commits: ``sys.exc_info()`` is that error."""

    def filter(self, record):
        if record.levelno < logging.CRITICAL or not str(
                record.msg).startswith(SECOND_PHASE_FAILED):
            return True
        return not is_unavailable(sys.exc_info()[1])


REPORTED_SECOND_PHASE_FAILURE = ReportedSecondPhaseFailure()


#: RelStorage's logger of its connections: a lost or refused connection
#: is logged there with its traceback ('Failed to borrow a store
#: connection', 'Reconnect ... failed', 'Disconnected ...') and raised.
RELSTORAGE_CONNECTIONS_LOGGER = 'relstorage.adapters.connections'


class ReportedOutage(logging.Filter):
    """Drop a record that carries an error ``is_unavailable`` accepts: the
    error is raised on to the request, which zope.pipeline answers 503 and
    logs in one line naming it (``log_unavailable``).  Installed on
    ``RELSTORAGE_CONNECTIONS_LOGGER`` (``report_outages_once``): when
    MySQL's max_connections was reached, its records made 4,450 ERROR
    lines for 2,622 503s.  Records of other errors stay."""

    def filter(self, record):
        error = record.exc_info[1] if record.exc_info else None
        return error is None or not is_unavailable(error)


REPORTED_OUTAGE = ReportedOutage()


def report_outages_once():
    """Install ``ReportedOutage`` on RelStorage's connections logger."""
    logger = logging.getLogger(RELSTORAGE_CONNECTIONS_LOGGER)
    if REPORTED_OUTAGE not in logger.filters:
        logger.addFilter(REPORTED_OUTAGE)


def report_second_phase_failures(txn):
    """Install ``ReportedSecondPhaseFailure`` on the logger of ``txn`` (the
    transaction package's ``txn.<thread id>``), once per thread."""
    logger = getattr(txn, 'log', None)
    if logger is not None and \
            REPORTED_SECOND_PHASE_FAILURE not in logger.filters:
        logger.addFilter(REPORTED_SECOND_PHASE_FAILURE)


def describe_error(error):
    """Say in one line what failed: for a conflict, the oid and class.

    ``'ConflictError: oid 0x2a, class app.Counter'``; other errors give
    ``'<class name>: <text>'``.
    """
    oid = getattr(error, 'oid', None)
    class_name = getattr(error, 'class_name', None)
    if oid is None and class_name is None:
        return ' '.join(('%s: %s' % (type(error).__name__, error)).split())
    return '%s: oid %s, class %s' % (
        type(error).__name__, oid_repr(oid) if oid else '-',
        class_name or '-')


class IPayloadTooLarge(IBadRequest):
    """The request body is larger than the configured limit."""


@implementer(IPayloadTooLarge)
class PayloadTooLarge(BadRequest):
    """The request body is larger than the configured limit (413)."""


class ArgumentsDoNotFit(BadRequest):
    """mapply's ``TypeError`` about the request's arguments, answered 400
    (raised ``from`` that ``TypeError``)."""


class MissingArgument(ArgumentsDoNotFit):
    """The published callable needs an argument the request did not give."""


class TooManyArguments(ArgumentsDoNotFit):
    """The request gave more positional arguments (XML-RPC parameters)
    than the published callable takes."""


def for_caller(error):
    """The exception a caller that asked for exceptions
    (``wsgi.handleErrors`` False) gets: the classic publisher's, i.e. the
    ``TypeError`` for arguments that do not fit, else ``error``."""
    cause = error.__cause__
    if isinstance(error, ArgumentsDoNotFit) and isinstance(cause, TypeError):
        return cause
    return error


class BadInput(BadRequest):
    """The request's form data or body could not be understood."""
