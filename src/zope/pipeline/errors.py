"""Exceptions the stages raise, and which errors are worth a retry."""

from transaction.interfaces import TransientError
from zope.interface import implementer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import IBadRequest
from zope.publisher.interfaces import Retry

try:  # pragma: no cover - RelStorage is a dependency, but stay importable
    from relstorage.adapters.interfaces import ReplicaClosedException
except ImportError:  # pragma: no cover
    ReplicaClosedException = ()

#: Errors after which a new attempt can succeed and nothing was committed.
TRANSIENT = (TransientError, Retry) + (
    (ReplicaClosedException,) if ReplicaClosedException else ())


def is_transient(error):
    return isinstance(error, TRANSIENT)


class IPayloadTooLarge(IBadRequest):
    """The request body is larger than the configured limit."""


@implementer(IPayloadTooLarge)
class PayloadTooLarge(BadRequest):
    """The request body is larger than the configured limit (413)."""


class MissingArgument(BadRequest):
    """The published callable needs an argument the request did not give."""


class BadInput(BadRequest):
    """The request's form data or body could not be understood."""
