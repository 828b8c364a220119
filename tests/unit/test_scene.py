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

from zope.pipeline.publishing.scene import Scene
from zope.pipeline.publishing.scene import StreamInScene
from zope.pipeline.publishing.scene import end_interaction


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


def test_request_manager_holds_what_the_stock_manager_holds():
    from zope.pipeline.publishing.scene import RequestTransactionManager
    manager = RequestTransactionManager()
    stock = transaction.TransactionManager(explicit=True)
    assert set(vars(manager)) == set(vars(stock))
    assert (manager.explicit, manager._txn) == (True, None)
    assert type(manager._synchs) is type(stock._synchs)
    synch = Synch()
    synch.newTransaction = lambda txn: began.append(txn)
    began = []
    manager.registerSynch(synch)
    assert manager.registeredSynchs()
    txn = manager.begin()
    assert began == [txn]
    manager.unregisterSynch(synch)
    assert not manager.registeredSynchs()
