"""transaction: one transaction per attempt, committed before the response
starts, so a conflict at commit can still be retried.

The transaction is annotated as the classic publisher did: the principal
id as user, the path as note, the request type in the extended info.
A doomed transaction is aborted; an exception aborts and propagates.

What is committed is the request's current transaction when the code it
called returns, as the classic publisher committed ``transaction.get()``:
the one begun here or, when that code committed, aborted or began a
transaction itself (zope.pluggableauth's logout commits), the one it went
on in (``zope.pipeline.publishing.scene.RequestTransactionManager``).

When the commit fails because the database cannot serve
(``errors.is_unavailable``), the transaction package's CRITICAL record of
a failed second phase is left out (``errors.ReportedSecondPhaseFailure``):
the request's one 503 line says what failed.  When the database stopped
answering once the commit was voting or finishing (``CommitPhase``
tells), the change may have been stored: the error is raised as
``errors.CommitOutcomeUnknown``, whose page says so.
"""

import transaction.interfaces
from zope.interface import Interface
from zope.interface import implementer

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.errors import CommitOutcomeUnknown
from zope.pipeline.http.errors import describe_error
from zope.pipeline.http.errors import is_unreachable
from zope.pipeline.http.errors import report_second_phase_failures
from zope.pipeline.http.wsgi import DeferredStart
from zope.pipeline.http.wsgi import close_iterable


class ITransactionSettings(Interface):
    """transaction has no settings."""


def annotate(txn, environ):
    request = environ[keys.REQUEST_KEY]
    principal = request.principal
    if principal is not None:
        txn.user = str(principal.id)
    txn.note(request.getURL(path_only=True) if hasattr(request, 'getURL')
             else environ.get('PATH_INFO', ''))
    txn.setExtendedInfo('request_type', environ.get(keys.REQUEST_TYPE, ''))
    txn.setExtendedInfo('request_method', environ.get('REQUEST_METHOD', ''))


class TransactionStage:
    """Begin; on success annotate and commit before starting the response."""

    settings_schema = ITransactionSettings
    contract = Contract(
        reads=(keys.TRANSACTION_MANAGER, keys.REQUEST_KEY, keys.REQUEST_TYPE))

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        manager = environ[keys.TRANSACTION_MANAGER]
        manager.begin()
        held = DeferredStart()
        try:
            # its bound __call__: a call the interpreter makes inline
            # (calling the instance goes through the type's call slot)
            result = self.next_app(environ, held.__call__)
        except BaseException:
            manager.abort()
            raise
        try:
            commit_last(manager, environ)
        except BaseException:
            close_iterable(result)
            manager.abort()
            raise
        return held.send(start_response, result)


def commit_last(manager, environ):
    """Finish the request's current transaction, beginning no other one
    (code that runs later, a streamed body, begins one when it commits)."""
    manager.goes_on = False
    try:
        finish(manager.get(), environ)
    finally:
        manager.goes_on = True


def finish(txn, environ):
    """Abort ``txn`` if it is doomed, else annotate and commit it."""
    if txn.isDoomed():
        txn.abort()
        return
    annotate(txn, environ)
    report_second_phase_failures(txn)
    phase = CommitPhase()
    txn.join(phase)
    try:
        txn.commit()
    except Exception as error:
        if phase.voting and is_unreachable(error):
            raise CommitOutcomeUnknown(describe_error(error)) from error
        raise


@implementer(transaction.interfaces.IDataManager)
class CommitPhase:
    """A data manager without data that says whether the commit has
    reached its vote: the transaction package begins every data manager,
    then has each commit, then each vote, then each finish; this one
    sorts first, so once its ``tpc_vote`` ran, the storages vote or
    finish, and one may have stored the change."""

    transaction_manager = None
    voting = False

    def sortKey(self):
        return ''

    def tpc_vote(self, txn):
        self.voting = True

    def abort(self, txn):
        pass

    tpc_begin = commit = tpc_finish = tpc_abort = abort
