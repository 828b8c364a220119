"""A test-only view that takes its time: requests in flight during a
restart, slow administrative requests, requests past their timeout."""

import time

#: The longest sleep the view accepts, in seconds.
LONGEST = 20
#: It sleeps in slices this long, running Python between them, as a
#: request that computes would: mod_wsgi's RequestTimeout, raised in the
#: thread when the request runs past its limit, lands between two slices.
SLICE = 0.05


class Slow:
    """GET ?seconds=N: sleep N seconds, then answer 'slept N'."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self, seconds='1'):
        seconds = min(float(seconds), LONGEST)
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, SLICE))
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'slept %g' % seconds
