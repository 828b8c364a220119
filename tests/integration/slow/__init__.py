"""A test-only view that takes its time: requests in flight during a
restart, slow administrative requests, requests past their timeout."""

import time

#: The longest sleep the view accepts, in seconds.
LONGEST = 60
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


class Allocate:
    """GET ?mib=N: hold N MiB (written, so resident) for a moment, then
    answer 'allocated N'."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self, mib='1'):
        block = bytearray(int(mib) << 20)
        block[::4096] = b'x' * len(block[::4096])
        time.sleep(0.2)
        self.request.response.setHeader('Content-Type', 'text/plain')
        return 'allocated %d' % (len(block) >> 20)


class Echo:
    """What the site sees of the request, as text: the client's address
    (REMOTE_ADDR and the virtual_host stage's), the host and port, the
    query string and path, the body's length and its first bytes, and the
    forwarding headers.  (A request proxied by Apache must look like one
    served directly.)"""

    KEYS = ('REMOTE_ADDR', 'zope.pipeline.client_address', 'HTTP_HOST',
            'SERVER_NAME', 'SERVER_PORT', 'QUERY_STRING', 'PATH_INFO',
            'SCRIPT_NAME', 'wsgi.url_scheme', 'HTTP_X_FORWARDED_FOR',
            'HTTP_X_FORWARDED_HOST', 'HTTP_X_ZOPE_PIPELINE_CLIENT_ADDRESS',
            'HTTP_VIA')

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        environ = self.request._environ
        stream = self.request.bodyStream.getCacheStream()
        stream.seek(0)
        body = stream.read()
        lines = ['%s=%s' % (key, environ.get(key, '-'))
                 for key in self.KEYS]
        lines.append('body=%d %r' % (len(body), body[:20]))
        lines.append('url=%s' % self.request.getURL())
        self.request.response.setHeader('Content-Type', 'text/plain')
        return '\n'.join(lines)
