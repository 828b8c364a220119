"""Latency histograms: fine log buckets for percentiles, Prometheus buckets.

Per step and view, durations are counted in geometric buckets (four per
doubling, from 50 microseconds up), so p50/p99 of any set of steps or
processes come from summed counts, within about 9% of the true value.
The Prometheus histogram uses the deployer's ``le`` bounds instead.
"""

import bisect
import math

#: Upper bound of the first fine bucket, in seconds.
BASE = 50e-6
#: Fine buckets per doubling of the duration.
PER_DOUBLING = 4
#: Number of fine buckets; the last one holds everything longer.
FINE_BUCKETS = 100

#: Default ``le`` bounds of zope_pipeline_request_duration_seconds.
DEFAULT_BOUNDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                  10.0)


def fine_bucket(seconds):
    """Return the index of the fine bucket holding ``seconds``."""
    if seconds <= BASE:
        return 0
    index = math.ceil(math.log2(seconds / BASE) * PER_DOUBLING - 1e-9)
    return min(index, FINE_BUCKETS - 1)


def fine_upper(index):
    """The upper bound in seconds of fine bucket ``index``."""
    return BASE * 2 ** (index / PER_DOUBLING)


def fine_middle(index):
    """A representative duration of fine bucket ``index`` (geometric)."""
    if index == 0:
        return BASE / 2
    return BASE * 2 ** ((index - 0.5) / PER_DOUBLING)


def percentile(counts, fraction):
    """The ``fraction`` quantile of a ``{bucket index: count}`` mapping.

    Returns None for an empty histogram.
    """
    total = sum(counts.values())
    if not total:
        return None
    rank = fraction * total
    seen = 0
    for index in sorted(counts, key=int):
        seen += counts[index]
        if seen >= rank:
            return fine_middle(int(index))
    return fine_middle(int(max(counts, key=int)))  # pragma: no cover


def merge_counts(target, counts):
    """Add ``{index: count}`` into ``target``; keys become str (as JSON's)."""
    for index, count in counts.items():
        index = str(index)
        target[index] = target.get(index, 0) + count
    return target


def parse_bounds(text):
    """Parse ``metrics.buckets``: ascending seconds, space separated."""
    try:
        bounds = tuple(float(item) for item in text.split())
    except ValueError:
        raise ValueError('buckets must be numbers of seconds, space '
                         'separated: %r' % text) from None
    if not bounds or any(bound <= 0 for bound in bounds) or \
            list(bounds) != sorted(set(bounds)):
        raise ValueError('buckets must be distinct positive numbers in '
                         'ascending order: %r' % text)
    return bounds


def bound_index(bounds, seconds):
    """Index of the ``le`` bucket for ``seconds``; len(bounds) is +Inf."""
    return bisect.bisect_left(bounds, seconds)


def bound_quantile(bounds, buckets, fraction):
    """Estimate the ``fraction`` quantile from ``le`` bucket counts.

    ``buckets[i]`` counts the durations in ``(bounds[i-1], bounds[i]]``
    (the last one, past every bound, is +Inf).  As Prometheus's
    ``histogram_quantile``: the rank is placed linearly inside its bucket
    (from 0 for the first).  Returns ``(seconds, above)``: ``above`` is
    True when the rank falls in the +Inf bucket, where only "more than the
    last bound" is known; ``(None, False)`` for no durations.
    """
    total = sum(buckets)
    if not total:
        return None, False
    rank = fraction * total
    seen = 0
    for index, count in enumerate(buckets):
        if count and seen + count >= rank:
            if index == len(bounds):
                return bounds[-1], True
            low = bounds[index - 1] if index else 0.0
            share = (rank - seen) / count
            return low + (bounds[index] - low) * share, False
        seen += count
    return bounds[-1], True  # pragma: no cover (rank <= total)
