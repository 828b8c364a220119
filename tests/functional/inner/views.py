"""Browser views and subscribers of the inner-stage tests.

Each view records what it saw in ``seen`` (see ``__init__``) and answers
with something a test can check.  ``fail`` raises the error its ``kind``
form value names.
"""

import json

import transaction
from transaction.interfaces import IDataManager
from ZODB.POSException import ConflictError
from zope.component import queryUtility
from zope.component.hooks import getSite
from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.interfaces import BadRequest
from zope.publisher.interfaces import INotFound
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces import Redirect
from zope.publisher.interfaces.http import IResult
from zope.security.interfaces import Unauthorized
from zope.security.management import queryInteraction
from zope.security.proxy import removeSecurityProxy

from . import seen
from .content import ISiteLabel
from .content import LocalError

ATTEMPT = 'zope.pipeline.attempt'


class IInnerError(Interface):
    """An error with a global exception view that shows where it happened."""


@implementer(IInnerError)
class InnerError(Exception):
    pass


class IPoliteNotFound(INotFound):
    """A NotFound whose exception view leaves the status alone."""


@implementer(IPoliteNotFound)
class PoliteNotFound(NotFound):
    pass


class IApplicationError(Interface):
    """An application's error (a UserError) with a page of its own."""


@implementer(IApplicationError)
class ApplicationError(Exception):
    pass


class IBrokenError(Interface):
    """An error whose exception view fails."""


@implementer(IBrokenError)
class BrokenError(Exception):
    pass


def site_label():
    """The label of the site whose components lookups see, or None."""
    label = queryUtility(ISiteLabel)
    return label.label if label is not None else None


class View:

    def __init__(self, context, request):
        self.context = context
        self.request = request

    @property
    def environ(self):
        return self.request.environment

    @property
    def bare_context(self):
        return removeSecurityProxy(self.context)

    def json(self, data):
        self.request.response.setHeader('Content-Type', 'application/json')
        return json.dumps(data, sort_keys=True)


class WhoAmI(View):
    """Who the request is, in which site and interaction."""

    def __call__(self):
        interaction = queryInteraction()
        site = getSite()
        data = {
            'principal': self.request.principal.id,
            'interaction': interaction is not None,
            'participation_is_request': interaction is not None and any(
                participation is self.request
                for participation in interaction.participations),
            'site_label': site_label(),
            'site_name': None if site is None else site.__name__,
        }
        seen.append(dict(data, view='whoami'))
        return self.json(data)


class Connection(View):
    """Record the connection, transaction manager and transaction."""

    def __call__(self):
        connection = self.bare_context._p_jar
        manager = connection.transaction_manager
        seen.append({'view': 'connection', 'connection': connection,
                     'manager': manager,
                     'thread_transaction': transaction.get(),
                     'request_transaction': manager.get()})
        return 'connection %d' % id(connection)


class Fail(View):
    """Raise the error the ``kind`` form value names."""

    def __call__(self, kind='boom'):
        self.bare_context.touched += 1
        seen.append({'view': 'fail', 'kind': kind,
                     'attempt': self.environ[ATTEMPT]})
        raise self.error(kind)

    def error(self, kind):
        request = self.request
        errors = {
            'notfound': lambda: NotFound(self.context, 'missing', request),
            'unauthorized': lambda: Unauthorized('not for you'),
            'redirect': lambda: Redirect(
                request.getApplicationURL() + '/folder/doc/@@whoami'),
            'badrequest': lambda: BadRequest('bad input'),
            'conflict': lambda: ConflictError('conflicting'),
            'polite': lambda: PoliteNotFound(self.context, 'missing',
                                             request),
            'local': LocalError,
            'application': ApplicationError,
            'inner': InnerError,
            'broken': BrokenError,
            'boom': lambda: RuntimeError(
                'boom <script>alert("boom")</script>'),
        }
        return errors[kind]()


class InnerErrorView:
    """The global exception view of ``IInnerError``: says where."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        where = removeSecurityProxy(self.context.__parent__)
        seen.append({'view': 'inner-error', 'site_label': site_label(),
                     'interaction': queryInteraction() is not None})
        self.request.response.setStatus(409)
        return 'inner error view: raised by %s on %s' % (
            where.__name__, type(removeSecurityProxy(where.context)).__name__)


class PoliteNotFoundView(InnerErrorView):
    """An exception view that sets no status (the error's 404 stays)."""

    def __call__(self):
        return 'politely not found'


class ApplicationErrorView(InnerErrorView):
    """An exception view that sets no status for an error without one."""

    def __call__(self):
        return 'please correct the form'


class BrokenErrorView(InnerErrorView):
    """An exception view that fails itself."""

    def __call__(self):
        raise ValueError('the error view is broken too')


class Touch(View):
    """Change the context; add the ``note`` form value to the transaction
    the classic way (``transaction.get().note``)."""

    def __call__(self, note=''):
        self.bare_context.touched += 1
        if note:
            transaction.get().note(note)
        transaction.get().addAfterCommitHook(record_commit)
        return str(self.bare_context.touched)


def record_commit(committed):
    seen.append({'event': 'commit', 'committed': committed})


class Doom(View):
    """Change the context, then doom the transaction the classic way."""

    def __call__(self):
        self.bare_context.touched += 1
        transaction.doom()
        return 'doomed'


#: What a view that commits itself adds before and after its commit: the
#: sum in ``touched`` tells which changes were committed.
BEFORE, AFTER = 1, 10


class CommitItself(View):
    """Change the context, commit as classic code does
    (``transaction.commit()``, zope.pluggableauth's logout), then go on as
    ``then`` says: ``nothing``, ``change`` (change the context again),
    ``doom`` (change it again and doom the transaction), ``conflict``
    (change it again and join a data manager that conflicts at the final
    commit of the first attempt), ``fail`` (change it again and raise),
    ``abort`` (change it again, abort, and answer what it reads then)."""

    def __call__(self, then='nothing'):
        attempt = self.environ[ATTEMPT]
        seen.append({'view': 'commit-itself', 'attempt': attempt})
        self.bare_context.touched += BEFORE
        transaction.commit()
        if then != 'nothing':
            self.bare_context.touched += AFTER
        if then == 'doom':
            transaction.doom()
        if then == 'conflict':
            transaction.get().join(VoteConflict(attempt == 1))
        if then == 'fail':
            raise RuntimeError('failed after committing')
        if then == 'abort':
            transaction.abort()
            return 'committed, then abort: touched %d' % (
                self.bare_context.touched)
        return 'committed, then %s' % then


class AbortItself(View):
    """Change the context, abort (``transaction.abort()``), change it again."""

    def __call__(self):
        self.bare_context.touched += BEFORE
        transaction.abort()
        self.bare_context.touched += AFTER
        return 'aborted, then changed'


class BeginItself(View):
    """Change the context, begin a transaction (``transaction.begin()``,
    which drops what was not committed), change it again."""

    def __call__(self):
        self.bare_context.touched += BEFORE
        transaction.begin()
        self.bare_context.touched += AFTER
        return 'began, then changed'


class Increment(View):
    """Add one to a Counter (POST)."""

    def __call__(self):
        counter = self.bare_context
        counter.value += 1
        return str(counter.value)


class Value(View):

    def __call__(self):
        return str(self.bare_context.value)


class ConflictAtCommit(View):
    """Change the context and join a data manager that conflicts in
    ``tpc_vote`` on the first attempt."""

    def __call__(self):
        attempt = self.environ[ATTEMPT]
        self.bare_context.touched += 1
        transaction.get().join(VoteConflict(attempt == 1))
        seen.append({'view': 'conflict-at-commit', 'attempt': attempt})
        return 'attempt %d touched %d' % (attempt, self.bare_context.touched)


@implementer(IDataManager)
class VoteConflict:
    """A data manager whose vote raises ConflictError when told to."""

    transaction_manager = None

    def __init__(self, conflict):
        self.conflict = conflict

    def abort(self, txn):
        seen.append({'data_manager': 'abort'})

    def tpc_begin(self, txn):
        pass

    def commit(self, txn):
        pass

    def tpc_vote(self, txn):
        if self.conflict:
            raise ConflictError('conflict in tpc_vote')

    def tpc_finish(self, txn):
        seen.append({'data_manager': 'finish'})

    def tpc_abort(self, txn):
        seen.append({'data_manager': 'tpc_abort'})

    def sortKey(self):
        return 'inner.VoteConflict'


class Stream(View):
    """A streamed body (an IResult) that reads the database as it goes."""

    def __call__(self):
        return StreamedDocument(self.bare_context,
                                self.bare_context._p_jar)


@implementer(IResult)
class StreamedDocument:
    """Yields three chunks, recording whether the connection is open."""

    def __init__(self, document, connection):
        self.document = document
        self.connection = connection

    def __iter__(self):
        for number in range(3):
            seen.append({'view': 'stream', 'chunk': number,
                         'connection_open': self.connection.opened
                         is not None})
            yield b'chunk %d touched %d\n' % (number, self.document.touched)


class StreamThatChanges(View):
    """A streamed body that changes the context while it is iterated, and
    commits the change (``transaction.commit()``) when ``commit`` is set."""

    def __call__(self, commit=''):
        return ChangingStream(self.bare_context, bool(commit))


@implementer(IResult)
class ChangingStream:

    def __init__(self, document, commit):
        self.document = document
        self.commit = commit

    def __iter__(self):
        self.document.touched += BEFORE
        if self.commit:
            transaction.commit()
        yield b'changed while streaming\n'


class Secret(View):
    """Protected by ``inner.Secret``, granted to zope.bob only."""

    def __call__(self):
        return 'secret for %s' % self.request.principal.id


def record_before_traverse(ob, event):
    bare = removeSecurityProxy(ob)
    seen.append({'event': 'before_traverse',
                 'name': getattr(bare, '__name__', None),
                 'class': type(bare).__name__,
                 'site_label': site_label()})


def record_end_request(event):
    seen.append({'event': 'end_request', 'object': event.object,
                 'request': event.request, 'site': getSite()})


class XMLRPCMethods:
    """XML-RPC methods, registered as views for XML-RPC requests."""

    def __init__(self, context, request):
        self.context = context
        self.request = request


class Failing(XMLRPCMethods):

    def __call__(self, first, second):
        raise RuntimeError('failing over XML-RPC')


class Adding(XMLRPCMethods):

    def __call__(self, first, second):
        return first + second


class BrokenErrorReporting:
    """An error reporting utility that fails to report."""

    def raising(self, info, request=None):
        raise OSError('the error log is full')


class DocumentMethods:
    """Plain-HTTP method views of a Document: only PUT."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def PUT(self):
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'put'
