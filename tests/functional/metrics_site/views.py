"""Views whose requests the metrics tests count."""

import time

from ZODB.POSException import ConflictError

#: How many more times conflict.html raises a ConflictError.
CONFLICTS = {'left': 0}


class Hello:

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self, size=5):
        return 'x' * int(size)


class Slow(Hello):
    """Takes ``ms`` milliseconds (for charts with visible latency)."""

    def __call__(self, ms=0):
        time.sleep(float(ms) / 1000)
        return 'slow'


class Conflict(Hello):
    """Fails with a conflict while CONFLICTS['left'] > 0."""

    def __call__(self):
        if CONFLICTS['left'] > 0:
            CONFLICTS['left'] -= 1
            raise ConflictError('a test conflict')
        return 'resolved'
