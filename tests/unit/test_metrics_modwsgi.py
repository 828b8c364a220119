"""Reading mod_wsgi's own request metrics (with a stand-in module)."""

import sys
import types

import pytest

from zope.pipeline.metrics import modwsgi
from zope.pipeline.metrics.collector import Collector


class FakeModWsgi:
    """What ``import mod_wsgi`` gives inside a mod_wsgi daemon process."""

    threads_per_process = 4
    process_group = 'site'

    def __init__(self, samples=()):
        self.samples = list(samples)
        self.recording = False
        self.shutdown_callbacks = []

    def start_recording_metrics(self):
        self.recording = True

    def request_metrics(self):
        return self.samples.pop(0) if self.samples else None

    def subscribe_shutdown(self, callback):
        self.shutdown_callbacks.append(callback)


@pytest.fixture
def released():
    modwsgi.release_reader()
    yield
    modwsgi.release_reader()


def test_one_reader_per_process_and_only_under_mod_wsgi(released):
    module = FakeModWsgi()
    first = modwsgi.claim_reader(module)
    assert first is not None and module.recording
    assert modwsgi.claim_reader(module) is None
    modwsgi.release_reader()
    assert modwsgi.claim_reader(module) is not None


def test_outside_mod_wsgi_there_is_no_reader(released, monkeypatch):
    # The mod_wsgi installer package (mod_wsgi-express) is importable
    # here, but it is not the server module.
    installer = types.ModuleType('mod_wsgi')
    monkeypatch.setitem(sys.modules, 'mod_wsgi', installer)
    assert modwsgi.server_module() is None
    assert modwsgi.claim_reader() is None
    assert modwsgi.threads_per_process(4) == 4
    monkeypatch.setitem(sys.modules, 'mod_wsgi', None)   # not installed
    assert modwsgi.server_module() is None


def test_inside_mod_wsgi_the_server_module_is_found(monkeypatch):
    module = FakeModWsgi()
    monkeypatch.setitem(sys.modules, 'mod_wsgi', module)
    assert modwsgi.server_module() is module
    assert modwsgi.threads_per_process(1) == 4


def test_each_sample_is_spread_over_the_steps_of_its_period(released):
    module = FakeModWsgi([None, {'sample_period': 0.0},
                          {'sample_period': 10.0,
                           'capacity_utilization': 0.25},
                          {'sample_period': 10.0}])
    reader = modwsgi.claim_reader(module)
    collector = Collector(step=10, threads=4, clock=lambda: 1000.0)
    assert reader.sample(collector, 1005.0) is None     # not seeded yet
    assert reader.sample(collector, 1005.0) is None
    assert reader.sample(collector, 1015.0) == 0.25
    assert reader.sample(collector, 1025.0) is None
    collector.advance(1010)
    collector.advance(1020)
    steps = {step['start']: step for step in collector.snapshot()['steps']}
    assert steps[1000]['server_busy'] / steps[1000]['server_capacity'] == \
        pytest.approx(0.25)
    assert steps[1000]['server_capacity'] == pytest.approx(20)
