"""The transient (and not transient) errors the fixtures raise on plan."""

import transaction.interfaces
from ZODB.POSException import ConflictError
from zope.publisher.interfaces import Retry

from . import plan
from .content import Counter


def make_error(kind):
    """The error of a kind: conflict, transient, retry, or anything else
    for a plain (not transient) error."""
    if kind == 'conflict':
        return ConflictError(object=Counter())
    if kind == 'transient':
        return transaction.interfaces.TransientError('transient trouble')
    if kind == 'retry':
        return Retry()
    return RuntimeError('a plain error')


def fail_if_planned(attempt):
    """Raise the planned error while ``attempt`` is within the failures."""
    if attempt <= plan['failures']:
        raise make_error(plan['error'])
