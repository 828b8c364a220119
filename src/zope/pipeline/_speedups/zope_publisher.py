"""zope.publisher's request and response steps, their outcomes remembered.

``install()`` gives zope.pipeline's request classes
(``zope.pipeline.factories``) methods that remember what zope.publisher's
would compute afresh, and has them make responses that do the same;
``uninstall()`` takes them away again (the classes are then plain
subclasses of zope.publisher's).  Each answer is zope.publisher's in
every case; a case a memo cannot tell goes the stock way:

- ``getURL`` remembers the URL per level, ``path_only``, application
  server, application names and traversed names: zope.publisher quotes
  every name each time it is asked.  33 k instructions per request
  (2.4 % of the view-checked chain, about 2 % of the proxied one);
- a request copies its environment in one step where zope.publisher's
  ``sane_environment`` would change nothing (``http_init``,
  ``browser_init``): zope.publisher takes a Python step per key.  20 k
  with the benchmark's 16-key environ (1.5 % view-checked, 1.2 %
  proxied), 60 k (4.3 % view-checked) with the 48 keys mod_wsgi passes
  (``--environ modwsgi``);
- a text result's response remembers the charset per ``Accept-Charset``
  where the charset adapter is zope.publisher's ``HTTPCharsets``, and the
  Content-Type per view type and charset (``RememberedCharset``).  30 k
  (2.2 % view-checked, 1.8 % proxied).

Each counted alone: the instructions per request of the peers' page
(``python -m benchmarks.instructions --peer pipeline-checked``, fixed
hash seed) with all of them, and without that one.  The others that
stood beside them bought less than 1.5 % and were deleted (issue 42):
the locale per ``Accept-Language`` (10 k), the application server per
Host (4.5 k), header-name spellings (7 k), a copied ``setResult`` (0).

They read zope.publisher's private state (``_app_server``,
``_app_names``, ``_traversed_names``, the name-mangled ``__setupCookies``,
``__setupPath`` and ``__setupURLBase``) and copy the parts of
``HTTPRequest.__init__``, ``BrowserRequest.__init__``,
``sane_environment`` and ``HTTPResponse._implicitResult`` they change: a
change of zope.publisher inside the allowed versions can make them
wrong.  The whole module: see ``GAIN``.

What would retire it: zope.publisher remembering the quoted names of a
URL (or ``getURL`` quoting once per name), ``sane_environment`` copying
the environment with ``dict(environ)`` when no key has a ``REDIRECT_``
prefix, and ``getCharsetUsingRequest`` and the parse of a text result's
Content-Type cached per value.
"""

import zope.contenttype.parse
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.interface.interfaces import IInterface  # noqa: F401
from zope.publisher import http as publisher_http
from zope.publisher.http import HTTPCharsets
from zope.publisher.http import getCharsetUsingRequest
from zope.publisher.http import unicode_mimetypes_re

from zope.pipeline import components
from zope.pipeline import factories

#: The measured gain, instructions per request (400 requests, hash seed
#: 0): the proxied chain (``--peer pipeline``) and the view-checked chain
#: (``--peer pipeline-checked``), without and with this module (-5.4 %,
#: -5.9 %).
GAIN = {'pipeline': (1800505, 1702963),
        'pipeline-checked': (1500662, 1411583)}


# -- URLs

#: The most URLs remembered (the host and the names are the client's).
MAX_URLS = 1024

#: (level, path_only, application server, application names and traversed
#: names) -> the URL
_urls = {}

#: zope.publisher's ``getURL``.
STOCK_GET_URL = publisher_http.HTTPRequest.getURL


def getURL(self, level=0, path_only=False):
    """``getURL`` as zope.publisher's, its outcome remembered.

    zope.publisher's ``getURL`` quotes every name of the URL each time it
    is asked (a ``urllib.parse.quote`` per name); the URL is a function of
    the request's application server, its application and traversed names
    and the arguments alone.  The first request to ask for a URL makes it
    the stock way, the others with the same server, names and arguments
    get the same string.  A level deeper than the names raises
    ``IndexError`` every time; a level that is not an ``int``, or an
    argument or name that cannot be a key, goes the stock way.
    """
    if type(level) is not int:
        return STOCK_GET_URL(self, level, path_only)
    key = (level, path_only, self._app_server, *self._app_names,
           *self._traversed_names)
    try:
        url = _urls.get(key)
    except TypeError:  # an argument or a name that cannot be a key
        return STOCK_GET_URL(self, level, path_only)
    if url is None:
        url = STOCK_GET_URL(self, level, path_only)
        components.remember(_urls, MAX_URLS, key, url)
    return url


# -- the environment and the application server

def sane_environment(environ):
    """``zope.publisher.http.sane_environment(environ)``: the same mapping,
    without a Python step per key where no key has a ``REDIRECT_`` prefix
    to strip (the keys are searched at once, as one string; a key that only
    contains the prefix, or keys that are not text, go the stock way)."""
    try:
        names = '\n'.join(environ)
    except TypeError:
        return publisher_http.sane_environment(environ)
    if 'REDIRECT_' in names:
        return publisher_http.sane_environment(environ)
    sane = dict(environ)
    if 'HTTP_CGI_AUTHORIZATION' in sane:
        sane['HTTP_AUTHORIZATION'] = sane.pop('HTTP_CGI_AUTHORIZATION')
    if 'PATH_INFO' in sane:
        path = sane['PATH_INFO']
        path = path if isinstance(path, bytes) else path.encode('latin1')
        sane['PATH_INFO'] = path.decode(publisher_http.ENCODING)
    return sane


def http_init(self, body_instream, environ, response=None):
    """zope.publisher's ``HTTPRequest.__init__``, its environment copied in
    one step (``sane_environment``)."""
    body_instream = publisher_http.HTTPInputStream(body_instream, environ)
    super(publisher_http.HTTPRequest, self).__init__(
        body_instream, environ, response)
    self._orig_env = environ
    environ = sane_environment(environ)
    if 'HTTP_AUTHORIZATION' in environ:
        self._auth = environ['HTTP_AUTHORIZATION']
        del environ['HTTP_AUTHORIZATION']
    else:
        self._auth = None
    self.method = environ.get('REQUEST_METHOD', 'GET').upper()
    self._environ = environ
    self._HTTPRequest__setupCookies()
    self._HTTPRequest__setupPath()
    self._HTTPRequest__setupURLBase()
    self._vh_root = None
    self.setupLocale()


def browser_init(self, body_instream, environ, response=None):
    """zope.publisher's ``BrowserRequest.__init__``, then ``http_init``."""
    self.form = {}
    self.charsets = None
    http_init(self, body_instream, environ, response)


# -- responses

#: The most charsets remembered (per ``Accept-Charset`` value, the
#: client's to choose).
MAX_RESPONSE_CHARSETS = 256

#: Accept-Charset value -> the charset zope.publisher's ``HTTPCharsets``
#: prefers for it
_charsets = {}


def request_charset(request):
    """zope.publisher's ``getCharsetUsingRequest(request)``, its outcome
    remembered.

    Where the request's ``IUserPreferredCharsets`` adapter is
    zope.publisher's own ``HTTPCharsets`` (told by
    ``components.adapter_factory``), the charset is a function of
    ``request.get('HTTP_ACCEPT_CHARSET', '')`` alone: the first response
    for a value asks the adapter, the others with that value get its
    answer.  Any other adapter (an application's), or none, or a value
    that is not text goes the stock way every time."""
    if components.adapter_factory(request, IUserPreferredCharsets) \
            is not HTTPCharsets:
        return getCharsetUsingRequest(request)
    header = request.get('HTTP_ACCEPT_CHARSET', '')
    if type(header) is not str:
        return getCharsetUsingRequest(request)
    charset = _charsets.get(header)
    if charset is None:
        charset = getCharsetUsingRequest(request)
        components.remember(_charsets, MAX_RESPONSE_CHARSETS, header,
                            charset)
    return charset


#: The most Content-Types of text results remembered (per Content-Type a
#: view set and charset).
MAX_TEXT_TYPES = 256

#: (Content-Type, charset of the request) -> (the charset the text is
#: encoded with, the Content-Type the response gets then)
_text_types = {}


def text_type_of(content_type):
    """zope.publisher's check and parse of a text result's Content-Type:
    ``(major, minor, params)``; ValueError for a type that is not text."""
    if not unicode_mimetypes_re.match(content_type):
        raise ValueError(
            'str results must have a text, RFC 3023, RFC 4627,'
            ' or +xml content type.')
    return zope.contenttype.parse.parse(content_type)


def text_type_with(major, minor, params, charset):
    """The Content-Type zope.publisher gives a text result encoded with
    ``charset`` (``params`` is updated)."""
    if (major, minor) != ('application', 'json'):
        # The RFC says this is UTF-8, and the type has no params.
        params['charset'] = charset
    content_type = f'{major}/{minor}'
    if params:
        content_type += ';' + ';'.join(name + '=' + value
                                       for name, value in params.items())
    return content_type


def text_result_type(content_type, charset):
    """``(charset to encode with, Content-Type then)`` of a text result
    with ``content_type`` for a request preferring ``charset``, as
    zope.publisher computes them, remembered (a function of the two
    alone)."""
    key = (content_type, charset)
    known = _text_types.get(key)
    if known is None:
        major, minor, params = text_type_of(content_type)
        charset = params.get('charset', charset)
        known = (charset, text_type_with(major, minor, params, charset))
        components.remember(_text_types, MAX_TEXT_TYPES, key, known)
    return known


class RememberedCharset(publisher_http.HTTPResponse):
    """zope.publisher's ``HTTPResponse``, its ``_implicitResult`` with
    less work per response: for a text result the request's preferred
    charset is remembered per ``Accept-Charset`` (``request_charset``),
    and the Content-Type made of the view's Content-Type and that charset
    per pair (``text_result_type``); a bytes result asks for no charset
    (it is not encoded).  Placed below zope.publisher's
    ``BrowserResponse`` in ``BrowserResponse``'s resolution order, so
    that its type guess and ``<base>`` come first, as they do in
    zope.publisher.
    """

    __slots__ = ()

    def _implicitResult(self, body):
        content_type = self.getHeader('content-type') or ''
        if type(content_type) is not str:
            return super()._implicitResult(body)
        if isinstance(body, str):
            charset, text_type = text_result_type(
                content_type, request_charset(self._request) or 'utf-8')
            try:
                body = body.encode(charset)
            except (UnicodeEncodeError, LookupError):
                # RFC 2616 section 10.4.7 allows an unacceptable encoding
                # instead of 406 Not Acceptable
                body = body.encode('utf-8')
                text_type = text_type_with(*text_type_of(content_type),
                                           'utf-8')
            content_type = text_type
        if content_type:
            return body, [('content-type', content_type),
                          ('content-length', str(len(body)))]
        return body, [('content-length', str(len(body)))]


class HTTPResponse(factories.HTTPResponse, RememberedCharset):
    """``factories.HTTPResponse``, its charsets remembered."""

    __slots__ = ()


class BrowserResponse(factories.BrowserResponse, RememberedCharset):
    """``factories.BrowserResponse``, its charsets remembered."""

    __slots__ = ()


# -- installing

def make_browser_response(self):
    return BrowserResponse()


def make_http_response(self):
    return HTTPResponse()


def swaps():
    """(owner, attribute name, what is installed) of this module."""
    return [
        (factories.BrowserRequest, '__init__', browser_init),
        (factories.HTTPRequest, '__init__', http_init),
        (factories.BrowserRequest, '_createResponse', make_browser_response),
        (factories.HTTPRequest, '_createResponse', make_http_response),
        (factories.BrowserRequest, 'getURL', getURL),
        (factories.HTTPRequest, 'getURL', getURL),
        (factories.XMLRPCRequest, 'getURL', getURL),
    ]


#: (owner, name, what it held itself, or ``ABSENT``) saved by ``install``.
_saved = []
ABSENT = object()


def install():
    """Put the remembering steps in place (nothing when they are)."""
    if _saved:
        return
    for owner, name, value in swaps():
        _saved.append((owner, name, vars(owner).get(name, ABSENT)))
        setattr(owner, name, value)


def uninstall():
    """Put zope.pipeline's stock steps back exactly."""
    while _saved:
        owner, name, value = _saved.pop()
        if value is ABSENT:
            delattr(owner, name)
        else:
            setattr(owner, name, value)


def clear():
    """Forget everything remembered (tests)."""
    for memo in (_urls, _charsets, _text_types):
        memo.clear()
