"""Verifying runs against the server's own count, summarising repeats,
and the JSON-ready form of a measurement (``measurement_dict``).

A run is valid when ab completed every request it was asked for, saw no
failure and no non-2xx response, and the servers counted exactly as many
responses as ab completed, none of them an error.  A summary of repeats
reports medians, and is verified only if every run was.
"""

import dataclasses
import statistics

#: Status classes the server-side counter keeps, in file order.
STATUS_CLASSES = ('2xx', '3xx', '4xx', '5xx')


@dataclasses.dataclass(frozen=True)
class ServerCounts:
    """Responses the application finished (``close()`` called), by class."""

    total: int = 0
    s2xx: int = 0
    s3xx: int = 0
    s4xx: int = 0
    s5xx: int = 0
    #: Answered from a stored page (the response cache: an Age header).
    hits: int = 0

    def __add__(self, other):
        return ServerCounts(*(mine + theirs for mine, theirs in
                              zip(self.as_tuple(), other.as_tuple())))

    def __sub__(self, other):
        return ServerCounts(*(mine - theirs for mine, theirs in
                              zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self):
        return dataclasses.astuple(self)


@dataclasses.dataclass
class Verification:
    valid: bool
    problems: list

    def describe(self):
        return 'verified' if self.valid else '; '.join(self.problems)


def verify(result, requested, served, redirects_expected=False):
    """Check an ab result against the server's counts for the same run.

    ``served`` is the difference of the server counts before and after the
    run.  With ``redirects_expected`` (a form that answers 303), every
    non-2xx response must be a 3xx the server counted.
    """
    problems = []
    if result is None:
        return Verification(False, ['ab printed no result'])
    if result.complete != requested:
        problems.append('ab completed %d of %d requests'
                        % (result.complete, requested))
    if result.failed:
        problems.append('ab counted %d failed requests %s'
                        % (result.failed, result.failed_detail or ''))
    problems.extend(_status_problems(result, served, redirects_expected))
    if served.total != result.complete:
        problems.append('the server counted %d responses, ab %d'
                        % (served.total, result.complete))
    return Verification(not problems, problems)


def _status_problems(result, served, redirects_expected):
    problems = []
    if redirects_expected:
        if result.non_2xx != served.s3xx:
            problems.append('ab counted %d non-2xx responses, the server '
                            '%d redirects' % (result.non_2xx, served.s3xx))
    elif result.non_2xx:
        problems.append('ab counted %d non-2xx responses' % result.non_2xx)
    errors = served.s4xx + served.s5xx
    if errors:
        problems.append('the server sent %d 4xx and %d 5xx responses'
                        % (served.s4xx, served.s5xx))
    if served.s3xx and not redirects_expected:
        problems.append('the server sent %d redirects' % served.s3xx)
    return problems


def median(values):
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def ratio(value, ceiling):
    """``value / ceiling``, or None when either is unknown or zero."""
    if value is None or not ceiling:
        return None
    return value / ceiling


@dataclasses.dataclass
class Run:
    """One measured ab run and its verification."""

    result: object
    served: ServerCounts
    verification: Verification
    command: str = ''


@dataclasses.dataclass
class Summary:
    """Medians over the repeats of one measurement."""

    runs: int
    verified_runs: int
    requests_per_second: float
    mean_ms: float
    p50_ms: float
    p99_ms: float
    failed: int
    non_2xx: int
    problems: list

    @property
    def verified(self):
        return self.runs > 0 and self.verified_runs == self.runs


def summarize(runs):
    """Medians of rate and latencies; failures and non-2xx are totals."""
    results = [run.result for run in runs if run.result is not None]
    problems = [problem for run in runs
                for problem in run.verification.problems]
    return Summary(
        runs=len(runs),
        verified_runs=sum(1 for run in runs if run.verification.valid),
        requests_per_second=median(r.requests_per_second for r in results),
        mean_ms=median(r.mean_ms for r in results),
        p50_ms=median(r.p50 for r in results),
        p99_ms=median(r.p99 for r in results),
        failed=sum(r.failed for r in results),
        non_2xx=sum(r.non_2xx for r in results),
        problems=problems)


# -- serialising


def summary_dict(summary):
    data = dataclasses.asdict(summary)
    data['verified'] = summary.verified
    return data


def run_dict(run):
    result = run.result
    return {
        'command': run.command,
        'valid': run.verification.valid,
        'problems': run.verification.problems,
        'served': dataclasses.asdict(run.served),
        'requests_per_second': result and result.requests_per_second,
        'mean_ms': result and result.mean_ms,
        'p50_ms': result and result.p50,
        'p99_ms': result and result.p99,
        'complete': result and result.complete,
        'failed': result and result.failed,
        'non_2xx': result and result.non_2xx,
        'percentiles': result and {str(key): value for key, value
                                   in sorted(result.percentiles.items())},
    }


def measurement_dict(config, storage, load, runs, summary):
    return {
        'server': config.server, 'processes': config.processes,
        'threads': config.threads, 'config': config.label,
        'storage': storage, 'requests': load.requests,
        'concurrency': load.concurrency, 'keep_alive': load.keep_alive,
        'load': load.label, 'summary': summary_dict(summary),
        'runs': [run_dict(run) for run in runs],
    }
