"""scene: a streamed body is produced and closed in its request's scene
(interaction, site, transaction manager), which is off the thread again
between chunks; close() is forwarded exactly once."""

import pytest
import transaction
from zope.component.hooks import getSite
from zope.component.hooks import setSite
from zope.publisher.browser import TestRequest as make_request
from zope.security.management import endInteraction
from zope.security.management import newInteraction
from zope.security.management import queryInteraction

from zope.pipeline.scene import Scene
from zope.pipeline.scene import StreamInScene
from zope.pipeline.scene import end_interaction


class Site:
    def getSiteManager(self):
        from zope.component import getGlobalSiteManager
        return getGlobalSiteManager()


class Recorder:
    """An iterable noting the scene of each chunk and of close()."""

    def __init__(self, chunks=2, fail_at=None):
        self.chunks = chunks
        self.fail_at = fail_at
        self.seen = []
        self.closed = 0

    def note(self):
        interaction = queryInteraction()
        self.seen.append((getSite(), transaction.manager.manager,
                          interaction is not None))

    def __iter__(self):
        for number in range(self.chunks):
            self.note()
            if number == self.fail_at:
                raise ValueError('broken stream')
            yield b'chunk'

    def close(self):
        self.note()
        self.closed += 1


@pytest.fixture
def scene(clean_zope):
    return Scene(make_request(), Site(), transaction.TransactionManager())


def test_each_chunk_and_close_run_in_the_scene_and_leave_the_thread_clean(
        scene):
    recorder = Recorder()
    thread_manager = transaction.manager.manager
    body = StreamInScene(recorder, scene)
    assert list(body) == [b'chunk', b'chunk']
    assert getSite() is None and queryInteraction() is None
    assert transaction.manager.manager is thread_manager
    body.close()
    assert recorder.seen == [(scene.site, scene.manager, True)] * 3
    assert getSite() is None and queryInteraction() is None


def test_close_is_forwarded_once(scene):
    recorder = Recorder()
    body = StreamInScene(recorder, scene)
    body.close()
    body.close()
    assert recorder.closed == 1


def test_a_failing_chunk_leaves_the_thread_clean(scene):
    body = StreamInScene(Recorder(fail_at=0), scene)
    with pytest.raises(ValueError):
        next(iter(body))
    assert getSite() is None and queryInteraction() is None


def test_an_interaction_already_on_the_thread_is_kept(scene):
    request = make_request()
    newInteraction(request)
    try:
        body = StreamInScene(Recorder(chunks=1), scene)
        assert list(body) == [b'chunk']
        assert queryInteraction() is not None
    finally:
        end_interaction(request)
    assert queryInteraction() is None


def test_the_site_before_a_chunk_is_restored_after_it(scene):
    other = Site()
    setSite(other)
    try:
        assert list(StreamInScene(Recorder(chunks=1), scene)) == [b'chunk']
        assert getSite() is other
    finally:
        setSite(None)


def test_current_scene_is_the_threads(clean_zope):
    request = make_request()
    current = Scene.current(request)
    assert current.request is request
    assert current.site is None
    assert current.manager is transaction.manager.manager
    endInteraction()


# -- the synchronizers of a request's transaction manager


class Synch:
    """A synchronizer: weakly referenceable, not hashable."""

    __hash__ = None


def answers(synchs, members):
    """What a set of synchronizers says about ``members``."""
    seen = []
    synchs.map(seen.append)
    return (len(synchs), bool(synchs),
            [member in synchs for member in members],
            [id(member) for member in seen],
            sorted(id(ref()) for ref in synchs.as_weakref_list()
                   if ref() is not None))


def test_request_synchronizers_answer_as_the_transaction_packages_weak_set():
    import gc

    from transaction.weakset import WeakSet

    from zope.pipeline.scene import RequestSynchronizers
    for synchs in (WeakSet(), RequestSynchronizers()):
        kept, dropped, other = Synch(), Synch(), Synch()
        synchs.add(kept)
        synchs.add(dropped)
        synchs.add(kept)  # once only
        stock = answers(synchs, [kept, dropped, other])
        assert stock == (2, True, [True, True, False],
                         [id(kept), id(dropped)],
                         sorted([id(kept), id(dropped)]))
        del dropped
        gc.collect()
        assert answers(synchs, [kept, other]) == (
            1, True, [True, False], [id(kept)], [id(kept)])
        with pytest.raises(KeyError):
            synchs.remove(other)
        synchs.remove(kept)
        assert answers(synchs, [kept]) == (0, False, [False], [], [])
        with pytest.raises(KeyError):
            synchs.remove(kept)
        synchs.add(kept)
        synchs.clear()
        assert answers(synchs, [kept]) == (0, False, [False], [], [])


def test_a_dead_synchronizer_is_not_removed_for_another_of_its_id():
    from zope.pipeline.scene import RequestSynchronizers
    synchs, dead = RequestSynchronizers(), Synch()
    synchs.add(dead)
    key = id(dead)
    del dead
    same_id = Synch()  # given the dead one's id (CPython may reuse it)
    synchs._refs[id(same_id)] = synchs._refs.pop(key)
    with pytest.raises(KeyError):
        synchs.remove(same_id)
    assert len(synchs) == 0


def test_request_manager_holds_what_the_stock_manager_holds():
    from zope.pipeline.scene import RequestSynchronizers
    from zope.pipeline.scene import RequestTransactionManager
    manager = RequestTransactionManager()
    stock = transaction.TransactionManager(explicit=True)
    assert set(vars(manager)) == set(vars(stock))
    assert (manager.explicit, manager._txn) == (True, None)
    assert type(manager._synchs) is RequestSynchronizers
    synch = Synch()
    synch.newTransaction = lambda txn: began.append(txn)
    began = []
    manager.registerSynch(synch)
    assert manager.registeredSynchs()
    txn = manager.begin()
    assert began == [txn]
    manager.unregisterSynch(synch)
    assert not manager.registeredSynchs()


def test_request_manager_keeps_the_stock_weak_set_when_it_does_not_fit(
        monkeypatch):
    from transaction.weakset import WeakSet

    from zope.pipeline import scene

    class MoreState(transaction.TransactionManager):
        def __init__(self, explicit=False):
            super().__init__(explicit)
            self.extra = None

    class MoreMethods(WeakSet):
        def discard(self, obj):
            pass

    class OtherSet(transaction.TransactionManager):
        def __init__(self, explicit=False):
            super().__init__(explicit)
            self._synchs = MoreMethods()

    assert scene.fits_transaction_manager()
    assert not scene.fits_transaction_manager(MoreState)
    assert not scene.fits_transaction_manager(OtherSet)
    assert not scene.fits_transaction_manager(OtherSet, MoreMethods)
    monkeypatch.setattr(scene, 'OWN_SYNCHRONIZERS', False)
    manager = scene.RequestTransactionManager()
    assert type(manager._synchs) is WeakSet
    assert manager.explicit is True
