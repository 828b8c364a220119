"""wrk beside ab: reading wrk's --latency output and verifying its runs."""

import os

import pytest

from benchmarks import wrk
from benchmarks.stats import ServerCounts

SAMPLES = os.path.join(os.path.dirname(__file__), 'bench_samples')


def sample(name):
    with open(os.path.join(SAMPLES, name)) as sample_file:
        return sample_file.read()


def test_a_clean_wrk_run_gives_rate_count_and_latency_percentiles():
    result = wrk.parse_wrk_output(sample('wrk-ok.txt'))
    assert result.complete == 266
    assert result.duration_s == pytest.approx(2.03)
    assert result.requests_per_second == pytest.approx(131.09)
    assert result.mean_ms == pytest.approx(52.71)
    assert result.p50 == pytest.approx(50.96)
    assert result.p99 == pytest.approx(136.14)
    assert result.percentiles[75.0] == pytest.approx(63.56)
    assert result.failed == 0 and result.non_2xx == 0


def test_socket_errors_non_2xx_and_second_or_microsecond_latencies_are_read():
    result = wrk.parse_wrk_output(sample('wrk-errors.txt'))
    assert result.socket_errors == {'connect': 0, 'read': 2, 'write': 0,
                                    'timeout': 1}
    assert result.failed == 3
    assert result.non_2xx == 4
    assert result.mean_ms == pytest.approx(1200.0)
    assert result.p50 == pytest.approx(0.85)
    assert result.p99 == pytest.approx(1880.0)


def test_wrk_that_could_not_connect_has_no_result():
    with pytest.raises(wrk.WrkOutputError):
        wrk.parse_wrk_output(sample('wrk-refused.txt'))


def test_a_duration_in_an_unknown_unit_is_refused():
    with pytest.raises(wrk.WrkOutputError):
        wrk.milliseconds('3h')


def test_the_wrk_command_is_the_one_the_brief_names():
    assert wrk.wrk_command('http://h/p') == [
        'wrk', '-t2', '-c8', '-d5s', '--latency', 'http://h/p']
    assert wrk.WrkLoad().label == 'wrk -c 8'
    assert wrk.WrkLoad(4).concurrency == 4


@pytest.mark.parametrize('served, valid', [
    (266, True), (274, True), (275, False), (265, False)])
def test_server_count_must_lie_within_one_in_flight_request_per_connection(
        served, valid):
    result = wrk.parse_wrk_output(sample('wrk-ok.txt'))
    verification = wrk.verify_wrk(result, ServerCounts(served, served),
                                  connections=8)
    assert verification.valid is valid


def test_a_wrk_run_with_errors_is_invalid_and_says_why():
    result = wrk.parse_wrk_output(sample('wrk-errors.txt'))
    verification = wrk.verify_wrk(result, ServerCounts(31, 26, 0, 0, 5), 8)
    assert not verification.valid
    assert len(verification.problems) == 3
    assert not wrk.verify_wrk(None, ServerCounts(), 8).valid
