"""RRDTool semantics of zope.pipeline.metrics.rrd: the worked examples."""

import pytest

from zope.pipeline.metrics.rrd import Series
from zope.pipeline.metrics.rrd import align
from zope.pipeline.metrics.rrd import has_value
from zope.pipeline.metrics.rrd import spread


def sales(origin=0.0):
    """50 units/s for 12 s, then 10/s for 6 s, then 30/s for 12 s."""
    series = Series(step=10, heartbeat=20)
    series.start(origin)
    series.update(origin + 12, 50)
    series.update(origin + 18, 10)
    series.update(origin + 30, 30)
    return series


def test_rate_50_for_12s_then_10_then_30_gives_50_22_30_and_1020_units():
    series = sales()
    assert series.values(0, 30) == [(0, 50.0), (10, 22.0), (20, 30.0)]
    assert series.total(0, 30) == pytest.approx(1020)


def test_consolidating_steps_of_22_and_30_averages_26_that_is_520_units():
    series = sales(origin=10.0)   # steps 10-20: 50, 20-30: 22, 30-40: 30
    rows = series.consolidate(20, 40, steps_per_row=2)
    assert rows == [(20, pytest.approx(26.0))]
    assert rows[0][1] * 20 == pytest.approx(520)
    assert series.total(20, 40) == pytest.approx(520)


def test_consolidated_rows_keep_the_total_exact():
    series = sales(origin=10.0)
    rows = series.consolidate(0, 40, steps_per_row=2)
    assert [start for start, _ in rows] == [0, 20]
    # Row 0-20 has one known step (50) and one unknown: half known is
    # still a value; its total is the known part's.
    assert rows[0][1] == pytest.approx(50.0)
    assert rows[0][1] * 10 + rows[1][1] * 20 == pytest.approx(1020)


def test_a_value_held_2s_of_a_10s_step_weighs_a_fifth():
    series = Series(step=10)
    series.start(100)
    series.update(102, 10)    # 10 for 2 s
    series.update(110, 0)     # then 0 for 8 s
    assert series.value(100) == pytest.approx(2.0)


def test_a_gap_longer_than_the_heartbeat_is_unknown_not_zero():
    series = Series(step=10, heartbeat=15)
    series.start(0)
    series.update(10, 5)
    series.update(40, 5)      # 30 s since the last update > heartbeat
    series.update(50, 7)
    assert series.values(0, 50) == [(0, 5.0), (10, None), (20, None),
                                    (30, None), (40, 7.0)]
    assert series.total(0, 50) == pytest.approx(120)


def test_a_step_more_than_half_unknown_has_no_value():
    series = Series(step=10, heartbeat=30)
    series.start(6)           # only 4 s of step 0-10 are known
    series.update(30, 1)
    assert series.value(0) is None
    assert series.value(10) == 1.0
    series = Series(step=10)
    series.start(5)           # exactly half known: still a value
    series.update(10, 3)
    assert series.value(0) == 3.0


def test_consolidated_row_with_too_many_unknown_steps_is_unknown():
    series = Series(step=10)
    series.start(0)
    series.update(10, 4)
    assert series.consolidate(0, 40, steps_per_row=4) == [(0, None)]
    assert series.consolidate(0, 40, steps_per_row=4,
                              unknown_limit=0.75) == [(0, 4.0)]


def test_events_and_spread_amounts_need_known_time_for_a_value():
    series = Series(step=10)
    series.count(3, 5)
    series.add(5, 25, 20)     # 1 per second over 5-25
    assert series.value(0) is None
    series.cover(0, 30)
    assert series.values(0, 30) == [(0, 1.0), (10, 1.0), (20, 0.5)]
    series.add(7, 7, 2)       # an empty interval is an event
    assert series.value(0) == pytest.approx(1.2)


def test_updates_must_move_forward_in_time():
    series = Series(step=10)
    series.update(5, 1)       # the first update only starts the series
    assert series.last_update == 5
    with pytest.raises(ValueError, match='not after the last update'):
        series.update(5, 2)


def test_only_the_last_rows_are_kept():
    series = Series(step=10, heartbeat=1000, rows=3)
    series.start(0)
    series.update(60, 1)
    assert sorted(series.known) == [30, 40, 50]
    assert series.value(0) is None


def test_steps_are_aligned_to_the_epoch():
    assert align(1234.5, 10) == 1230
    assert align(-0.5, 10) == -10
    assert list(spread(5, 25, 10)) == [(0, 5), (10, 10), (20, 5)]
    assert list(spread(10, 10, 10)) == []
    assert list(spread(15, 12, 10)) == []
    assert has_value(5, 10) and not has_value(4.9, 10)
    assert not has_value(0, 10)
