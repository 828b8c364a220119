"""wrk, the second load generator: its command, its output, a verified run.

wrk runs for a duration over persistent (keep-alive) connections, so its
figures compare with ``ab -k``.  It counts the requests it completed; when
the duration ends it closes its connections with up to one request in
flight on each, which the server may still finish and count.  A wrk run
is therefore verified with a tolerance: the server's count lies between
wrk's count and wrk's count plus the number of connections.
"""

import dataclasses
import re
import subprocess

from benchmarks import serverside
from benchmarks.stats import Run
from benchmarks.stats import Verification
from benchmarks.stats import summarize

WRK = 'wrk'

_UNITS_MS = {'us': 0.001, 'ms': 1.0, 's': 1000.0, 'm': 60000.0}
_DURATION = re.compile(r'^(\d+(?:\.\d+)?)(us|ms|s|m)$')
_PERCENTILE = re.compile(r'^\s+(\d+(?:\.\d+)?)%\s+(\S+)\s*$')
_TOTAL = re.compile(r'^\s*(\d+) requests in (\S+),')
_RATE = re.compile(r'^Requests/sec:\s+(\d+(?:\.\d+)?)\s*$')
_LATENCY = re.compile(r'^\s+Latency\s+(\S+)\s')
_SOCKET_ERRORS = re.compile(r'^\s*Socket errors: connect (\d+), read (\d+), '
                            r'write (\d+), timeout (\d+)')
_NON_2XX = re.compile(r'^\s*Non-2xx or 3xx responses: (\d+)')


@dataclasses.dataclass(frozen=True)
class WrkLoad:
    """How wrk loads the server (shown beside ab's loads)."""

    connections: int = 8
    duration_s: int = 5
    requests: int = 0
    keep_alive: bool = True

    @property
    def concurrency(self):
        return self.connections

    @property
    def label(self):
        return 'wrk -c %d' % self.connections


class WrkOutputError(ValueError):
    """wrk printed no summary (it could not connect, or was not run)."""


@dataclasses.dataclass
class WrkResult:
    """What one wrk run printed; latencies in milliseconds."""

    complete: int
    duration_s: float
    requests_per_second: float
    mean_ms: float
    percentiles: dict
    socket_errors: dict
    non_2xx: int

    @property
    def p50(self):
        return self.percentiles.get(50.0)

    @property
    def p99(self):
        return self.percentiles.get(99.0)

    @property
    def failed(self):
        """Socket errors of every kind, as ab's 'failed requests'."""
        return sum(self.socket_errors.values())

    failed_detail = None


def milliseconds(text):
    """wrk's '52.71ms', '1.20s', '850.00us' in milliseconds."""
    match = _DURATION.match(text)
    if match is None:
        raise WrkOutputError('Not a wrk duration: %r' % text)
    return float(match.group(1)) * _UNITS_MS[match.group(2)]


def seconds(text):
    return milliseconds(text) / 1000.0


def parse_wrk_output(text):
    """The figures of ``wrk --latency`` output; WrkOutputError without a
    summary."""
    found = {'percentiles': {}, 'non_2xx': 0,
             'socket_errors': dict.fromkeys(
                 ('connect', 'read', 'write', 'timeout'), 0)}
    for line in text.splitlines():
        _read_line(line, found)
    missing = {'complete', 'requests_per_second', 'mean_ms'} - set(found)
    if missing:
        raise WrkOutputError('wrk printed no %s:\n%s'
                             % (', '.join(sorted(missing)), text[-500:]))
    return WrkResult(**found)


def _read_line(line, found):
    match = _PERCENTILE.match(line)
    if match:
        found['percentiles'][float(match.group(1))] = milliseconds(
            match.group(2))
        return
    match = _TOTAL.match(line)
    if match:
        found['complete'] = int(match.group(1))
        found['duration_s'] = seconds(match.group(2))
        return
    match = _RATE.match(line)
    if match:
        found['requests_per_second'] = float(match.group(1))
        return
    match = _LATENCY.match(line)
    if match:
        found['mean_ms'] = milliseconds(match.group(1))
        return
    match = _SOCKET_ERRORS.match(line)
    if match:
        found['socket_errors'] = dict(zip(
            ('connect', 'read', 'write', 'timeout'),
            (int(value) for value in match.groups())))
        return
    match = _NON_2XX.match(line)
    if match:
        found['non_2xx'] = int(match.group(1))


def wrk_command(url, connections=8, threads=2, duration_s=5):
    return [WRK, '-t%d' % threads, '-c%d' % connections,
            '-d%ds' % duration_s, '--latency', url]


def tolerance_note(connections):
    return ('count within in-flight tolerance (<= %d connections)'
            % connections)


def verify_wrk(result, served, connections):
    """A wrk run is valid when it saw no socket error and no non-2xx
    response, the server sent no error, and the server counted between
    wrk's completed requests and that plus one in flight per connection."""
    if result is None:
        return Verification(False, ['wrk printed no result'])
    problems = []
    if result.failed:
        problems.append('wrk counted socket errors %s'
                        % result.socket_errors)
    if result.non_2xx:
        problems.append('wrk counted %d non-2xx responses' % result.non_2xx)
    errors = served.s3xx + served.s4xx + served.s5xx
    if errors:
        problems.append('the server sent %d non-2xx responses' % errors)
    extra = served.total - result.complete
    if not 0 <= extra <= connections:
        problems.append('the server counted %d responses, wrk %d (more '
                        'than %d apart)' % (served.total, result.complete,
                                            connections))
    return Verification(not problems, problems)


def run_wrk(url, connections, duration_s, timeout=None):
    """Run wrk; return (WrkResult or None, printed text, command)."""
    command = wrk_command(url, connections, duration_s=duration_s)
    completed = subprocess.run(command, capture_output=True, text=True,
                               timeout=timeout)
    text = completed.stdout + completed.stderr
    try:
        result = parse_wrk_output(completed.stdout)
    except WrkOutputError:
        result = None
    return result, text, command


def measure_once(server, path, connections, duration_s):
    before = serverside.total_counts(server.count_dir)
    result, text, command = run_wrk(server.url(path), connections,
                                    duration_s, timeout=duration_s + 60)
    expected = result.complete if result is not None else 0
    served = serverside.wait_for_counts(server.count_dir, before, expected)
    verification = verify_wrk(result, served, connections)
    if result is None:
        verification.problems.append(text.strip()[-500:])
    return Run(result, served, verification, ' '.join(command))


def measure(server, path, connections, duration_s, repeats, log=print):
    """``repeats`` verified wrk runs; return (runs, Summary)."""
    runs = []
    for number in range(1, repeats + 1):
        run = measure_once(server, path, connections, duration_s)
        runs.append(run)
        log('    %s wrk -c %d run %d: %s req/s, %s' % (
            server.config.label, connections, number,
            '%.0f' % run.result.requests_per_second if run.result else '-',
            run.verification.describe()))
    return runs, summarize(runs)
