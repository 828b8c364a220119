"""The statsd exporter (pystatsd's client), against a UDP socket on
127.0.0.1."""

import socket
import threading

import pytest

from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.statsd import MAX_DATAGRAM
from zope.pipeline.metrics.statsd import StatsdExporter
from zope.pipeline.metrics.statsd import connect
from zope.pipeline.metrics.statsd import metric_name
from zope.pipeline.metrics.statsd import parse_address
from zope.pipeline.stages.metrics import MetricsStage


class FakeClock:

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def udp_server():
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(('127.0.0.1', 0))
    server.settimeout(5)
    yield server
    server.close()


def received_lines(server, count):
    lines = []
    while len(lines) < count:
        lines += server.recv(65536).decode('ascii').split('\n')
    return lines


def finished(collector, begin, end, view, status='200 OK', size=0,
             attempt=1):
    record = collector.begin(begin)
    record.view, record.status, record.bytes = view, status, size
    record.attempt = attempt
    record.blocks = 1 if size else 0
    collector.finish(record, end)


def test_timers_counters_and_capacity_reach_a_statsd_server(udp_server):
    collector = Collector(step=10, threads=1, clock=FakeClock(1000))
    finished(collector, 1001, 1001.25, 'Page:index.html', size=300)
    finished(collector, 1002, 1002.5, 'Page:index.html', attempt=2,
             status='500 Internal Server Error', size=20)
    finished(collector, 1003, 1003.25, None, status='404 Not Found')
    exporter = StatsdExporter('127.0.0.1:%d' % udp_server.getsockname()[1])
    exporter.export(collector.advance(1010), collector)
    lines = received_lines(udp_server, 12)
    assert sorted(lines) == sorted([
        'zope.pipeline.Page_index_html.time:250.000000|ms',
        'zope.pipeline.Page_index_html.time:500.000000|ms',
        'zope.pipeline.none.time:250.000000|ms',
        'zope.pipeline.Page_index_html.requests:2|c',
        'zope.pipeline.Page_index_html.bytes:320|c',
        'zope.pipeline.Page_index_html.blocks:2|c',
        'zope.pipeline.Page_index_html.retries:1|c',
        'zope.pipeline.Page_index_html.status.200:1|c',
        'zope.pipeline.Page_index_html.status.500:1|c',
        'zope.pipeline.none.requests:1|c',
        'zope.pipeline.none.status.404:1|c',
        'zope.pipeline.capacity_utilization:0.1|g'])
    exporter.close()
    exporter.close()


def test_the_prefix_is_a_setting_and_unknown_steps_send_no_gauge(
        udp_server):
    collector = Collector(step=10, heartbeat=10, clock=FakeClock(1000))
    finished(collector, 1001, 1002, 'A')
    progress = collector.advance(1100)          # no known time at all
    exporter = StatsdExporter('127.0.0.1:%d' % udp_server.getsockname()[1],
                              prefix='site.')
    exporter.export(progress, collector)
    assert received_lines(udp_server, 3) == [
        'site.A.time:1000.000000|ms', 'site.A.requests:1|c',
        'site.A.status.200:1|c']
    exporter.close()


class RecordingSocket:
    """Takes every datagram offered, keeping it."""

    def __init__(self):
        self.offered = []

    def sendto(self, data, target):
        self.offered.append(data)

    def close(self):
        pass


def test_a_flush_with_nothing_to_report_sends_nothing():
    collector = Collector(step=10, clock=FakeClock(1000))
    exporter = StatsdExporter('127.0.0.1:9')
    assert exporter.stats(collector.advance(1001), collector) == []
    exporter.client = connect('127.0.0.1', 9, None)
    exporter.client._sock.close()
    recording = exporter.client._sock = RecordingSocket()
    exporter.export(collector.advance(1002), collector)
    assert recording.offered == []
    finished(collector, 1003, 1004, 'A')
    exporter.export(collector.advance(1015), collector)
    assert recording.offered  # the same socket takes what there is
    exporter.close()


def test_the_socket_never_blocks_the_worker():
    exporter = StatsdExporter('127.0.0.1:9')
    collector = Collector(clock=FakeClock(1000))
    exporter.export(collector.advance(1001), collector)
    assert exporter.client._sock.getblocking() is False
    exporter.close()


def test_a_datagram_the_socket_cannot_take_is_dropped_not_waited_for():
    """A full socket raises BlockingIOError: the flush goes on without
    waiting, and what it dropped is not sent again with the next one."""
    class FullSocket:
        def __init__(self):
            self.offered = []

        def sendto(self, data, target):
            self.offered.append(data)
            raise BlockingIOError('would block')

        def close(self):
            pass

    class TakingSocket(FullSocket):
        def sendto(self, data, target):
            self.offered.append(data)

    collector = Collector(clock=FakeClock(1000))
    finished(collector, 1001, 1002, 'A')
    exporter = StatsdExporter('127.0.0.1:9')
    exporter.export(collector.advance(1003), collector)
    exporter.client._sock.close()
    full = exporter.client._sock = FullSocket()
    finished(collector, 1004, 1005, 'Dropped')
    exporter.export(collector.advance(1006), collector)
    assert any(b'Dropped.requests:1|c' in data for data in full.offered)
    taking = exporter.client._sock = TakingSocket()
    finished(collector, 1007, 1008, 'Sent')
    exporter.export(collector.advance(1009), collector)
    sent = b'\n'.join(taking.offered)
    assert b'Sent.requests:1|c' in sent
    assert b'Dropped' not in sent
    exporter.close()


def test_an_ipv6_address_gets_an_ipv6_socket():
    exporter = StatsdExporter('[::1]:9')
    collector = Collector(clock=FakeClock(1000))
    try:
        exporter.export(collector.advance(1001), collector)
    except OSError:  # pragma: no cover - a host without IPv6
        pytest.skip('no IPv6 here')
    assert exporter.client._sock.family == socket.AF_INET6
    exporter.close()


def test_a_host_name_is_looked_up_as_ipv4_as_pystatsd_does():
    exporter = StatsdExporter('localhost:9')
    collector = Collector(clock=FakeClock(1000))
    exporter.export(collector.advance(1001), collector)
    assert exporter.client._sock.family == socket.AF_INET
    exporter.close()


def test_many_requests_are_packed_into_datagrams_below_the_limit(
        udp_server):
    collector = Collector(step=10, clock=FakeClock(1000))
    for number in range(100):
        finished(collector, 1001, 1001.5, 'View%d' % number)
    exporter = StatsdExporter('127.0.0.1:%d' % udp_server.getsockname()[1])
    exporter.export(collector.advance(1005), collector)
    datagrams = []
    lines = 0
    while lines < 300:
        datagrams.append(udp_server.recv(65536))
        lines += datagrams[-1].count(b'\n') + 1
    assert len(datagrams) > 1
    assert all(len(datagram) <= MAX_DATAGRAM for datagram in datagrams)
    exporter.close()


def test_view_names_become_one_statsd_path_segment():
    assert metric_name('Page:index.html') == 'Page_index_html'
    assert metric_name('Folder.view') == 'Folder_view'
    assert metric_name(':::') == '_'


def test_addresses_are_host_and_port():
    assert parse_address('127.0.0.1:8125') == ('127.0.0.1', 8125)
    assert parse_address('[::1]:8125') == ('::1', 8125)
    for text in ('localhost', ':8125', 'host:port'):
        with pytest.raises(ValueError, match='host:port'):
            parse_address(text)


def test_statsd_is_sent_from_the_worker_thread_never_the_request_thread(
        clean_zope, udp_server):
    stage = MetricsStage(
        lambda environ, start_response: (
            start_response('200 OK', []), [b'ok'])[1],
        statsd='127.0.0.1:%d' % udp_server.getsockname()[1],
        flush_interval=0.02, modwsgi=False)
    senders = []
    export = stage.runtime.statsd.export

    def recording_export(progress, collector):
        if progress.records:
            senders.append(threading.current_thread())
        export(progress, collector)
    stage.runtime.statsd.export = recording_export
    for _ in range(3):
        stage({'REQUEST_METHOD': 'GET', 'PATH_INFO': '/'},
              lambda status, headers, exc_info=None: None)
    lines = received_lines(udp_server, 1)
    assert any(line.startswith('zope.pipeline.none.time:') for line in lines)
    assert senders and all(thread.name == 'zope.pipeline.metrics'
                           for thread in senders)
    assert threading.current_thread() not in senders


def test_without_pystatsd_the_setting_names_the_extra(monkeypatch):
    import importlib.util
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name: (
        None if name == 'statsd' else real_find_spec(name)))
    with pytest.raises(ValueError, match=r'zope\.pipeline\[statsd\]'):
        parse_address('127.0.0.1:8125')
