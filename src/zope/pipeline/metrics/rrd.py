"""Fixed time steps with RRDTool semantics: exact rates, known and unknown.

Time is cut into steps of ``step`` seconds aligned to the epoch (a step
starts at a multiple of ``step``).  What happens during an interval is
spread over the steps it overlaps in proportion to the overlap, so a rate
that held for 2 s of a 10 s step weighs 0.2 there, never last-value-wins.
A step's value is its amount divided by the seconds of it that were
*known* (covered by samples); a step with more than half of its time
unknown has no value (``None``), as in RRDTool.  An interval between two
samples longer than the heartbeat is unknown, not zero.

Consolidation (``consolidate``) averages steps into longer rows weighted by
their known time, so ``average x row length`` is the exact total.
"""

import math

#: Share of a step (or of a consolidated row) that may be unknown while
#: it still has a value: RRDTool's rule for primary data points.
UNKNOWN_LIMIT = 0.5


def align(moment, step):
    """Return the start of the step containing ``moment``."""
    return math.floor(moment / step) * step


def spread(begin, end, step):
    """Yield ``(step_start, seconds)`` of each step ``[begin, end)`` hits."""
    start = align(begin, step)
    while start < end:
        stop = start + step
        seconds = min(end, stop) - max(begin, start)
        if seconds > 0:
            yield start, seconds
        start = stop


def has_value(known, length, unknown_limit=UNKNOWN_LIMIT):
    """Whether ``known`` seconds of ``length`` are enough for a value."""
    return known > 0 and length - known <= length * unknown_limit + 1e-9


class Series:
    """One data source: per-step amounts and known seconds.

    ``update(moment, rate)`` is RRDTool's GAUGE update: ``rate`` held since
    the previous update.  ``add(begin, end, amount)`` spreads an amount
    (RRDTool's ABSOLUTE) and ``count(moment, amount)`` adds an instant
    event to its step; both leave known time to ``cover``.
    """

    def __init__(self, step=10.0, heartbeat=None, rows=None):
        self.step = float(step)
        self.heartbeat = float(heartbeat) if heartbeat else 2 * self.step
        self.rows = rows
        self.amounts = {}
        self.known = {}
        self.last_update = None

    # -- samples

    def start(self, moment):
        """Set the time of the first sample (nothing is known before it)."""
        self.last_update = moment

    def update(self, moment, rate):
        """Record that ``rate`` (units per second) held since the last
        update; an interval longer than the heartbeat stays unknown."""
        if self.last_update is None:
            self.start(moment)
            return
        if moment <= self.last_update:
            raise ValueError('update at %r is not after the last update at '
                             '%r' % (moment, self.last_update))
        begin, self.last_update = self.last_update, moment
        if moment - begin > self.heartbeat:
            return
        for start, seconds in spread(begin, moment, self.step):
            self._put(start, rate * seconds, seconds)
        self._prune()

    def add(self, begin, end, amount):
        """Spread ``amount`` evenly over ``[begin, end)``."""
        if end <= begin:
            self.count(begin, amount)
            return
        rate = amount / (end - begin)
        for start, seconds in spread(begin, end, self.step):
            self._put(start, rate * seconds, 0.0)

    def count(self, moment, amount=1):
        """Add an instant event to the step containing ``moment``."""
        self._put(align(moment, self.step), amount, 0.0)

    def cover(self, begin, end):
        """Mark ``[begin, end)`` known (sampled, even if nothing happened)."""
        for start, seconds in spread(begin, end, self.step):
            self._put(start, 0.0, seconds)

    def _put(self, start, amount, seconds):
        self.amounts[start] = self.amounts.get(start, 0.0) + amount
        self.known[start] = self.known.get(start, 0.0) + seconds

    def _prune(self):
        if self.rows is None or len(self.known) <= self.rows:
            return
        for start in sorted(self.known)[:-self.rows]:
            del self.known[start]
            self.amounts.pop(start, None)

    # -- reading

    def value(self, start):
        """The rate of the step starting at ``start``, or None if unknown."""
        known = self.known.get(start, 0.0)
        if not has_value(known, self.step):
            return None
        return self.amounts.get(start, 0.0) / known

    def starts(self, begin, end):
        """The step starts from the step of ``begin`` up to before ``end``."""
        first = align(begin, self.step)
        count = max(0, math.ceil((end - first) / self.step - 1e-9))
        return [first + index * self.step for index in range(count)]

    def values(self, begin, end):
        """Return ``[(step_start, rate or None)]`` for ``[begin, end)``."""
        return [(start, self.value(start)) for start in self.starts(begin,
                                                                    end)]

    def total(self, begin, end):
        """The exact amount recorded in the steps of ``[begin, end)``."""
        return sum(self.amounts.get(start, 0.0)
                   for start in self.starts(begin, end))

    def consolidate(self, begin, end, steps_per_row,
                    unknown_limit=UNKNOWN_LIMIT):
        """Average the steps into rows of ``steps_per_row`` steps.

        Rows start at multiples of the row length; a row's average is its
        amount over its known time, so ``average x known time`` is the
        exact total; a row more than ``unknown_limit`` unknown is None.
        """
        length = self.step * steps_per_row
        rows = []
        for row_start in Series(length).starts(begin, end):
            starts = self.starts(row_start, row_start + length)
            known = sum(self.known.get(start, 0.0) for start in starts
                        if self.value(start) is not None)
            amount = sum(self.amounts.get(start, 0.0) for start in starts
                         if self.value(start) is not None)
            rows.append((row_start, amount / known
                         if has_value(known, length, unknown_limit)
                         else None))
        return rows
