"""wrk, the second load generator: its command, its output, a verified run.

wrk runs for a duration over persistent (keep-alive) connections, so its
figures compare with ``ab -k``.  It runs with ``wrk_count.lua``, which
counts, per wrk thread, the requests wrk wrote (``request()``, called for
every request it starts writing, also after a reconnect) and the
responses it received (``response()``); ``done()`` prints the sums.  When
the duration ends, wrk stops with at most one request in flight on each
connection: written, never answered.  The server may still finish those,
so after the run the harness waits until the server's count reaches the
requests wrk wrote (or stops changing).  A run is verified exactly: the
script's count of responses equals wrk's, no socket error and no error
status, and the server counted at least every response wrk received and
at most every request wrk wrote -- its surplus over wrk's count is the
requests wrk abandoned in flight (never more than its connections).
"""

import dataclasses
import os
import re
import subprocess

from benchmarks import serverside
from benchmarks.scripts import PROJECT_ROOT
from benchmarks.stats import Run
from benchmarks.stats import ServerCounts
from benchmarks.stats import Verification
from benchmarks.stats import summarize

WRK = 'wrk'

#: The counting script, relative to the checkout (wrk runs there).
SCRIPT = os.path.join('benchmarks', 'wrk_count.lua')
#: After a run, the servers' count is awaited until it reaches the
#: requests wrk wrote, or has not changed for this many seconds, or at
#: most this long: a request wrk abandoned in flight is finished (and
#: counted) by a server after wrk has exited; counted later, it would land
#: in the next run's figures.
SETTLE_QUIET = 1.0
SETTLE_TIMEOUT = 10.0

_UNITS_MS = {'us': 0.001, 'ms': 1.0, 's': 1000.0, 'm': 60000.0}
_DURATION = re.compile(r'^(\d+(?:\.\d+)?)(us|ms|s|m)$')
_PERCENTILE = re.compile(r'^\s+(\d+(?:\.\d+)?)%\s+(\S+)\s*$')
_TOTAL = re.compile(r'^\s*(\d+) requests in (\S+),')
_RATE = re.compile(r'^Requests/sec:\s+(\d+(?:\.\d+)?)\s*$')
_LATENCY = re.compile(r'^\s+Latency\s+(\S+)\s')
_SOCKET_ERRORS = re.compile(r'^\s*Socket errors: connect (\d+), read (\d+), '
                            r'write (\d+), timeout (\d+)')
_NON_2XX = re.compile(r'^\s*Non-2xx or 3xx responses: (\d+)')
_ACCOUNTING = re.compile(r'^wrk accounting: sent (-?\d+), received (\d+), '
                         r'threads (\d+), completed (\d+)\s*$')


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
    #: What wrk_count.lua counted: requests written, responses received
    #: (None when the script did not run).
    sent: int = None
    received: int = None

    @property
    def in_flight(self):
        """Requests written and never answered when wrk stopped."""
        if self.sent is None or self.received is None:
            return None
        return self.sent - self.received

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
        return
    match = _ACCOUNTING.match(line)
    if match:
        found['sent'] = int(match.group(1))
        found['received'] = int(match.group(2))


def wrk_command(url, connections=8, threads=2, duration_s=5, script=SCRIPT):
    return [WRK, '-t%d' % threads, '-c%d' % connections,
            '-d%ds' % duration_s, '--latency', '-s', script, url]


def verify_wrk(result, served, connections):
    """A wrk run is valid when it saw no socket error and no non-2xx
    response, the server sent no error, the script's count of responses is
    wrk's, and the server counted between the responses wrk received and
    the requests it wrote, which differ by at most one request in flight
    per connection."""
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
    if result.in_flight is None:
        problems.append('wrk printed no accounting (did %s run?)' % SCRIPT)
        return Verification(False, problems)
    problems.extend(_accounting_problems(result, served, connections))
    return Verification(not problems, problems)


def _accounting_problems(result, served, connections):
    problems = []
    if result.received != result.complete:
        problems.append('the script counted %d responses, wrk %d'
                        % (result.received, result.complete))
    if not 0 <= result.in_flight <= connections:
        problems.append('wrk wrote %d requests and received %d responses: '
                        '%d unanswered, more than its %d connections can '
                        'have in flight' % (result.sent, result.received,
                                            result.in_flight, connections))
    if served.total < result.received:
        problems.append('the server counted %d responses, fewer than the %d '
                        'wrk received' % (served.total, result.received))
    if served.total > result.sent:
        problems.append('the server counted %d responses, more than the %d '
                        'requests wrk wrote' % (served.total, result.sent))
    return problems


def in_flight_note(values):
    """'7 in flight at the end', or '5–8 ...' over several runs."""
    values = [value for value in values if value is not None]
    if not values:
        return None
    low, high = min(values), max(values)
    span = '%d' % low if low == high else '%d–%d' % (low, high)
    return '%s in flight at the end' % span


def record_accounting(data, runs):
    """Add wrk's counts to a measurement's dict (made by the harness):
    each run's requests written, responses received and abandoned in
    flight, and the measurement's list of the latter."""
    for run_data, run in zip(data['runs'], runs):
        result = run.result
        run_data.update(sent=result and result.sent,
                        received=result and result.received,
                        in_flight=result and result.in_flight)
    data['in_flight'] = [run_data['in_flight'] for run_data in data['runs']]
    return data


def run_wrk(url, connections, duration_s, timeout=None):
    """Run wrk (in the checkout, where its script is); return (WrkResult or
    None, printed text, command)."""
    command = wrk_command(url, connections, duration_s=duration_s)
    completed = subprocess.run(command, capture_output=True, text=True,
                               timeout=timeout, cwd=PROJECT_ROOT)
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
    expected = result.sent if result is not None else None
    served = serverside.wait_for_counts(server.count_dir, before, expected,
                                        timeout=SETTLE_TIMEOUT,
                                        quiet=SETTLE_QUIET)
    verification = verify_wrk(result, served, connections)
    if result is None:
        verification.problems.append(text.strip()[-500:])
    return Run(result, served, verification, ' '.join(command))


def describe(run):
    """'verified, 7 in flight at the end' or the problems."""
    text = run.verification.describe()
    if not run.verification.valid:
        return text
    return '%s, %s' % (text, in_flight_note([run.result.in_flight]))


def measure(server, path, connections, duration_s, repeats, log=print):
    """``repeats`` verified wrk runs; return (runs, Summary).  Responses
    the server is still finishing (a readiness probe's, the last of a
    warm-up) are counted before the first run."""
    serverside.wait_for_counts(server.count_dir, ServerCounts(), None,
                               timeout=SETTLE_TIMEOUT, quiet=0.5)
    runs = []
    for number in range(1, repeats + 1):
        run = measure_once(server, path, connections, duration_s)
        runs.append(run)
        log('    %s wrk -c %d run %d: %s req/s, %s' % (
            server.config.label, connections, number,
            '%.0f' % run.result.requests_per_second if run.result else '-',
            describe(run)))
    return runs, summarize(runs)
