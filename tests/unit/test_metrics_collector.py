"""Per-process aggregation (zope.pipeline.metrics.collector), on a clock
the tests move by hand."""

import pytest

from zope.pipeline.metrics.collector import NO_VIEW
from zope.pipeline.metrics.collector import Collector
from zope.pipeline.metrics.collector import status_code


class FakeClock:

    def __init__(self, now):
        self.now = float(now)

    def __call__(self):
        return self.now


def request(collector, begin, end, view='Page:index.html', status='200 OK',
            attempt=1, size=0, blocks=0):
    record = collector.begin(begin)
    record.view = view
    record.status = status
    record.attempt = attempt
    record.bytes = size
    record.blocks = blocks
    collector.finish(record, end)
    return record


def test_four_threads_busy_half_of_each_step_read_back_as_50_percent():
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, clock=clock)
    for step_start in range(1000, 1100, 10):
        for thread in range(4):
            for number in range(5):     # five 1 s requests, 1 s apart
                begin = step_start + 2 * number + thread * 0.25
                request(collector, begin, begin + 1)
        collector.advance(step_start + 10)
    for step_start in range(1000, 1100, 10):
        assert collector.utilization(step_start) == pytest.approx(0.5,
                                                                  abs=0.02)


def test_requests_in_flight_at_a_step_end_count_in_the_step_they_ran_in():
    """Four threads each run one 5 s request from 7.5 s into a step to
    2.5 s into the next: every closed step reads 50% at once, before the
    requests that straddle its end have finished."""
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, clock=clock)
    running = []
    for step_start in range(1000, 1060, 10):
        finished_at = step_start + 2.5
        for record in running:
            collector.finish(record, finished_at)
        running = [collector.begin(step_start + 7.5) for _ in range(4)]
        progress = collector.advance(step_start + 10)
        assert [step.start for step in progress.closed] == [step_start]
        expected = 0.25 if step_start == 1000 else 0.5
        assert collector.utilization(step_start) == pytest.approx(expected)
    late = collector.begin(1070.2)      # began after the steps it closes
    for record in running:
        collector.finish(record, 1062.5)
    collector.advance(1070.5)
    assert late.accounted == 1070.2
    assert collector.utilization(1060) == pytest.approx(0.25)
    assert collector.utilization(1050) == pytest.approx(0.5)


def test_a_process_silent_longer_than_the_heartbeat_has_unknown_steps():
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=2, heartbeat=15, clock=clock)
    collector.advance(1010)
    collector.advance(1050)          # 40 s without a sample
    collector.advance(1060)
    assert collector.utilization(1000) == 0.0
    assert [collector.utilization(start) for start in (1010, 1020, 1030,
                                                       1040)] == [None] * 4
    assert collector.utilization(1050) == 0.0


def test_a_step_the_process_started_in_counts_only_its_known_part():
    clock = FakeClock(1004)         # 6 s of step 1000-1010 are known
    collector = Collector(step=10, threads=1, clock=clock)
    request(collector, 1004, 1007)
    collector.advance(1010)
    assert collector.utilization(1000) == pytest.approx(0.5)
    snapshot = collector.snapshot()
    (step,) = snapshot['steps']
    assert step['views']['Page:index.html']['requests'] == \
        pytest.approx(10 / 6)
    assert step['busy'] / step['capacity'] == pytest.approx(0.5)


def test_records_are_aggregated_per_view_and_into_lifetime_totals():
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, bounds=(0.1, 1.0), clock=clock)
    request(collector, 1001, 1001.05, size=100, blocks=2)
    request(collector, 1002, 1002.5, status='500 Internal Server Error',
            attempt=3, size=10, blocks=1)
    request(collector, 1003, 1004, view=None, status='404 Not Found')
    progress = collector.advance(1010)
    assert len(progress.records) == 3
    totals = collector.snapshot()['totals']
    assert totals['Page:index.html'] == {
        'statuses': {'200': 1, '500': 1}, 'bytes': 110, 'blocks': 3,
        'retries': 2, 'duration': pytest.approx(0.55),
        'buckets': [1, 1, 0], 'cache': {}}
    assert totals[NO_VIEW]['statuses'] == {'404': 1}
    assert totals[NO_VIEW]['buckets'] == [0, 1, 0]
    (step,) = collector.snapshot()['steps']
    view = step['views']['Page:index.html']
    assert view['requests'] == 2 and view['errors'] == 1
    assert view['client_errors'] == 0
    assert view['retries'] == 2 and view['bytes'] == 110
    assert view['busy'] == pytest.approx(0.55)
    assert sum(view['latency'].values()) == 2


def test_a_long_request_is_attributed_to_its_view_in_every_step_it_spans():
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=1, clock=clock)
    request(collector, 1005, 1025, view='File:download')
    for now in (1010, 1020, 1030):
        collector.advance(now)
    busy = {step['start']: step['views']['File:download']['busy']
            for step in collector.snapshot()['steps']}
    assert busy == {1000: 5, 1010: 10, 1020: 5}
    assert [collector.utilization(start) for start in (1000, 1010, 1020)] \
        == [0.5, 1.0, 0.5]


def test_a_clock_that_went_back_gives_a_zero_duration():
    collector = Collector(step=10, clock=FakeClock(1000))
    request(collector, 1005, 1004)
    collector.advance(1010)
    assert collector.snapshot()['totals']['Page:index.html'][
        'duration'] == 0


def test_only_the_last_rows_are_kept_and_the_snapshot_shows_closed_ones():
    clock = FakeClock(1000)
    collector = Collector(step=10, rows=3, clock=clock)
    for now in range(1005, 1065, 5):
        collector.advance(now)
    assert sorted(collector.steps) == [1030, 1040, 1050]
    collector.advance(1062)
    assert sorted(collector.steps) == [1040, 1050, 1060]
    assert [step['start'] for step in collector.snapshot()['steps']] == \
        [1040, 1050]
    assert [step['start'] for step in collector.snapshot(1)['steps']] == \
        [1050]


def test_server_utilization_is_spread_over_the_steps_of_its_period():
    collector = Collector(step=10, clock=FakeClock(1000))
    collector.add_server_utilization(1005, 1015, 0.5, 2)
    collector.advance(1020)
    steps = {step['start']: step for step in collector.snapshot()['steps']}
    assert steps[1010]['server_busy'] == pytest.approx(5)
    assert steps[1010]['server_capacity'] == pytest.approx(10)


def test_status_codes_come_from_status_lines():
    assert status_code('204 No Content') == 204
    assert status_code('') == 0
    assert status_code('OK') == 0


def test_each_step_counts_its_4xx_and_5xx_answers_per_view():
    clock = FakeClock(1000)
    collector = Collector(step=10, threads=4, clock=clock)
    for number, status in enumerate(['200 OK', '404 Not Found',
                                     '403 Forbidden', '500 Oops',
                                     '302 Found']):
        record = collector.begin(1000 + number)
        record.view = 'v'
        record.status = status
        collector.finish(record, 1000.5 + number)
    collector.advance(1010)
    (step,) = collector.snapshot()['steps']
    view = step['views']['v']
    assert (view['requests'], view['client_errors'], view['errors']) == (
        5, 2, 1)


def test_response_cache_events_are_totalled_by_view():
    collector = Collector(step=10.0, bounds=(0.1, 1.0), clock=lambda: 1000)
    for events in ({'misses': 1, 'stores': 1},
                   {'hits': 1}, {'hits': 1},
                   {'invalidations': 1, 'misses': 1, 'stores': 1,
                    'evictions': 2}):
        record = collector.begin(1000.0)
        record.view, record.status, record.cache = ('Page:index.html',
                                                    '200 Ok', events)
        collector.finish(record, 1000.1)
    collector.advance(1001)
    assert collector.snapshot()['totals']['Page:index.html']['cache'] == {
        'hits': 2, 'misses': 2, 'stores': 2, 'invalidations': 1,
        'evictions': 2}
