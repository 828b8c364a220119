"""fix_relative_links: keep relative links right when the URL does not name
the page (a default view such as ``index.html``, or a ``:method`` suffix).

Traversal records such a page's URL as the response's base (a view may set
one too).  This stage declares an output filter (assembled into its
chain when the chain compiles, run by whoever sends the response) that
inserts ``\\n<base href="..." />\\n`` right after ``<head>`` in an HTML body
that has no base tag, by the rules of zope.publisher's BrowserResponse: a
body whose Content-Type is absent or ``text/html``, the same regular
expressions, Content-Length recomputed.  A streamed body without a
Content-Type that looks like HTML (``isHTML``) gets ``text/html`` and
``X-Content-Type-Warning``, as a string body does.  A streamed body is
filtered in its first chunks only (up to the end of its head, at most
``scan_limit`` bytes); the rest is never read ahead.  The filter is
this mode's whole work, so the stage says it passes every request
through (``passes_through``) and its chain calls the next stage directly.

With ``fix_relative_links.mode = redirect``, a GET or HEAD for a page that
a default view completed, by a URL without a trailing slash, is answered
with a permanent redirect to the URL with the slash instead (where relative
links work without a base), never to another host than the request's;
everything else still gets the base tag.
"""

import codecs
import html
import re

from zope.interface import Interface
from zope.publisher.browser import isHTML
from zope.schema import Choice
from zope.schema import Int

from zope.pipeline import environ as keys
from zope.pipeline.components import remember
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.hosts import on_host
from zope.pipeline.http.wsgi import close_iterable
from zope.pipeline.http.wsgi import prepend
from zope.pipeline.publishing.responses import emit

#: zope.publisher.browser's expressions, so the rules are the classic ones.
START_OF_HEAD = re.compile(rb'(<head[^>]*>)', re.IGNORECASE)
BASE_TAG = re.compile(rb'(<base.*?>)', re.IGNORECASE)
#: Where reading a streamed body for its head can stop.
END_OF_HEAD = re.compile(rb'</head\s*>|<body', re.IGNORECASE)
CHARSET = re.compile(r';\s*charset\s*=\s*"?([-\w.:]+)', re.IGNORECASE)


class IFixRelativeLinksSettings(Interface):

    mode = Choice(title="'base' inserts a base tag; 'redirect' redirects "
                        "GET and HEAD requests for default views to the URL "
                        "with a trailing slash (and inserts a base tag for "
                        "the rest)",
                  values=('base', 'redirect'), default='base')
    scan_limit = Int(title='Bytes of a streamed body searched for <head>',
                     default=8192, min=64)


# -- the filter

def read_head(iterator, scan_limit):
    """Read chunks until the head is complete (or ``scan_limit`` bytes were
    read, or the body ended); return them as one bytes object."""
    head = b''
    for chunk in iterator:
        head += chunk
        if len(head) >= scan_limit or END_OF_HEAD.search(head):
            break
    return head


#: The most encoded bases remembered (the URLs are the clients').
MAX_BASES = 1024

#: (base URL, Content-Type) -> the base as inserted
_bases = {}


def encoded_base(base, content_type):
    """The base URL, HTML-escaped, in the charset of the page (its
    Content-Type, or None); remembered per base URL and Content-Type (it
    is a function of the two)."""
    content_type = content_type or ''
    key = (base, content_type)
    encoded = _bases.get(key)
    if encoded is None:
        encoded = base_in_charset(base, content_type)
        remember(_bases, MAX_BASES, key, encoded)
    return encoded


def base_in_charset(base, content_type):
    match = CHARSET.search(content_type)
    charset = match.group(1) if match else 'utf-8'
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = 'utf-8'
    return html.escape(base).encode(charset, 'xmlcharrefreplace')


def clear_bases():
    """Forget the remembered bases (tests)."""
    _bases.clear()


class BaseTagFilter:
    """The output filter: ``filter(response, body) -> body``."""

    def __init__(self, scan_limit):
        self.scan_limit = scan_limit

    def __call__(self, response, body):
        base = response.getBase()
        if not base:
            return body
        content_type = response.getHeader('content-type')
        if content_type and not content_type.startswith('text/html'):
            return body
        if type(body) is list:
            whole = body[0] if len(body) == 1 and type(body[0]) is bytes \
                else b''.join(body)
            changed = self.insert_base(response, whole, base, content_type)
            return body if changed is None else [changed]
        return self.filter_stream(response, body)

    def filter_stream(self, response, body):
        iterator = iter(body)
        try:
            head = read_head(iterator, self.scan_limit)
            changed = None
            if response.getHeader('content-type') is None:
                if isHTML(head):
                    response.setHeader('Content-Type', 'text/html')
                    response.setHeader('X-Content-Type-Warning',
                                       'guessed from content')
                    changed = self.insert(response, head)
            else:
                changed = self.insert(response, head)
        except BaseException:
            close_iterable(body)
            raise
        head = head if changed is None else changed
        return prepend([head] if head else [], iterator, body)

    def insert(self, response, head):
        return self.insert_base(response, head, response.getBase(),
                                response.getHeader('content-type'))

    def insert_base(self, response, head, base, content_type):
        """``insert``, given the response's base and Content-Type."""
        match = START_OF_HEAD.search(head)
        if match is None or BASE_TAG.search(head) is not None:
            return None
        index = match.end()
        changed = b''.join((head[:index], b'\n<base href="',
                            encoded_base(base, content_type),
                            b'" />\n', head[index:]))
        length = response.getHeader('content-length')
        if length is not None and length.isdigit():
            response.setHeader('Content-Length',
                               str(int(length) + len(changed) - len(head)))
        return changed


# -- the stage

def trailing_slash_url(environ):
    """The URL to redirect a default view's page to, or None (never one
    off the request's host)."""
    default_names = environ.get(keys.DEFAULT_VIEW) or ()
    if not default_names or environ.get('PATH_INFO', '').endswith('/'):
        return None
    request = environ[keys.REQUEST_KEY]
    url = request.getURL(level=len(default_names)) + '/'
    if not on_host(url, request):
        return None
    query = environ.get('QUERY_STRING')
    return url + '?' + query if query else url


class FixRelativeLinksStage:
    """Insert <base> (or redirect) for pages reached by a default view."""

    settings_schema = IFixRelativeLinksSettings
    contract = Contract(
        reads=(keys.REQUEST_KEY, keys.RESPONSE_KEY),
        reads_if_present=(keys.DEFAULT_VIEW,))

    def __init__(self, next_app, mode='base', scan_limit=8192, build=None):
        self.next_app = next_app
        self.redirect = mode == 'redirect'
        self.base_filter = BaseTagFilter(scan_limit)
        #: Assembled into the chain when it compiles (see IStageFactory).
        self.output_filters = (self.base_filter,)
        #: In the 'base' mode the filter is the stage's whole work: the
        #: chain calls the next stage directly (see IStageFactory).
        self.passes_through = not self.redirect

    def __call__(self, environ, start_response):
        if self.redirect and environ.get('REQUEST_METHOD') in ('GET',
                                                               'HEAD'):
            location = trailing_slash_url(environ)
            if location is not None:
                response = environ[keys.RESPONSE_KEY]
                response.redirect(location, status=301)
                return emit(environ, response, start_response)
        return self.next_app(environ, start_response)
