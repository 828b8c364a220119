"""The per-process metrics runtime: worker, exports, life cycle."""

import atexit
import logging
import os
import sys
import threading

import pytest

from zope.pipeline.metrics import modwsgi
from zope.pipeline.metrics import runtime as runtime_module
from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.group import GroupState
from zope.pipeline.metrics.group import read_json
from zope.pipeline.metrics.runtime import MetricsRuntime
from zope.pipeline.metrics.runtime import stop_all


class FakeClock:

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


class RecordingExporter:

    def __init__(self):
        self.records = []
        self.closed = False

    def export(self, progress, collector):
        self.records += progress.records

    def close(self):
        self.closed = True


def finished(collector, begin, end):
    record = collector.begin(begin)
    record.status = '200 OK'
    collector.finish(record, end)


@pytest.fixture
def stopped():
    yield
    stop_all()
    modwsgi.release_reader()


def test_stopping_exports_the_rest_and_retires_the_state_file(
        tmp_path, stopped):
    clock = FakeClock()
    collector = Collector(clock=clock)
    state = GroupState(str(tmp_path))
    exporter = RecordingExporter()
    runtime = MetricsRuntime(collector, state, exporter, False, 3600.0)
    runtime.start()
    runtime.start()                         # once is enough
    finished(collector, 1001, 1002)
    runtime.stop()
    runtime.stop()                          # and stopping twice is fine
    assert len(exporter.records) == 1 and exporter.closed
    assert not os.path.exists(state.path_of(os.getpid()))
    retired = read_json(str(tmp_path / 'retired.json'))
    assert retired['totals']['none']['statuses'] == {'200': 1}


def test_the_state_file_is_written_when_something_changed(tmp_path):
    clock = FakeClock()
    collector = Collector(clock=clock)
    state = GroupState(str(tmp_path))
    runtime = MetricsRuntime(collector, state, None, False)
    writes = []
    write = state.write
    state.write = lambda snapshot: (writes.append(snapshot), write(snapshot))
    runtime.flush(1000.5)                   # the first flush writes
    runtime.flush(1001)                     # nothing new
    finished(collector, 1001, 1001.5)
    runtime.flush(1002)                     # a record
    runtime.flush(1010.5)                   # a closed step
    assert len(writes) == 3
    assert read_json(state.path_of(os.getpid()))['totals']['none'][
        'statuses'] == {'200': 1}


def test_a_page_reading_the_numbers_leaves_the_exports_to_the_worker():
    collector = Collector(clock=FakeClock())
    exporter = RecordingExporter()
    runtime = MetricsRuntime(collector, None, exporter, False)
    finished(collector, 1001, 1002)
    snapshot = runtime.group_snapshot()
    assert snapshot['processes'] == 1
    assert snapshot['totals']['none']['statuses'] == {'200': 1}
    assert exporter.records == []           # not from the request thread
    runtime.flush()
    assert len(exporter.records) == 1


def test_a_group_snapshot_merges_the_other_processes_files(tmp_path):
    state = GroupState(str(tmp_path))
    other = Collector(clock=FakeClock())
    finished(other, 1001, 1002)
    other.advance()
    snapshot = other.snapshot()
    snapshot['pid'] = os.getppid()
    state.write(snapshot)
    collector = Collector(clock=FakeClock())
    finished(collector, 1001, 1002)
    runtime = MetricsRuntime(collector, state, None, False)
    merged = runtime.group_snapshot()
    assert merged['processes'] == 2
    assert merged['totals']['none']['statuses'] == {'200': 2}


def test_the_worker_outlives_a_failing_export(caplog, stopped):
    collector = Collector()
    calls = []
    done = threading.Event()

    class FailingOnce:
        def export(self, progress, collector):
            calls.append(progress)
            if len(calls) == 1:
                raise OSError('network unreachable')
            done.set()

        def close(self):
            pass
    runtime = MetricsRuntime(collector, None, FailingOnce(), False, 0.01)
    with caplog.at_level(logging.ERROR, 'zope.pipeline.metrics'):
        runtime.start()
        assert done.wait(5)
    assert 'Exporting request metrics failed' in caplog.text


def test_under_mod_wsgi_the_worker_stops_at_its_shutdown(
        monkeypatch, stopped):
    from tests.unit.test_metrics_modwsgi import FakeModWsgi
    module = FakeModWsgi([{'sample_period': 1.0,
                           'capacity_utilization': 0.5}])
    monkeypatch.setitem(sys.modules, 'mod_wsgi', module)
    collector = Collector(clock=FakeClock())
    runtime = MetricsRuntime(collector, None, None, True, 3600.0)
    runtime.start()
    assert module.recording and runtime.reader is not None
    (callback,) = module.shutdown_callbacks
    callback('process_stopping', shutdown_reason='requests')
    assert not runtime.running and runtime.reader is None
    # A reader was released, so the next runtime may claim it again.
    assert modwsgi.claim_reader(module) is not None


def test_the_worker_samples_mod_wsgi_beside_our_numbers(monkeypatch):
    from tests.unit.test_metrics_modwsgi import FakeModWsgi
    module = FakeModWsgi([{'sample_period': 10.0,
                           'capacity_utilization': 0.5}])
    collector = Collector(step=10, clock=FakeClock(1000))
    runtime = MetricsRuntime(collector, None, None, True)
    runtime.reader = modwsgi.ModWsgiReader(module)
    runtime.flush(1010)
    runtime.flush(1020)
    (step,) = [step for step in collector.snapshot()['steps']
               if step['start'] == 1000]
    assert step['server_busy'] / step['server_capacity'] == 0.5


def test_a_forked_child_starts_its_own_worker(stopped):
    runtime = MetricsRuntime(Collector(), None, None, False, 3600.0)
    runtime.start()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.write(writer, b'running' if runtime.running else b'stopped')
        os._exit(0)
    os.close(writer)
    answer = os.read(reader, 20)
    os.close(reader)
    os.waitpid(pid, 0)
    assert answer == b'stopped'
    assert runtime.running


def test_a_runtime_that_is_gone_is_not_called_after_a_fork():
    runtime = MetricsRuntime(Collector(), None, None, False)
    forget = runtime_module.weakref.WeakMethod(runtime._forget_after_fork)
    runtime.running = True
    runtime_module._call(forget)
    assert not runtime.running
    del runtime
    runtime_module._call(forget)            # gone: nothing happens


def test_stopping_from_the_worker_thread_itself_does_not_join_it(stopped):
    runtime = MetricsRuntime(Collector(), None, None, False, 3600.0)
    runtime.start()
    runtime.thread = threading.current_thread()
    runtime.stop()
    assert not runtime.running
    atexit.unregister(runtime.stop)
