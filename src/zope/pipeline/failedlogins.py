"""Failed logins counted per key (a client address, a login) over a sliding
window, in the memory of one process: after ``limit`` failures in
``window`` seconds a key is refused until the oldest of them is
``window`` seconds old.

The authenticate stage keeps one ``FailedLogins`` per publisher.  What is
counted is bounded: at most ``limit`` times per key and at most
``max_keys`` keys (the least recently failed are forgotten first), so a
client sending a new login every time cannot grow it.
"""

import collections
import math
import threading
import time

#: How many keys are remembered at most (the least recently failed go).
MAX_KEYS = 10000


class FailedLogins:
    """The times of the last failures of each key; thread-safe."""

    def __init__(self, window, max_keys=MAX_KEYS, clock=time.monotonic):
        self.window = window
        self.max_keys = max_keys
        self.clock = clock
        self._failures = collections.OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, key, limit):
        """Seconds (at least 1) until ``key`` may try again, or 0 when it
        has failed fewer than ``limit`` times in the window (``limit`` 0:
        never refused)."""
        if not limit:
            return 0
        with self._lock:
            times = self._failures.get(key)
            if times is None or len(times) < limit:
                return 0
            left = times[-limit] + self.window - self.clock()
        return math.ceil(left) if left > 0 else 0

    def fail(self, key, limit):
        """Count a failure of ``key`` (keeping its last ``limit``)."""
        if not limit:
            return
        with self._lock:
            times = self._failures.pop(key, None)
            if times is None or times.maxlen != limit:
                times = collections.deque(times or (), maxlen=limit)
            times.append(self.clock())
            self._failures[key] = times
            self._forget_old()

    def reset(self, key):
        """Forget the failures of ``key`` (a successful login)."""
        with self._lock:
            self._failures.pop(key, None)

    def _forget_old(self):
        """Drop the least recently failed keys beyond ``max_keys``, and
        the first whose last failure left the window."""
        while len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)
        oldest = next(iter(self._failures))
        if self._failures[oldest][-1] + self.window <= self.clock():
            del self._failures[oldest]

    def __len__(self):
        return len(self._failures)
