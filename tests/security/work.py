"""Work counted, not timed: the function calls a request makes.

``CallCounter`` counts, by name, every call the profiler sees while it is
active: Python functions and built-in ones (``bytes.decode``,
``setattr``, ``BytesIO.readline``...).  A request whose cost grows with
the square of its size makes a number of calls that grows the same way;
comparing counts, never wall time, proves a cost linear or bounded on a
busy machine.
"""

import collections
import sys


class CallCounter:
    """Count the calls made in a ``with`` block, by function name."""

    def __init__(self):
        self.calls = collections.Counter()

    def __enter__(self):
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc_info):
        sys.setprofile(None)

    def profile(self, frame, event, arg):
        if event == 'call':
            self.calls[frame.f_code.co_name] += 1
        elif event == 'c_call':
            self.calls[getattr(arg, '__name__', '?')] += 1

    @property
    def total(self):
        return sum(self.calls.values())


def work_of(site, *args, **kw):
    """The response to one request of ``site`` (a RawClient) and the
    calls it made."""
    with CallCounter() as counter:
        response = site.request(*args, **kw)
    return response, counter
