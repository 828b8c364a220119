"""What is in force on the thread while a request's code runs: its security
interaction, its local site and its transaction manager.

The stages set these up around the code they call (``authenticate``,
``site_events`` through traversal, ``open_root``) and take them down when
it returns.  A streamed body (an ``IResult`` or any iterable that is not a
list) runs request code later, while the server iterates it: the call
stage wraps it in :class:`StreamInScene`, which puts the request's scene
back on the thread around each chunk and around ``close()``, and leaves the
thread as it found it in between.

The request's transaction manager is a :class:`RequestTransactionManager`:
explicit for the request's ZODB connection, and for the code that runs in
the scene what the thread's manager was under the classic publisher (code
that commits, aborts or begins a transaction itself goes on in a new one).
"""

import transaction
from transaction._transaction import Status
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import IFallbackUnauthenticatedPrincipal
from zope.component import getGlobalSiteManager
from zope.component.hooks import getSite
from zope.component.hooks import setSite
from zope.security.management import endInteraction
from zope.security.management import newInteraction
from zope.security.management import queryInteraction

from zope.pipeline.http.wsgi import ClosingIterator

#: ``Transaction.status`` of a committed transaction (transaction's own
#: constant: ``ITransaction`` does not document the attribute).
COMMITTED = Status.COMMITTED


def end_interaction(request):
    """End the thread's interaction; the request no longer belongs to it."""
    interaction = queryInteraction()
    if interaction is not None and request.interaction is interaction:
        interaction.remove(request)
    endInteraction()


def authenticate_globally(request):
    """The principal the global IAuthentication utility finds for
    ``request`` (its unauthenticated principal when it finds none); when
    there is neither, the ``IFallbackUnauthenticatedPrincipal`` utility,
    as in the classic publisher (None without one)."""
    registry = getGlobalSiteManager()
    auth = registry.queryUtility(IAuthentication)
    principal = None
    if auth is not None:
        principal = auth.authenticate(request)
        if principal is None:
            principal = auth.unauthenticatedPrincipal()
    if principal is None:
        principal = registry.queryUtility(IFallbackUnauthenticatedPrincipal)
    return principal


class RequestTransactionManager(transaction.TransactionManager):
    """The transaction manager of one request.

    Its ZODB connection sees an explicit manager (``explicit`` is True when
    the connection opens): the connection syncs when a transaction begins,
    not when it opens nor after each commit, so a request that commits
    once polls the storage once.  The code of the request
    (``transaction.commit()``, ``transaction.get()``, a change to a
    persistent object) sees what the thread's implicit manager was under
    the classic publisher, whose publication committed
    ``transaction.get()`` after the view:

    - a commit while the request's code ``goes_on`` begins a new
      transaction at once (the connection syncs, so what it loads next is
      at least what it committed), so a view that commits itself
      (zope.pluggableauth's logout) goes on, and what it changes afterwards
      is committed with the request; the transaction stage clears
      ``goes_on`` for its own, final commit (a streamed body that commits
      later begins the next one, as a view does);
    - after an abort, ``get()`` gives a new transaction on the snapshot the
      connection has (a conflict with what others committed since is found
      at commit, as ever);
    - ``begin()`` aborts the current transaction, if any, and begins a new
      one;
    - ``abort()`` without a current transaction does nothing.
    """

    #: Whether the request's code may go on after a commit.
    goes_on = True

    def __init__(self):
        super().__init__(explicit=True)

    def get(self):
        if self._txn is None:
            self._txn = transaction.Transaction(self._synchs, self)
        return self._txn

    def begin(self):
        if self._txn is not None:
            self._txn.abort()
        return super().begin()

    def abort(self):
        if self._txn is not None:
            self._txn.abort()

    def free(self, txn):
        """Called by ``txn`` when it is committed or aborted."""
        super().free(txn)
        if self.goes_on and txn.status == COMMITTED:
            self.begin()


def bind_to_thread(manager):
    """Make ``manager`` the thread's transaction manager; return the one it
    replaces.  (``ThreadTransactionManager.manager`` is the documented way
    to reach the manager of the current thread.)"""
    previous = transaction.manager.manager
    transaction.manager.manager = manager
    return previous


class Scene:
    """The request's site, interaction and transaction manager, put on the
    thread by ``enter()`` and taken off by ``leave()``.  An interaction the
    thread already has (the request's own, while the pipeline still runs)
    is kept."""

    __slots__ = ('request', 'site', 'manager', '_saved')

    def __init__(self, request, site, manager):
        self.request = request
        self.site = site
        self.manager = manager
        self._saved = None

    @classmethod
    def current(cls, request):
        """The scene the thread is in now, for ``request``."""
        return cls(request, getSite(), transaction.manager.manager)

    def enter(self):
        previous_site = getSite()
        setSite(self.site)
        previous_manager = bind_to_thread(self.manager)
        began = queryInteraction() is None
        if began:
            newInteraction(self.request)
        self._saved = (previous_site, previous_manager, began)

    def leave(self):
        previous_site, previous_manager, began = self._saved
        self._saved = None
        try:
            if began:
                end_interaction(self.request)
        finally:
            bind_to_thread(previous_manager)
            setSite(previous_site)


class StreamInScene(ClosingIterator):
    """A streamed body whose chunks are produced, and which is closed, in
    the scene of the request that made it (``ClosingIterator``: ``close()``
    is forwarded exactly once)."""

    __slots__ = ('_scene',)

    def __init__(self, iterable, scene):
        super().__init__(iterable)
        self._scene = scene

    def __iter__(self):
        return self

    def __next__(self):
        scene = self._scene
        scene.enter()
        try:
            if self._iterator is None:
                self._iterator = iter(self._iterable)
            return next(self._iterator)
        finally:
            scene.leave()

    def close(self):
        if self._callbacks is None:  # closed already
            return
        scene = self._scene
        scene.enter()
        try:
            super().close()
        finally:
            scene.leave()
