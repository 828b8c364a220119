"""benchmarks.cachecommits: another process commits to the object it is
told, at the rate it is told, and says how many commits a run saw; the
table gives the medians beside the ceiling's."""

import time

import pytest

from benchmarks import cachecommits
from benchmarks import peers
from benchmarks.peercompare import populate
from benchmarks.storages import SqliteStorage
from benchmarks.workspace import Workspace


@pytest.fixture(scope='module')
def zodb_config():
    with Workspace() as workspace:
        config = SqliteStorage().setup(workspace, 'cachecommits')
        populate(peers.BY_NAME['pipeline-cached'], config,
                 workspace.directory('work'))
        yield config


def serials(zodb_config):
    from zope.pipeline.zodb.storage import open_database
    db = open_database(zodb_config)
    try:
        connection = db.open()
        root = connection.root()
        the_page = root['Application']['folder']['page']
        found = []
        for obj in (root[cachecommits.UNRELATED], the_page):
            obj._p_activate()           # a ghost has no serial yet
            found.append(obj._p_serial)
        connection.close()
        return found
    finally:
        db.close()


@pytest.mark.parametrize('target', ['unrelated', 'page'])
def test_the_committer_changes_only_its_target_and_counts_the_run(
        zodb_config, target):
    with cachecommits.committing(zodb_config, target, 50) as committer:
        before = serials(zodb_config)
        time.sleep(0.2)
        committer.start_run()
        time.sleep(0.4)
    after = serials(zodb_config)
    changed = [old != new for old, new in zip(before, after)]
    assert changed == ([True, False] if target == 'unrelated'
                       else [False, True])
    assert 5 <= committer.made <= 40


def test_a_quiet_run_has_no_committer(zodb_config):
    with cachecommits.committing(zodb_config, 'quiet', 50) as committer:
        committer.start_run()
    assert committer.made == 0


def test_the_table_gives_medians_and_the_ratio_to_the_ceiling():
    def runs(rps, hit_rate=1.0, commits=0):
        return [{'rps': value, 'hit_rate': hit_rate, 'commits': commits,
                 'verified': True} for value in rps]
    text = cachecommits.table('sqlite', {
        ('ceiling', 8): runs([5000, 6000, 7000]),
        ('quiet', 8): runs([3000, 3300, 3600]),
        ('unrelated', 8): runs([3000, 3000, 3000], 1.0, 30),
        ('page', 8): runs([2400, 2400, 2400], 0.993, 31),
    }, [8])
    assert '| quiet | 8 | 3300 | 0.55 | 100.0 % | 0 | 3/3 |' in text
    assert '| page | 8 | 2400 | 0.40 | 99.3 % | 31 | 3/3 |' in text
    assert '| ceiling | 8 | 6000 | 1.00 | - | - | 3/3 |' in text
