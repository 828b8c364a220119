"""Reading ApacheBench (ab) output: counts, rate, mean and percentiles.

``parse_ab_output`` reads what ab prints; ``parse_percentile_csv`` reads the
file ``ab -e`` writes (101 rows, 0% to 100%, fractional milliseconds), which
is more precise than the whole milliseconds of the printed table.  For runs
of 50 requests or fewer ab 2.3 reads past the end of its sorted times for
the 99% row of that file, so a file whose times ever decrease is not used.
"""

import dataclasses
import re


class AbOutputError(ValueError):
    """ab printed no summary (it failed before or during the run)."""


@dataclasses.dataclass
class AbResult:
    """What one ab run reported."""

    complete: int
    failed: int
    non_2xx: int
    requests_per_second: float
    mean_ms: float
    percentiles: dict
    failed_detail: dict = dataclasses.field(default_factory=dict)
    write_errors: int = 0
    keep_alive: int = 0
    document_length: int = None

    def percentile(self, percent):
        """Latency in ms within which ``percent`` % of requests completed."""
        return self.percentiles.get(percent)

    @property
    def p50(self):
        return self.percentile(50)

    @property
    def p99(self):
        return self.percentile(99)


_INT_FIELDS = {
    'complete': r'^Complete requests:\s+(\d+)',
    'failed': r'^Failed requests:\s+(\d+)',
    'non_2xx': r'^Non-2xx responses:\s+(\d+)',
    'write_errors': r'^Write errors:\s+(\d+)',
    'keep_alive': r'^Keep-Alive requests:\s+(\d+)',
    'document_length': r'^Document Length:\s+(\d+) bytes',
}

_REQUIRED = ('complete', 'failed')

_RATE = r'^Requests per second:\s+([\d.]+) \[#/sec\] \(mean\)'
_MEAN = r'^Time per request:\s+([\d.]+) \[ms\] \(mean\)$'
_FAILED_DETAIL = (r'^\s+\(Connect: (\d+), Receive: (\d+), Length: (\d+), '
                  r'Exceptions: (\d+)\)')
_PERCENT_ROW = r'^\s+(\d+)%\s+(\d+)'


def _search(pattern, text):
    return re.search(pattern, text, re.MULTILINE)


def _int_fields(text):
    values = {}
    for name, pattern in _INT_FIELDS.items():
        match = _search(pattern, text)
        if match is None:
            if name in _REQUIRED:
                raise AbOutputError('ab printed no %r line:\n%s'
                                    % (name, text[-2000:]))
            continue
        values[name] = int(match.group(1))
    values.setdefault('non_2xx', 0)
    values.setdefault('write_errors', 0)
    values.setdefault('keep_alive', 0)
    return values


def _float(pattern, text, what):
    match = _search(pattern, text)
    if match is None:
        raise AbOutputError('ab printed no %s:\n%s' % (what, text[-2000:]))
    return float(match.group(1))


def _failed_detail(text):
    match = _search(_FAILED_DETAIL, text)
    if match is None:
        return {}
    names = ('connect', 'receive', 'length', 'exceptions')
    return dict(zip(names, (int(value) for value in match.groups())))


def parse_percentile_table(text):
    """The 'Percentage of the requests served' table: {percent: ms}."""
    start = text.find('Percentage of the requests served')
    if start < 0:
        return {}
    return {int(percent): float(ms) for percent, ms in
            re.findall(_PERCENT_ROW, text[start:], re.MULTILINE)}


def parse_ab_output(text, percentile_csv=None):
    """Return the AbResult of ab's printed output (and its ``-e`` CSV)."""
    values = _int_fields(text)
    percentiles = parse_percentile_table(text)
    if percentile_csv:
        from_csv = parse_percentile_csv(percentile_csv)
        if is_non_decreasing(from_csv):
            percentiles.update(from_csv)
    return AbResult(
        requests_per_second=_float(_RATE, text, 'requests per second'),
        mean_ms=_float(_MEAN, text, 'mean time per request'),
        percentiles=percentiles, failed_detail=_failed_detail(text),
        **values)


def is_non_decreasing(percentiles):
    times = [percentiles[percent] for percent in sorted(percentiles)]
    return all(first <= second for first, second in zip(times, times[1:]))


def parse_percentile_csv(text):
    """Read ``ab -e`` output: {percent (int): milliseconds (float)}."""
    percentiles = {}
    for line in text.splitlines()[1:]:
        if not line.strip():
            continue
        percent, ms = line.split(',')
        percentiles[int(float(percent))] = float(ms)
    return percentiles
