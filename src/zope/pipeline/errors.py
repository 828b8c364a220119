"""Exceptions the stages raise, and which errors are worth a retry."""

from transaction.interfaces import TransientError
from zope.interface import implementer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IBadRequest
from zope.publisher.interfaces import Retry

try:  # pragma: no cover - RelStorage is a dependency, but stay importable
    from relstorage.adapters.interfaces import ReplicaClosedException
    from relstorage.adapters.interfaces import \
        UnableToAcquireCommitLockError
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
    """Return whether a new attempt of the request can succeed."""
    return isinstance(error, TRANSIENT)


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


class MissingArgument(BadRequest):
    """The published callable needs an argument the request did not give."""


class BadInput(BadRequest):
    """The request's form data or body could not be understood."""
