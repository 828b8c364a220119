"""wrk beside ab: reading wrk's --latency output and its counting script's
line, and verifying its runs exactly against the server's count."""

import dataclasses
import os
import shutil
import threading
import time

import pytest

from benchmarks import serverside  # noqa: E402
from benchmarks import wrk  # noqa: E402
from benchmarks.scripts import PROJECT_ROOT  # noqa: E402
from benchmarks.scripts import ceiling_script  # noqa: E402
from benchmarks.servers import ServerConfig  # noqa: E402
from benchmarks.servers import serving  # noqa: E402
from benchmarks.stats import Run  # noqa: E402
from benchmarks.stats import ServerCounts  # noqa: E402
from benchmarks.stats import Verification  # noqa: E402
from benchmarks.workspace import Workspace  # noqa: E402
from conftest import need  # noqa: E402

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


def test_the_wrk_command_is_the_one_the_brief_names_with_the_script():
    assert wrk.wrk_command('http://h/p') == [
        'wrk', '-t2', '-c8', '-d5s', '--latency', '-s',
        'benchmarks/wrk_count.lua', 'http://h/p']
    assert os.path.isfile(os.path.join(PROJECT_ROOT, wrk.SCRIPT))
    assert wrk.WrkLoad().label == 'wrk -c 8'
    assert wrk.WrkLoad(4).concurrency == 4


# -- exact accounting


def counted():
    """A real run of wrk with the counting script: 7161 requests written,
    7153 responses received, 8 abandoned in flight."""
    return wrk.parse_wrk_output(sample('wrk-counted.txt'))


def test_the_scripts_line_gives_requests_written_and_responses_received():
    result = counted()
    assert result.complete == 7153
    assert result.requests_per_second == pytest.approx(3558.0)
    assert (result.sent, result.received) == (7161, 7153)
    assert result.in_flight == 8


def test_output_without_the_scripts_line_has_no_accounting():
    result = wrk.parse_wrk_output(sample('wrk-ok.txt'))
    assert (result.sent, result.received, result.in_flight) == (
        None, None, None)
    verification = wrk.verify_wrk(result, ServerCounts(266, 266), 8)
    assert not verification.valid
    assert verification.problems == [
        'wrk printed no accounting (did benchmarks/wrk_count.lua run?)']


@pytest.mark.parametrize('served', [7153, 7157, 7161])
def test_a_server_count_from_received_to_written_is_verified(served):
    """The server finished none, some or all of the abandoned requests."""
    verification = wrk.verify_wrk(counted(), ServerCounts(served, served), 8)
    assert verification.valid, verification.problems


def test_a_server_count_above_the_requests_written_is_not_verified():
    verification = wrk.verify_wrk(counted(), ServerCounts(7162, 7162), 8)
    assert not verification.valid
    assert verification.problems == [
        'the server counted 7162 responses, more than the 7161 requests wrk '
        'wrote']


def test_a_server_count_below_the_responses_received_is_not_verified():
    verification = wrk.verify_wrk(counted(), ServerCounts(7152, 7152), 8)
    assert not verification.valid
    assert verification.problems == [
        'the server counted 7152 responses, fewer than the 7153 wrk received']


def test_the_scripts_count_of_responses_must_be_wrks():
    result = dataclasses.replace(counted(), received=7155)
    verification = wrk.verify_wrk(result, ServerCounts(7160, 7160), 8)
    assert verification.problems == [
        'the script counted 7155 responses, wrk 7153']


@pytest.mark.parametrize('sent', [7170, 7152])
def test_more_unanswered_requests_than_connections_are_not_verified(sent):
    """At most one request per connection is in flight when wrk stops;
    more were lost during the run, fewer than none is a miscount."""
    result = dataclasses.replace(counted(), sent=sent)
    verification = wrk.verify_wrk(result, ServerCounts(7153, 7153), 8)
    assert not verification.valid
    assert verification.problems[0].startswith(
        'wrk wrote %d requests and received 7153 responses: %d unanswered'
        % (sent, sent - 7153))


def test_a_wrk_run_with_errors_is_invalid_and_says_why():
    result = wrk.parse_wrk_output(sample('wrk-errors.txt'))
    verification = wrk.verify_wrk(result, ServerCounts(31, 26, 0, 0, 5), 8)
    assert not verification.valid
    assert verification.problems[:3] == [
        "wrk counted socket errors {'connect': 0, 'read': 2, 'write': 0, "
        "'timeout': 1}", 'wrk counted 4 non-2xx responses',
        'the server sent 5 non-2xx responses']
    assert not wrk.verify_wrk(None, ServerCounts(), 8).valid


def test_in_flight_counts_are_noted_as_one_number_or_a_range():
    assert wrk.in_flight_note([8, 8, 8]) == '8 in flight at the end'
    assert wrk.in_flight_note([5, None, 8, 0]) == '0–8 in flight at the end'
    assert wrk.in_flight_note([None]) is None
    assert wrk.in_flight_note([]) is None


def test_a_measurement_records_each_runs_counts():
    result = counted()
    runs = [Run(result, ServerCounts(7161, 7161), Verification(True, [])),
            Run(None, ServerCounts(), Verification(False, ['no result']))]
    data = {'runs': [{'command': 'wrk'}, {'command': 'wrk'}]}
    assert wrk.record_accounting(data, runs) is data
    assert data['in_flight'] == [8, None]
    assert data['runs'][0] == {'command': 'wrk', 'sent': 7161,
                               'received': 7153, 'in_flight': 8}
    assert data['runs'][1]['sent'] is None
    assert wrk.describe(runs[0]) == 'verified, 8 in flight at the end'
    assert wrk.describe(runs[1]) == 'no result'


# -- waiting for the server to count the abandoned requests


def counting(tmp_path):
    return serverside.CountingMiddleware(None, str(tmp_path))


def record_later(middleware, count, delay):
    timer = threading.Timer(delay, lambda: [
        middleware.record('200 OK') for _ in range(count)])
    timer.start()
    return timer


def test_counts_are_awaited_until_every_written_request_is_counted(
        tmp_path):
    middleware = counting(tmp_path)
    middleware.record('200 OK')
    before = serverside.total_counts(str(tmp_path))
    timer = record_later(middleware, 3, 0.2)
    try:
        served = serverside.wait_for_counts(str(tmp_path), before,
                                            expected=3, quiet=30.0,
                                            timeout=60.0)
    finally:
        timer.join()
    assert served == ServerCounts(3, 3)


def test_counts_that_stop_changing_short_of_the_written_are_returned(
        tmp_path):
    """The server may drop an abandoned request (its connection closed
    before it was served): the count settles below the requests written."""
    middleware = counting(tmp_path)
    before = serverside.total_counts(str(tmp_path))
    middleware.record('200 OK')
    middleware.record('200 OK')
    started = time.monotonic()
    served = serverside.wait_for_counts(str(tmp_path), before, expected=5,
                                        quiet=0.5, timeout=60.0)
    assert served == ServerCounts(2, 2)
    assert time.monotonic() - started < 50.0  # the quiet, not the timeout


def test_unknown_written_requests_wait_for_a_quiet_count_within_timeout(
        tmp_path):
    middleware = counting(tmp_path)
    middleware.record('200 OK')
    before = serverside.total_counts(str(tmp_path))
    assert serverside.wait_for_counts(str(tmp_path), before, expected=None,
                                      quiet=0.05) == ServerCounts()
    assert serverside.wait_for_counts(str(tmp_path), before, expected=1,
                                      quiet=60.0,
                                      timeout=0.05) == ServerCounts()


# -- wrk against a real server


@pytest.mark.integration
def test_consecutive_wrk_runs_are_each_verified_exactly(tmp_path):
    """Requests abandoned at the end of one run are counted in that run,
    not the next; the -1 for wrk's verifying call to request() holds (the
    server counts every request written when it finishes them all)."""
    need(shutil.which(wrk.WRK) is not None, 'wrk is not installed')
    lines = []
    with Workspace(root=str(tmp_path)) as workspace:
        with serving(ServerConfig('waitress', 1, 4), workspace, 'ceiling',
                     lambda count_dir, log_dir: ceiling_script(
                         2000, count_dir, log_dir), '/') as server:
            runs, summary = wrk.measure(server, '/', 8, 1, 3,
                                        log=lines.append)
    assert summary.verified, summary.problems
    for run in runs:
        assert 0 <= run.result.in_flight <= 8
        assert (run.result.received <= run.served.total
                <= run.result.sent)
        assert run.command.endswith('-s benchmarks/wrk_count.lua '
                                    'http://127.0.0.1:%d/' % server.port)
    assert all('verified, ' in line and 'in flight at the end' in line
               for line in lines), lines


class Unreachable:
    """A server that is not there: wrk cannot connect."""

    config = ServerConfig('waitress', 1, 1)

    def __init__(self, count_dir):
        self.count_dir = count_dir

    def url(self, path):
        from benchmarks.servers import free_port
        return 'http://127.0.0.1:%d%s' % (free_port(), path)


def test_a_wrk_that_cannot_connect_gives_an_unverified_run_saying_why(
        tmp_path):
    need(shutil.which(wrk.WRK) is not None, 'wrk is not installed')
    lines = []
    runs, summary = wrk.measure(Unreachable(str(tmp_path)), '/', 2, 1, 1,
                                log=lines.append)
    assert runs[0].result is None
    assert runs[0].verification.problems[0] == 'wrk printed no result'
    assert 'unable to connect' in runs[0].verification.problems[1]
    assert not summary.verified
    assert lines[0].endswith('run 1: - req/s, wrk printed no result; %s'
                             % runs[0].verification.problems[1])
