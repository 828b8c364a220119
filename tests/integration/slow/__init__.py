"""A test-only view that takes its time: requests in flight during a
restart."""

import time

#: The longest sleep the view accepts, in seconds.
LONGEST = 20


class Slow:
    """GET ?seconds=N: sleep N seconds, then answer 'slept N'."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self, seconds='1'):
        seconds = min(float(seconds), LONGEST)
        time.sleep(seconds)
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'slept %g' % seconds
