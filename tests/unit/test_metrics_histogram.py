"""Latency buckets and percentiles of zope.pipeline.metrics.histogram."""

import random

import pytest

from zope.pipeline.metrics.histogram import BASE
from zope.pipeline.metrics.histogram import FINE_BUCKETS
from zope.pipeline.metrics.histogram import bound_index
from zope.pipeline.metrics.histogram import bound_quantile
from zope.pipeline.metrics.histogram import fine_bucket
from zope.pipeline.metrics.histogram import fine_upper
from zope.pipeline.metrics.histogram import merge_counts
from zope.pipeline.metrics.histogram import parse_bounds
from zope.pipeline.metrics.histogram import percentile


def test_each_duration_lies_within_its_fine_bucket():
    for seconds in (1e-6, BASE, 51e-6, 0.001, 0.0123, 0.5, 3.0, 100.0):
        index = fine_bucket(seconds)
        assert seconds <= fine_upper(index) * (1 + 1e-9)
        if index:
            assert seconds > fine_upper(index - 1)
    assert fine_bucket(1e9) == FINE_BUCKETS - 1


def test_percentiles_from_buckets_are_within_ten_percent():
    generator = random.Random(7)
    durations = [generator.lognormvariate(-4, 1) for _ in range(5000)]
    counts = {}
    for seconds in durations:
        merge_counts(counts, {fine_bucket(seconds): 1})
    durations.sort()
    for fraction in (0.5, 0.9, 0.99):
        exact = durations[int(fraction * len(durations)) - 1]
        assert percentile(counts, fraction) == pytest.approx(exact, rel=0.1)


def test_percentile_of_nothing_is_none_and_keys_may_be_strings():
    assert percentile({}, 0.5) is None
    counts = merge_counts({}, {'0': 2, 3: 1})
    assert counts == {'0': 2, '3': 1}
    assert percentile(counts, 0.5) == pytest.approx(BASE / 2)
    assert percentile(counts, 1.0) > BASE


def test_bounds_are_parsed_and_checked():
    assert parse_bounds('0.1 1 10') == (0.1, 1.0, 10.0)
    for text in ('', '1 0.5', '0 1', '1 1', 'a b'):
        with pytest.raises(ValueError, match='buckets must be'):
            parse_bounds(text)


def test_a_duration_on_a_bound_counts_in_that_bucket():
    bounds = (0.1, 1.0)
    assert bound_index(bounds, 0.1) == 0
    assert bound_index(bounds, 0.2) == 1
    assert bound_index(bounds, 5) == 2


def test_quantiles_from_le_buckets_are_placed_linearly_in_their_bucket():
    bounds = (0.01, 0.1, 1.0)
    # 100 durations: 50 up to 10 ms, 40 in (10, 100] ms, 10 in (0.1, 1] s.
    buckets = [50, 40, 10, 0]
    assert bound_quantile(bounds, buckets, 0.5) == (pytest.approx(0.01),
                                                    False)
    assert bound_quantile(bounds, buckets, 0.7) == (pytest.approx(0.055),
                                                    False)
    assert bound_quantile(bounds, buckets, 0.99) == (pytest.approx(0.91),
                                                     False)
    assert bound_quantile(bounds, buckets, 0.25) == (pytest.approx(0.005),
                                                     False)


def test_a_quantile_in_the_inf_bucket_is_only_known_to_pass_the_last_bound():
    bounds = (0.01, 0.1)
    assert bound_quantile(bounds, [90, 0, 10], 0.99) == (0.1, True)
    assert bound_quantile(bounds, [0, 0, 0], 0.5) == (None, False)
    assert bound_quantile(bounds, [0, 4, 0], 0.5) == (pytest.approx(0.055),
                                                      False)
