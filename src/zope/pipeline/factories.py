"""Request factories: zope.publisher's request classes, made per request.

The default factories make requests of subclasses of zope.publisher's
``BrowserRequest``, ``HTTPRequest`` and ``XMLRPCRequest``.  Two methods
remember their outcome: ``setupLocale``, which every request's
``__init__`` calls, remembers the preferred languages and the locale per
value of the request's ``HTTP_ACCEPT_LANGUAGE`` where zope.publisher's
own adapter reads that value alone (see ``RememberedLocale``); ``getURL``
remembers the URLs it made per application server, names and arguments
(see ``RememberedURL``).  Others cost at most linear work where
zope.publisher's would not: the locale is looked for among a few language
tags (``locale_for``); a browser request decodes its form with at most
``MAX_CHARSETS`` distinct known charsets of ``Accept-Charset``
(``BoundedCharsets``), not with every charset listed, repeats included;
an XML-RPC request reads its body once (``read_xmlrpc_call``), not line
by line; cookies are unquoted in one pass (``LinearCookies``).  Their
``repr`` names zope.publisher's class, as the classic publisher's
requests did.  The factories give each request its default
skin as zope.publisher's ``setDefaultSkin`` does, its outcome remembered
per request class and registry where it depends on nothing else
(``set_default_skin``).  The language adapter's factory that
``setupLocale`` asks for is remembered per request interfaces and
adapter hook while the global registry and the interfaces stay
(``language_factory``).  Where a class's steps are zope.publisher's own,
a request reads a header as its ``get`` does in one call
(``request_value``), makes its traversal stack in one call
(``LinearEnvironment._setup_path``), and our own request and response
classes set zope.publisher's ``BaseRequest`` and ``HTTPResponse`` state
at once rather than through their chains of ``__init__`` and ``reset``.
"""

import io
import re
from xmlrpc.client import loads as parse_xmlrpc

import zope.contenttype.parse
from persistent import Persistent
from zope.component import getSiteManager
from zope.component import hooks
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.i18n.interfaces import IUserPreferredLanguages
from zope.i18n.locales import LoadLocaleError
from zope.i18n.locales import locales
from zope.interface import implementedBy
from zope.interface import implementer
from zope.interface import providedBy
from zope.interface.adapter import AdapterRegistry
from zope.interface.interfaces import IInterface
from zope.publisher import browser as publisher_browser
from zope.publisher import http as publisher_http
from zope.publisher import xmlrpc as publisher_xmlrpc
from zope.publisher.base import DebugFlags
from zope.publisher.browser import BROWSER_LANGUAGES_KEY
from zope.publisher.browser import BrowserLanguages
from zope.publisher.browser import CacheableBrowserLanguages
from zope.publisher.browser import ModifiableBrowserLanguages
from zope.publisher.http import HTTPCharsets
from zope.publisher.http import getCharsetUsingRequest
from zope.publisher.http import unicode_mimetypes_re
from zope.publisher.interfaces import IDefaultSkin
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.interfaces.http import IResult
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.skinnable import getDefaultSkin
from zope.publisher.skinnable import setDefaultSkin
from zope.security.checker import getCheckerForInstancesOf
from zope.security.checker import selectChecker

from zope.pipeline import components
from zope.pipeline.components import remember
from zope.pipeline.cookies import parse_cookies
from zope.pipeline.errors import PayloadTooLarge
from zope.pipeline.interfaces import IRequestFactory

#: zope.publisher's adapters whose preferred languages are a function of
#: ``request.get('HTTP_ACCEPT_LANGUAGE', '')`` alone -> whether they note
#: them in the request's annotations (``BROWSER_LANGUAGES_KEY``).
HEADER_LANGUAGES = {
    BrowserLanguages: False,
    CacheableBrowserLanguages: True,
    ModifiableBrowserLanguages: True,
}

#: The most outcomes remembered (the header is the client's to choose).
MAX_LOCALES = 256

#: (adapter class, Accept-Language value) -> (languages, locale)
_locales = {}


#: zope.publisher's ``get`` of a browser request (its form, then as an
#: HTTP request's) and of an HTTP request (its cookies, then its
#: environment).
BROWSER_GET = publisher_browser.BrowserRequest.get
HTTP_GET = publisher_http.HTTPRequest.get
_MISSING = object()


def request_value(request, key, default=None):
    """``request.get(key, default)``, read from the request's form,
    cookies and environment in zope.publisher's order without its three
    nested calls, where the request's class has zope.publisher's own
    ``get`` (a browser request's or an HTTP request's); any other ``get``
    is called."""
    get = type(request).get
    if get is BROWSER_GET:
        value = request.form.get(key, _MISSING)
        if value is not _MISSING:
            return value
    elif get is not HTTP_GET:
        return request.get(key, default)
    value = request._cookies.get(key, _MISSING)
    if value is not _MISSING:
        return value
    return request._environ.get(key, default)


class RememberedLocale:
    """``setupLocale`` as zope.publisher's, its outcome remembered, its
    work bounded.

    zope.publisher's ``setupLocale`` adapts the request to
    ``IUserPreferredLanguages``, parses the preferred languages and loads
    the first locale that exists.  Here the locale is chosen among the
    first ``MAX_LOCALE_LANGUAGES`` distinct languages that are language
    tags (``locale_for``): zope.publisher tried every language the client
    listed (a file looked for each), and a "language" naming a path
    loaded any XML file of the server as a locale.  Where the adapter is
    one of zope.publisher's own (``HEADER_LANGUAGES``) and the request
    has no languages noted yet (``setPreferredLanguages`` notes them,
    then calls ``setupLocale`` again), the outcome depends on the
    header's value only: the first request with a value sets the locale
    up and the others with that value get its languages (a list of their
    own, noted as the stock adapter notes them) and its locale (the same
    object, as zope.i18n's locale provider gives).  Any other adapter,
    header or state sets the locale up every time.
    """

    __slots__ = ()

    def setupLocale(self):
        factory = language_factory(self)
        notes = HEADER_LANGUAGES.get(factory) \
            if isinstance(factory, type) else None
        header = request_value(self, 'HTTP_ACCEPT_LANGUAGE', '')
        if notes is None or not isinstance(header, str) or \
                BROWSER_LANGUAGES_KEY in self.annotations:
            adapter = IUserPreferredLanguages(self, None)
            self._locale = None if adapter is None else locale_for(
                adapter.getPreferredLanguages())
            return
        key = (factory, header)
        known = _locales.get(key)
        if known is None:
            languages = list(factory(self).getPreferredLanguages())
            self._locale = locale_for(languages)
            remember(_locales, MAX_LOCALES, key, (languages, self._locale))
            return
        languages, self._locale = known
        if notes:
            self.annotations[BROWSER_LANGUAGES_KEY] = {
                'cached': list(languages)}

    def __repr__(self):
        # zope.publisher's short repr, naming zope.publisher's class for
        # ours (applications' doctests print it, e.g. zope.app.publication's
        # methodnotallowed.rst)
        shown = type(self)
        shown = STOCK_CLASSES.get(shown, shown)
        return '<%s.%s instance URL=%s>' % (shown.__module__, shown.__name__,
                                            str(self.URL))


#: The most language factories remembered ((interfaces, hook) pairs).
MAX_LANGUAGE_FACTORIES = 64

#: (the request's interfaces, the current site's adapter hook) -> (the
#: hook's registry's generation, the interfaces' resolution order, the
#: factory)
_language_factories = {}


def language_factory(request):
    """``adapter_factory(request, IUserPreferredLanguages)``, remembered
    per interfaces the request provides and adapter hook of the current
    site, for as long as neither the hook's registry (its generation) nor
    the interfaces (their resolution order) change.

    Only where adapting goes through zope.component's hook alone to a
    zope.interface lookup (``components.hooked_lookup1`` finds its
    ``lookup1``), the request has no ``__conform__`` and the registry is
    an ``AdapterRegistry`` that is not persistent (its generation follows
    its bases' changes): the global one, current while a request is
    made.  Otherwise it is asked every time."""
    if getattr(request, '__conform__', None) is not None \
            or components.hooked_lookup1(IUserPreferredLanguages) is None:
        return components.adapter_factory(request, IUserPreferredLanguages)
    hook = hooks.siteinfo.adapter_hook
    spec = providedBy(request)
    key = (spec, hook)
    known = _language_factories.get(key)
    if known is not None and known[1] is spec.__sro__ \
            and known[0] == known[3]._generation:
        return known[2]
    factory = components.adapter_factory(request, IUserPreferredLanguages)
    registry = getattr(hook.__self__, '_registry', None)
    if isinstance(registry, AdapterRegistry) \
            and not isinstance(registry, Persistent):
        remember(_language_factories, MAX_LANGUAGE_FACTORIES, key,
                 (registry._generation, spec.__sro__, factory, registry))
    return factory


def clear_language_factories():
    """Forget the remembered language factories (tests)."""
    _language_factories.clear()


#: The most languages of a request a locale is looked for.
MAX_LOCALE_LANGUAGES = 8
#: A language tag (RFC 5646's letters, digits and hyphens), as
#: zope.publisher's adapter gives it (lower case, ``_`` made ``-``): the
#: locale's file name is made of it.
LANGUAGE_TAG_RE = re.compile(r'[a-z0-9]{1,8}(?:-[a-z0-9]{1,8})*',
                             re.IGNORECASE)


def locale_for(languages):
    """zope.publisher's choice of a locale for ``languages``: the first
    with a locale (language, territory, variant), else the root locale.
    Only the first ``MAX_LOCALE_LANGUAGES`` distinct language tags are
    looked for (each costs a file lookup); other strings are skipped."""
    tried = set()
    for language in languages:
        if language in tried or not LANGUAGE_TAG_RE.fullmatch(language):
            continue
        if len(tried) >= MAX_LOCALE_LANGUAGES:
            break
        tried.add(language)
        parts = (language.split('-') + [None, None])[:3]
        try:
            return locales.getLocale(*parts)
        except LoadLocaleError:
            pass
    return locales.getLocale(None, None, None)


def clear_locales():
    """Forget the remembered locales (tests)."""
    _locales.clear()


class LinearCookies:
    """``_parseCookies`` as zope.publisher's, in linear time: the standard
    library's cookie parser before Python 3.11.10 costs the square of a
    quoted value's backslashes (``zope.pipeline.cookies``)."""

    __slots__ = ()

    def _parseCookies(self, text, result=None):
        return parse_cookies(text, result)


#: The most charsets of ``Accept-Charset`` a form is decoded with.
MAX_CHARSETS = 8
#: The most distinct charset names looked up among the codecs.
MAX_CHARSET_LOOKUPS = 2 * MAX_CHARSETS


class BoundedCharsets:
    """``_decode`` as zope.publisher's, with a few known charsets only.

    zope.publisher's ``BrowserRequest._decode`` tries every charset the
    client listed in ``Accept-Charset`` (repeats included) on every form
    value that is not text yet: the work is the number of values times
    the length of the header.  Here the charsets zope.publisher chose
    (its ``IUserPreferredCharsets`` adapter, in its order of preference)
    are cut down before the first value is decoded: each name once, only
    the text encodings Python knows (``known_charsets``), the first
    ``MAX_CHARSETS`` of them; UTF-8 when none is left, as zope.publisher
    decodes when the client lists none.
    """

    __slots__ = ()

    def _decode(self, text):
        if self.charsets is None:
            super()._decode('')  # zope.publisher sets self.charsets
            self.charsets = known_charsets(self.charsets) or ['utf-8']
        return super()._decode(text)


def known_charsets(names):
    """The first ``MAX_CHARSETS`` distinct text encodings among
    ``names``, in their order; at most ``MAX_CHARSET_LOOKUPS`` distinct
    names are looked up (an unknown name costs an import attempt)."""
    known, seen = [], set()
    for name in names:
        if name in seen:
            continue
        if len(known) >= MAX_CHARSETS or len(seen) >= MAX_CHARSET_LOOKUPS:
            break
        seen.add(name)
        if is_text_encoding(name):
            known.append(name)
    return known


def is_text_encoding(name):
    """Whether bytes can be decoded with the codec ``name`` (not with an
    unknown name, nor with a bytes-to-bytes codec such as ``hex``).  A
    byte is decoded: an empty ``bytes`` is decoded without a lookup."""
    try:
        b'a'.decode(name)
    except LookupError:
        return False
    except UnicodeError:  # a known codec (UTF-16 needs two bytes)
        pass
    return True


def read_xmlrpc_call(request, limit=0):
    """zope.publisher's ``XMLRPCRequest.processInputs``, in linear time.

    zope.publisher joins the body line by line (``lines += line``), which
    costs the square of the number of lines.  Here the body is read once,
    at most ``limit`` bytes (0: all of it; ``PayloadTooLarge``, a 413,
    beyond it), and parsed as zope.publisher parses it
    (``xmlrpc.client.loads``): the positional arguments, and the method
    name, split at dots, as the path suffix.
    """
    stream = request.bodyStream
    body = stream.read(limit + 1) if limit else stream.read()
    if limit and len(body) > limit:
        raise PayloadTooLarge('The XML-RPC call is larger than %d bytes.'
                              % limit)
    request._args, function = parse_xmlrpc(body)
    request.setPathSuffix(function.split('.'))


#: The most URLs remembered (the host and the names are the client's).
MAX_URLS = 1024

#: (level, path_only, application server, application names and traversed
#: names) -> the URL
_urls = {}


class RememberedURL:
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

    __slots__ = ()

    def getURL(self, level=0, path_only=False):
        if type(level) is not int:
            return super().getURL(level, path_only)
        key = (level, path_only, self._app_server, *self._app_names,
               *self._traversed_names)
        try:
            url = _urls.get(key)
        except TypeError:  # an argument or a name that cannot be a key
            return super().getURL(level, path_only)
        if url is None:
            url = super().getURL(level, path_only)
            remember(_urls, MAX_URLS, key, url)
        return url


def clear_urls():
    """Forget the remembered URLs (tests)."""
    _urls.clear()


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
    zope.publisher's own ``HTTPCharsets``, the charset is a function of
    ``request.get('HTTP_ACCEPT_CHARSET', '')`` alone: the first response
    for a value asks the adapter, the others with that value get its
    answer.  Any other adapter (an application's), or none, or a value
    that is not text goes the stock way every time."""
    if components.adapter_factory(request, IUserPreferredCharsets) \
            is not HTTPCharsets:
        return getCharsetUsingRequest(request)
    header = request_value(request, 'HTTP_ACCEPT_CHARSET', '')
    if type(header) is not str:
        return getCharsetUsingRequest(request)
    charset = _charsets.get(header)
    if charset is None:
        charset = getCharsetUsingRequest(request)
        remember(_charsets, MAX_RESPONSE_CHARSETS, header, charset)
    return charset


def clear_responses():
    """Forget what responses remembered: charsets, text types and header
    names (tests)."""
    _charsets.clear()
    _text_types.clear()
    _header_names.clear()


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
        remember(_text_types, MAX_TEXT_TYPES, key, known)
    return known


#: The most header names remembered in their sent form.
MAX_HEADER_NAMES = 256

#: A header name as set (lower case unless set literally) -> as sent
_header_names = {}

#: The header zope.publisher's ``getHeaders`` puts first in every response.
POWERED_BY = ('X-Powered-By', 'Zope (www.zope.org), Python (www.python.org)')


def header_name(name):
    """zope.publisher's spelling of a header name in ``getHeaders``: a
    lower-case name capitalized per hyphen-separated word, any other as
    set; remembered."""
    sent = _header_names.get(name)
    if sent is None:
        sent = name
        if name.lower() == name:
            sent = '-'.join([word.capitalize() for word in name.split('-')])
        remember(_header_names, MAX_HEADER_NAMES, name, sent)
    return sent


def lower_name(item):
    return item[0].lower()


class StockChecker:
    """``__Security_checker__``: the checker the configuration declared
    for zope.publisher's class (a ``<class>`` directive), so that a
    response of ours is proxied as zope.publisher's is."""

    def __init__(self, stock):
        self.stock = stock

    def __get__(self, instance, owner):
        if instance is None:
            return self
        # without a declaration, the default checker, as for any class
        # (a None here would make the proxy raise ValueError)
        return (getCheckerForInstancesOf(self.stock)
                or selectChecker(instance))


class RememberedCharset(publisher_http.HTTPResponse):
    """zope.publisher's ``HTTPResponse``, with less work per response.

    ``setResult`` looks the result's ``IResult`` adapter up as
    ``zope.pipeline.components.query_multi_adapter`` does; for a text
    result the request's preferred charset is remembered per
    ``Accept-Charset`` (``request_charset``), and the Content-Type made
    of the view's Content-Type and that charset per pair
    (``text_result_type``); a bytes result asks for no charset (it is not
    encoded); ``getHeaders`` spells header names as zope.publisher does,
    remembered, and makes no cookie header when there are no cookies.
    The outcome is zope.publisher's in every case.
    """

    __slots__ = ()

    __Security_checker__ = StockChecker(publisher_http.HTTPResponse)

    def __init__(self):
        # zope.publisher's HTTPResponse.__init__ (BaseResponse's, then the
        # reset of BrowserResponse, HTTPResponse and BaseResponse) in one
        # step for our own classes while their reset is zope.publisher's
        sets_base = STOCK_RESETS.get(type(self))
        if sets_base is None or type(self).reset is not STOCK_RESET_OF[
                sets_base]:
            super().__init__()
            return
        self._request = None
        self._headers = {}
        self._cookies = {}
        self._status = 599
        self._reason = 'No status set'
        self._status_set = False
        self._charset = None
        self.authUser = '-'
        if sets_base:
            self._base = ''

    def setResult(self, result):
        if IResult.providedBy(result):
            r = result
        else:
            r = components.query_multi_adapter((result, self._request),
                                               IResult)
            if r is None:
                if isinstance(result, (str, bytes)):
                    r = result
                elif result is None:
                    # bytes: a text result needs a text Content-Type
                    r = b''
                else:
                    raise TypeError(
                        'The result should be None, a string, or adaptable '
                        'to IResult.')
            if isinstance(r, (str, bytes)):
                r, headers = self._implicitResult(r)
                self._headers.update({k: [v] for (k, v) in headers})
                r = (r,)  # chunking should be much larger than per character
        self._result = r
        if not self._status_set:
            self.setStatus(200)

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

    def getHeaders(self):
        return self.headers_to_send(True)

    def headers_to_send(self, powered_by):
        """``getHeaders()``, without any ``X-Powered-By`` header unless
        ``powered_by``."""
        result = [POWERED_BY] if powered_by else []
        for key, values in sorted(self._headers.items(), key=lower_name):
            key = header_name(key)
            if not powered_by and key == POWERED_BY[0]:
                continue
            result.extend([(key, value) for value in values])
        if self._cookies:  # (Set-Cookie headers)
            result.extend([tuple(cookie.split(': ', 1))
                           for cookie in self._cookie_list()])
        return result


class HTTPResponse(RememberedCharset):
    """zope.publisher's ``HTTPResponse``, its charsets and header names
    remembered."""

    __slots__ = ()


class BrowserResponse(publisher_browser.BrowserResponse, RememberedCharset):
    """zope.publisher's ``BrowserResponse``, its charsets and header names
    remembered; its ``<base>`` insertion skipped where it has no base (it
    inserts none then)."""

    __slots__ = ()

    __Security_checker__ = StockChecker(publisher_browser.BrowserResponse)

    def _implicitResult(self, body):
        if not body and self.getHeader('content-type') is None:
            # Nothing to describe (the 303 after a form's POST, a 204): no
            # type guessed from an empty body, no warning that it was.
            return b'', [('content-length', '0')]
        if getattr(self, '_base', ''):
            return super()._implicitResult(body)
        # zope.publisher's BrowserResponse._implicitResult, without a base
        content_type = self.getHeader('content-type')
        if content_type is None and self._status != 304:
            if publisher_browser.isHTML(body):
                content_type = 'text/html'
            else:
                content_type = 'text/plain'
            self.setHeader('x-content-type-warning', 'guessed from content')
            self.setHeader('content-type', content_type)
        return RememberedCharset._implicitResult(self, body)


#: Our response classes whose state ``RememberedCharset.__init__`` sets
#: up at once -> whether zope.publisher's reset gives them a ``_base``.
STOCK_RESETS = {HTTPResponse: False, BrowserResponse: True}
#: Whether a base is set -> zope.publisher's reset that does it.
STOCK_RESET_OF = {False: publisher_http.HTTPResponse.reset,
                  True: publisher_browser.BrowserResponse.reset}


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


#: The most application servers remembered (the Host header is the
#: client's to choose).
MAX_SERVERS = 256

#: (SERVER_URL, HTTPS, SERVER_PORT_SECURE, HTTP_HOST, SERVER_NAME,
#: SERVER_PORT: what zope.publisher makes it of) -> the application server
_servers = {}


def clear_servers():
    """Forget the remembered application servers (tests)."""
    _servers.clear()


#: zope.publisher's steps ``LinearEnvironment._setup_path`` takes at once.
STOCK_SETUP_PATH = publisher_http.HTTPRequest._HTTPRequest__setupPath
STOCK_PATH_HELPER = publisher_http.HTTPRequest._setupPath_helper
STOCK_SET_STACK = publisher_http.HTTPRequest.setTraversalStack


class LinearEnvironment(publisher_http.HTTPRequest):
    """zope.publisher's ``HTTPRequest.__init__``, the same state set up,
    its environment copied in one step (``sane_environment``), its
    traversal stack made in one call (``_setup_path``) and its
    application server remembered per value of the keys it is made from
    (``_setup_url_base``).  Placed between zope.publisher's class and
    ``HTTPRequest`` in our classes' resolution order, so a
    ``BrowserRequest.__init__`` still runs first."""

    __slots__ = ()

    def __init__(self, body_instream, environ, response=None):
        body_instream = publisher_http.HTTPInputStream(body_instream,
                                                       environ)
        if type(self) in STOCK_CLASSES:
            # zope.publisher's BaseRequest.__init__, for our own classes
            self._traversal_stack = []
            self._last_obj_traversed = None
            self._traversed_names = []
            self._environ = environ
            self._args = ()
            self._response = self._createResponse() if response is None \
                else response
            self._response._request = self
            self._body_instream = body_instream
            self._held = ()
            self._principal = None
            self.debug = DebugFlags()
            self.interaction = None
            self.annotations = {}
        else:
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
        self._setup_path()
        self._setup_url_base(environ)
        self._vh_root = None
        self.setupLocale()

    def _setup_path(self):
        """``__setupPath``: the traversal stack made of ``PATH_INFO``, as
        zope.publisher's ``_setupPath_helper`` makes it, in one call
        where the class has zope.publisher's own ``__setupPath``,
        ``_setupPath_helper`` and ``setTraversalStack`` (``PATH_INFO``
        read as ``request_value`` reads it); else theirs."""
        cls = type(self)
        if cls._HTTPRequest__setupPath is not STOCK_SETUP_PATH \
                or cls._setupPath_helper is not STOCK_PATH_HELPER \
                or cls.setTraversalStack is not STOCK_SET_STACK:
            self._HTTPRequest__setupPath()
            return
        path = request_value(self, 'PATH_INFO', '/')
        if path.endswith('/'):
            path = path[:-1]
            self._endswithslash = True
        else:
            self._endswithslash = False
        clean = []
        for item in path.split('/'):
            if not item or item == '.':
                continue
            if item == '..':
                # zope.publisher removes the last name and keeps '..'
                if clean:
                    del clean[-1]
            clean.append(item)
        clean.reverse()
        self._traversal_stack[:] = clean
        self._path_suffix = None

    def _setup_url_base(self, environ):
        """``__setupURLBase``: the application names and server."""
        script = environ.get('SCRIPT_NAME', '').strip()
        self._app_names = [name for name in script.split('/') if name] \
            if script else []
        get = environ.get
        key = (get('SERVER_URL'), get('HTTPS'), get('SERVER_PORT_SECURE'),
               get('HTTP_HOST'), get('SERVER_NAME'), get('SERVER_PORT'))
        try:
            server = _servers.get(key)
        except TypeError:  # a value that cannot be a key
            self._HTTPRequest__setupURLBase()
            return
        if server is None:
            self._HTTPRequest__setupURLBase()
            remember(_servers, MAX_SERVERS, key, self._app_server)
            return
        self._app_server = server


class BrowserRequest(RememberedLocale, RememberedURL, LinearCookies,
                     BoundedCharsets, publisher_browser.BrowserRequest,
                     LinearEnvironment):
    """zope.publisher's ``BrowserRequest``, its locale and URLs remembered,
    its form decoded with a few known charsets."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    # proxied as zope.publisher's class is (``<class>`` in its ZCML)
    __Security_checker__ = StockChecker(publisher_browser.BrowserRequest)

    def _createResponse(self):
        return BrowserResponse()


class HTTPRequest(RememberedLocale, RememberedURL, LinearCookies,
                  LinearEnvironment):
    """zope.publisher's ``HTTPRequest``, its locale and URLs remembered."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    # proxied as zope.publisher's class is (``<class>`` in its ZCML)
    __Security_checker__ = StockChecker(publisher_http.HTTPRequest)

    def _createResponse(self):
        return HTTPResponse()


class XMLRPCRequest(RememberedLocale, RememberedURL, LinearCookies,
                    publisher_xmlrpc.XMLRPCRequest):
    """zope.publisher's ``XMLRPCRequest``, its locale and URLs remembered,
    its body read once."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    def processInputs(self):
        read_xmlrpc_call(self)


#: The most default skins remembered ((request class, registry) pairs).
MAX_SKINS = 64

#: (request class, adapter registry) -> (the registry's generation, the
#: class's resolution order, the declaration the request got or None)
_skins = {}


def set_default_skin(request):
    """zope.publisher's ``setDefaultSkin(request)``, its outcome remembered.

    Where the request declares nothing of its own yet and the registry has
    an interface (``browser:defaultSkin``), zope.publisher's
    ``getDefaultSkin`` or nothing at all as the default skin of its class
    (``skin_depends_on_class``), the outcome (the declaration
    ``directlyProvides`` gives the request, or none) depends on the
    request's class and the registry alone: the next requests of that
    class get the same declaration, for as long as neither the registry
    (its generation) nor the class's declarations (their resolution
    order) change.  A skin adapter called with the request (unnamed, or a
    named ``default`` one other than zope.publisher's), a request that
    declares something already and a persistent (local) registry go the
    stock way every time.
    """
    cls = type(request)
    spec = implementedBy(cls)
    if providedBy(request) is not spec:
        setDefaultSkin(request)
        return
    adapters = getSiteManager().adapters
    key = (cls, adapters)
    generation = getattr(adapters, '_generation', None)
    sro = spec.__sro__
    known = _skins.get(key)
    if known is not None and known[0] == generation and known[1] is sro:
        if known[2] is not None:
            request.__provides__ = known[2]
        return
    setDefaultSkin(request)
    if generation is None or isinstance(adapters, Persistent) or \
            not skin_depends_on_class(adapters, spec):
        return
    provided = providedBy(request)
    remember(_skins, MAX_SKINS, key,
             (generation, sro, provided if provided is not spec else None))


def skin_depends_on_class(adapters, spec):
    """Does ``setDefaultSkin`` give requests providing ``spec`` a skin
    that depends on ``spec`` and ``adapters`` alone?  Yes for an interface
    registered as the default skin (``browser:defaultSkin``), for
    zope.publisher's named ``default`` adapter (``getDefaultSkin``, which
    gives ``IDefaultBrowserLayer`` whatever the request) and for none; not
    for another adapter, unnamed or ``default``, which is called with the
    request."""
    skin = adapters.lookup((spec,), IDefaultSkin, '')
    if skin is None:
        skin = adapters.lookup((spec,), IDefaultSkin, 'default')
        return skin is None or skin is getDefaultSkin
    return IInterface.providedBy(skin)


def clear_skins():
    """Forget the remembered default skins (tests)."""
    _skins.clear()


@implementer(IRequestFactory)
class RequestFactory:
    """Makes requests of one zope.publisher request class.

    ``request_interface`` is the interface that marks requests of this type
    (used to name the type of a request in logs and introspection).
    """

    def __init__(self, request_class, request_interface=None):
        self.request_class = request_class
        self.request_interface = request_interface or implementedBy(
            request_class)

    def canHandle(self, environ):
        return True

    def __call__(self, input_stream, environ):
        request = self.request_class(input_stream, environ)
        set_default_skin(request)
        return request

    def __repr__(self):
        return '<RequestFactory %s.%s>' % (self.request_class.__module__,
                                           self.request_class.__name__)


#: Our request classes -> zope.publisher's they extend.
STOCK_CLASSES = {
    BrowserRequest: publisher_browser.BrowserRequest,
    HTTPRequest: publisher_http.HTTPRequest,
    XMLRPCRequest: publisher_xmlrpc.XMLRPCRequest,
}


browser = RequestFactory(BrowserRequest, IBrowserRequest)
xmlrpc = RequestFactory(XMLRPCRequest, IXMLRPCRequest)
http = RequestFactory(HTTPRequest, IHTTPRequest)


def request_interface_of(factory):
    """Return the interface that marks requests made by ``factory``."""
    interface = getattr(factory, 'request_interface', None)
    return interface if interface is not None else implementedBy(
        factory.request_class)


def probe_spec(factory, method='GET'):
    """Return the interfaces a request made by ``factory`` provides.

    Made from a real request for a synthetic environ, so the spec (default
    skin included) is the one the switch sees at run time.  Works for any
    IRequestFactory, not only ``RequestFactory``.
    """
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    request = factory(environ['wsgi.input'], environ)
    spec = providedBy(request)
    request.close()
    return spec


def as_request_factory(factory):
    """Return ``factory`` as an IRequestFactory (wrapping a request class)."""
    if IRequestFactory.providedBy(factory):
        return factory
    return RequestFactory(factory)
