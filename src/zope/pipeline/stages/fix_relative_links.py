"""fix_relative_links: keep relative links right when the URL does not name
the page (a default view such as ``index.html``, or a ``:method`` suffix).

Traversal records such a page's URL as the response's base.  This stage
adds, for that request only, an output filter that inserts
``<base href="...">`` right after ``<head>`` in an HTML body that has no
base tag (the classic rules: ``isHTML`` for a body without content type,
with ``X-Content-Type-Warning``; Content-Length recomputed).  A streamed
body is filtered in its first chunks only, never buffered whole.  With
``fix_relative_links.mode = redirect``, GET requests are redirected to the
page's URL instead.
"""

import html
import re

from zope.interface import Interface
from zope.publisher.browser import isHTML
from zope.schema import Choice
from zope.schema import Int

from zope.pipeline import environ as keys
from zope.pipeline.stages.call import emit
from zope.pipeline.wsgi import ClosingIterator
from zope.pipeline.wsgi import close_iterable

START_OF_HEAD = re.compile(rb'(<head[^>]*>)', re.IGNORECASE)
HAS_BASE = re.compile(rb'<base\s', re.IGNORECASE)


class IFixRelativeLinksSettings(Interface):

    mode = Choice(title="'base' inserts a base tag; 'redirect' redirects "
                        "GET requests to the page's URL",
                  values=('base', 'redirect'), default='base')
    scan_limit = Int(title='Bytes of a streamed body searched for <head>',
                     default=8192, min=64)


environ_keys = {
    keys.RESPONSE_KEY: "read: the base traversal set (then cleared)",
}


def insert_base(body, base):
    """Return ``body`` with the base tag after <head>, if it needs one."""
    match = START_OF_HEAD.search(body)
    if match is None or HAS_BASE.search(body):
        return body, False
    index = match.end()
    return body[:index] + b'\n<base href="' + base + b'" />\n' + \
        body[index:], True


def header(headers, name):
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def is_html_type(content_type):
    return content_type.split(';')[0].strip().lower() in (
        'text/html', 'application/xhtml+xml')


class BaseFilter:
    """The short-lived output filter of one response."""

    def __init__(self, base, scan_limit):
        self.base = base
        self.scan_limit = scan_limit
        self.status = None
        self.headers = None
        self.written = []

    def start_response(self, status, headers, exc_info=None):
        self.status, self.headers = status, list(headers)
        return self.written.append

    def apply(self, start_response, result):
        iterator = iter(result)
        prefix = list(self.written)
        head = b''.join(prefix)
        for chunk in iterator if result is not None else ():
            prefix.append(chunk)
            head += chunk
            if START_OF_HEAD.search(head) or len(head) >= self.scan_limit:
                break
        headers = self.headers
        content_type = header(headers, 'content-type')
        changed = False
        if content_type is None and isHTML(head):
            headers.append(('Content-Type', 'text/html'))
            headers.append(('X-Content-Type-Warning',
                            'guessed from content'))
            content_type = 'text/html'
        if content_type is not None and is_html_type(content_type):
            head, changed = insert_base(head, self.base)
        if changed:
            length = header(headers, 'content-length')
            if length is not None:
                extra = len(head) - len(b''.join(prefix))
                headers = [(key, value) for key, value in headers
                           if key.lower() != 'content-length']
                headers.append(('Content-Length', str(int(length) + extra)))
            prefix = [head]
        start_response(self.status, headers)
        if type(result) is list and len(prefix) >= len(result):
            return prefix
        return ClosingIterator(_chain(prefix, iterator),
                               lambda: close_iterable(result))


def _chain(prefix, iterator):
    yield from prefix
    yield from iterator


class FixRelativeLinksStage:
    """Insert <base> (or redirect) for pages reached by a default view."""

    settings_schema = IFixRelativeLinksSettings
    environ_keys = environ_keys

    def __init__(self, next_app, mode='base', scan_limit=8192):
        self.next_app = next_app
        self.redirect = mode == 'redirect'
        self.scan_limit = scan_limit

    def __call__(self, environ, start_response):
        response = environ[keys.RESPONSE_KEY]
        base = response.getBase()
        if not base:
            return self.next_app(environ, start_response)
        if self.redirect and environ.get('REQUEST_METHOD') == 'GET':
            response.redirect(base, trusted=True)
            return emit(environ, response, start_response)
        response.setBase('')
        output = BaseFilter(html.escape(base).encode('utf-8'),
                            self.scan_limit)
        result = self.next_app(environ, output.start_response)
        return output.apply(start_response, result)
