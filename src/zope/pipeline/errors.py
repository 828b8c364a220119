"""Exceptions the stages raise, which errors are worth a retry, and which
say that the database cannot be reached."""

from transaction.interfaces import TransientError
from zope.interface import implementer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IBadRequest
from zope.publisher.interfaces import Retry

from zope.pipeline.logtext import client_text

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


def is_unavailable(error):
    """Return whether ``error`` says the database cannot be reached: the
    MySQL server refused or dropped the connection (mysqlclient's
    ``OperationalError`` with one of ``UNREACHABLE_CODES``, or its
    ``InterfaceError``, raised for a connection that is already closed),
    or ``error`` was raised from such an error (``raise ... from``, as
    RelStorage's commit lock errors are).

    Such an error is not transient (a new attempt at once finds the server
    still gone, and a commit cut off by it may have reached the server, so
    it must not be repeated): it is answered 503 with Retry-After.
    RelStorage reconnects by itself at the next transaction once the
    server is back.
    """
    for _ in range(CAUSES_LOOKED_AT):
        if error is None:
            return False
        if isinstance(error, MYSQL_CLOSED) or (
                isinstance(error, MYSQL_OPERATIONAL) and error.args and
                error.args[0] in UNREACHABLE_CODES):
            return True
        error = error.__cause__
    return False


#: Seconds in the Retry-After header of a 503 (``retry.retry_after``).
DEFAULT_RETRY_AFTER = 1

#: What a client is told when the database cannot be reached.
UNAVAILABLE_MESSAGE = ('The database is unavailable; please try again in a '
                       'moment.')


def log_unavailable(logger, method, path, error):
    """Log, in one line without a traceback, that a request was answered
    503 because the database cannot be reached."""
    logger.error('%s %s: the database is unavailable (%s); answered 503',
                 client_text(method), client_text(path),
                 describe_error(error))


def describe_error(error):
    """Say in one line what failed: for a conflict, the oid and class.

    ``'ConflictError: oid 0x2a, class app.Counter'``; other errors give
    ``'<class name>: <text>'``.
    """
    oid = getattr(error, 'oid', None)
    class_name = getattr(error, 'class_name', None)
    if oid is None and class_name is None:
        return ' '.join(('%s: %s' % (type(error).__name__, error)).split())
    from ZODB.utils import oid_repr
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
