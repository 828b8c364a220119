"""Numbers of a process group: state files, merging, retiring."""

import os
import subprocess
import sys

import pytest

from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.group import RETIRED
from zope.pipeline.metrics.group import GroupState
from zope.pipeline.metrics.group import merge
from zope.pipeline.metrics.group import pid_alive
from zope.pipeline.metrics.group import read_json
from zope.pipeline.metrics.group import write_json


class FakeClock:

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def process_snapshot(pid, requests, busy_seconds, threads=2,
                     view='Page:index.html'):
    """A snapshot like process ``pid`` would write, for steps 1000-1020."""
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=threads, bounds=(0.1, 1),
                          clock=clock)
    for number in range(requests):
        begin = 1000 + number * (10 / requests)
        record = collector.begin(begin)
        record.view = view
        record.status = '200 OK'
        collector.finish(record, begin + busy_seconds / requests)
    collector.advance(1010)
    collector.advance(1020)
    snapshot = collector.snapshot()
    snapshot['pid'] = pid
    return snapshot


def dead_pid():
    child = subprocess.Popen([sys.executable, '-c', 'pass'])
    child.wait()
    return child.pid


def test_merging_sums_requests_and_keeps_utilization_group_wide():
    merged = merge([process_snapshot(1, requests=10, busy_seconds=5),
                    process_snapshot(2, requests=4, busy_seconds=2)])
    assert merged['processes'] == 2 and merged['threads'] == 4
    assert merged['totals']['Page:index.html']['statuses'] == {'200': 14}
    assert merged['totals']['Page:index.html']['buckets'] == [0, 14, 0]
    step = next(step for step in merged['steps'] if step['start'] == 1000)
    assert step['busy'] / step['capacity'] == pytest.approx(7 / 40)
    assert step['views']['Page:index.html']['requests'] == 14
    assert sum(step['views']['Page:index.html']['latency'].values()) == 14


def test_merging_different_views_and_steps_keeps_each():
    first = process_snapshot(1, 2, 1, view='A')
    second = process_snapshot(2, 3, 1, view='B')
    second['steps'].append(dict(second['steps'][0], start=990))
    second['closed_until'] = 1000
    merged = merge([first, second])
    assert sorted(merged['totals']) == ['A', 'B']
    assert [step['start'] for step in merged['steps']] == [990, 1000, 1010]
    assert merged['closed_until'] == 1000
    assert merge([]) == {'step': 10.0, 'threads': 0, 'bounds': [],
                         'closed_until': None, 'totals': {}, 'steps': [],
                         'processes': 0}


def test_each_process_writes_its_file_and_a_reader_merges_them(tmp_path):
    state = GroupState(str(tmp_path / 'group'))
    other = process_snapshot(os.getppid(), 6, 3)
    state.write(other)
    own = process_snapshot(os.getpid(), 4, 1)
    state.write(own)
    merged = state.merged(own)
    assert merged['processes'] == 2
    assert merged['totals']['Page:index.html']['statuses'] == {'200': 10}
    assert oct(os.stat(state.directory).st_mode & 0o777) == '0o700'


def test_an_exiting_process_folds_its_totals_into_the_retired_file(
        tmp_path):
    state = GroupState(str(tmp_path))
    state.write(process_snapshot(os.getppid(), 6, 3))
    state.retire(os.getppid())
    state.retire(os.getppid())                  # a second time: nothing
    assert not os.path.exists(state.path_of(os.getppid()))
    state.write(process_snapshot(os.getpid(), 4, 1))
    merged = state.merged()
    assert merged['processes'] == 1
    assert merged['totals']['Page:index.html']['statuses'] == {'200': 10}
    assert merged['totals']['Page:index.html']['buckets'] == [0, 10, 0]


def test_the_file_of_a_process_that_died_is_retired_by_the_next_reader(
        tmp_path):
    state = GroupState(str(tmp_path))
    pid = dead_pid()
    state.write(process_snapshot(pid, 5, 1))
    (tmp_path / 'notes.txt').write_text('not state')
    (tmp_path / 'x.json').write_text('{}')
    assert state.live_pids() == []
    assert not os.path.exists(state.path_of(pid))
    retired = read_json(str(tmp_path / RETIRED))
    assert retired['totals']['Page:index.html']['statuses'] == {'200': 5}
    assert state.merged()['totals']['Page:index.html']['statuses'] == \
        {'200': 5}


def test_directories_of_servers_that_are_gone_are_removed(tmp_path):
    gone = GroupState(str(tmp_path / 'metrics-aaa'), parent=dead_pid())
    gone.write(process_snapshot(os.getpid(), 1, 1))
    alive = GroupState(str(tmp_path / 'metrics-bbb'), parent=os.getppid())
    (tmp_path / 'metrics-ccc').mkdir()                  # no parent file
    (tmp_path / 'other-ddd').mkdir()
    GroupState(str(tmp_path / 'metrics-eee'), parent=os.getpid())
    assert sorted(os.listdir(str(tmp_path))) == [
        'metrics-bbb', 'metrics-ccc', 'metrics-eee', 'other-ddd']
    assert read_json(alive.path_of(os.getpid())) is None
    again = GroupState(alive.directory, parent=12345)   # keeps its parent
    with open(os.path.join(again.directory, 'parent')) as source:
        assert source.read() == '%d\n' % os.getppid()


def test_a_file_that_vanishes_or_is_unreadable_is_skipped(tmp_path):
    state = GroupState(str(tmp_path))
    with open(state.path_of(os.getpid()), 'w') as broken:
        broken.write('{not json')
    assert state.merged()['processes'] == 0
    assert read_json(str(tmp_path / 'missing.json')) is None


def test_state_files_are_replaced_whole(tmp_path, monkeypatch):
    path = str(tmp_path / 'state.json')
    write_json(path, {'a': 1})

    def failing_replace(source, target):
        raise OSError('disk full')
    monkeypatch.setattr(os, 'replace', failing_replace)
    with pytest.raises(OSError):
        write_json(path, {'a': 2})
    assert read_json(path) == {'a': 1}
    assert os.listdir(str(tmp_path)) == ['state.json']


def test_liveness_of_pids(monkeypatch):
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())

    def not_permitted(pid, signal):
        raise PermissionError('another user')
    monkeypatch.setattr(os, 'kill', not_permitted)
    assert pid_alive(1)     # alive, only not ours to signal


def test_a_step_key_an_older_process_did_not_write_counts_as_zero():
    older = process_snapshot(1, 6, 3)
    for step in older['steps']:
        for view in step['views'].values():
            del view['client_errors']
    newer = process_snapshot(2, 4, 1)
    merged = merge([older, newer])
    step = merged['steps'][0]
    assert step['views']['Page:index.html']['client_errors'] == 0
    assert step['views']['Page:index.html']['requests'] == 10


def test_response_cache_events_of_the_processes_are_added():
    def snapshot(cache):
        totals = {'statuses': {'200': 1}, 'bytes': 1, 'blocks': 1,
                  'retries': 0, 'duration': 0.1, 'buckets': [1, 0, 0]}
        if cache is not None:
            totals['cache'] = cache
        return {'step': 10.0, 'bounds': [0.1, 1.0], 'threads': 1,
                'closed_until': 1000.0, 'steps': [],
                'totals': {'Page:index.html': totals}}
    merged = merge([snapshot({'hits': 2}), snapshot(None),
                    snapshot({'hits': 1, 'stores': 1})])
    assert merged['totals']['Page:index.html']['cache'] == {
        'hits': 3, 'stores': 1}
