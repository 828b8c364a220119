"""Raw WSGI stages of the outer-stage tests.

``RawWriter`` (inner, browser requests) answers ``/raw-write`` itself with
``start_response`` and ``write()``, then fails on plan: it proves nothing a
failed attempt sent leaks; it answers ``/raw-lines`` by reading
``wsgi.input`` line by line.  ``OuterProbe`` (outer, after create_request)
records the request each attempt got and raises on plan for
``/outer-transient``, outside the error handler.
"""

from zope.publisher.interfaces.browser import IDefaultBrowserLayer

from . import plan
from . import seen
from .failures import make_error


def attempt_of(environ):
    return environ['zope.pipeline.attempt']


class RawWriter:

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO')
        if path == '/raw-write':
            return self.write(environ, start_response)
        if path == '/raw-lines':
            return self.lines(environ, start_response)
        return self.next_app(environ, start_response)

    def write(self, environ, start_response):
        attempt = attempt_of(environ)
        write = start_response('200 OK', [
            ('Content-Type', 'text/plain'),
            ('X-Attempt', str(attempt)),
            ('Set-Cookie', 'attempt=%d; Path=/' % attempt)])
        write(b'written by attempt %d\n' % attempt)
        if attempt <= plan['failures']:
            raise make_error(plan['error'])
        return [b'body of attempt %d\n' % attempt]

    def lines(self, environ, start_response):
        """Read wsgi.input by lines (odd attempts with readline and
        readlines, even ones by iterating), close it, fail on plan."""
        attempt = attempt_of(environ)
        stream = environ['wsgi.input']
        if attempt % 2:
            lines = [stream.readline()] + stream.readlines()
        else:
            lines = list(stream)
        stream.close()
        seen.append({'view': 'lines', 'attempt': attempt, 'lines': lines})
        if attempt <= plan['failures']:
            raise make_error(plan['error'])
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'%d lines' % len(lines)]


class OuterProbe:

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        request = environ['zope.request']
        seen.append({
            'view': 'probe', 'attempt': attempt_of(environ),
            'request': request,
            'request_class': type(request).__name__,
            'request_type': environ['zope.pipeline.request_type'],
            'response_matches': environ['zope.response'] is request.response,
            'default_skin': IDefaultBrowserLayer.providedBy(request)})
        if environ.get('PATH_INFO') == '/outer-transient' and \
                attempt_of(environ) <= plan['failures']:
            raise make_error(plan['error'])
        return self.next_app(environ, start_response)
