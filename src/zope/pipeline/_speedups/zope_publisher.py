"""zope.publisher's request and response steps, their outcomes remembered.

``install()`` gives zope.pipeline's request classes
(``zope.pipeline.engine.factories``) and their factory methods that
remember what zope.publisher's would compute afresh or set up at once
what it sets up through chains of calls, and has them make responses
that do the same; ``uninstall()`` takes them away again (the classes are
then plain subclasses of zope.publisher's, made by zope.publisher's own
steps).  Each answer is zope.publisher's in every case; a case a memo
cannot tell goes the stock way; every memo is bounded.

Counted alone: the instructions per request of the view-checked chain
(``python -m benchmarks.instructions --peer pipeline-checked
--requests 400``, hash seed 0) with the whole module, 1,388.6 k, and
without that piece:

- ``getURL`` remembers the URL per level, ``path_only``, application
  server, application names and traversed names: zope.publisher quotes
  every name each time it is asked.  33 k (2.4 %; counted before);
- a request copies its environment in one step where zope.publisher's
  ``sane_environment`` would change nothing (``http_init``,
  ``browser_init``): zope.publisher takes a Python step per key.  20 k
  with the benchmark's 16-key environ (1.5 %; counted before), 60 k
  with the 48 keys mod_wsgi passes (``--environ modwsgi``);
- a text result's response remembers the charset per ``Accept-Charset``
  where the charset adapter is zope.publisher's ``HTTPCharsets``, and the
  Content-Type per view type and charset (``RememberedCharset``).  30 k
  (2.2 %; counted before);
- the default skin per request class and registry
  (``set_default_skin``, the factories' ``__call__``: ``make_request``):
  30.3 k (2.2 %);
- the locale per ``Accept-Language`` and adapter, and the language
  adapter's factory per request interfaces and registry
  (``setupLocale``, ``language_factory``): 25.9 k (1.9 %);
- a response's state set at once, ``setResult`` without
  zope.component's call chain, header names spelled once per name with
  no cookie header made without cookies (``getHeaders``), and a browser
  response without a base skipping zope.publisher's ``<base>`` step
  (``RememberedCharset``, ``BrowserResponse``): 36.0 k (2.6 %);
- ``BaseRequest``'s state set at once, the traversal stack made in one
  call (``setup_path``) and the application server per the keys it is
  made of (``setup_url_base``): 14.4 k (1.0 %);
- a header read from the form, cookies and environment in one call
  (``request_value``): 12.1 k (0.9 %).

The last five were deleted once as pieces each under 1.5 %; together
they cost 6.1 % of the view-checked chain and 4.9 % of the proxied one
(issue 42's budget is 5 %), so they stand here as one piece: the
request's and response's construction, 111.8 k per request together
view-checked (1,500.4 k -> 1,388.6 k, -7.5 %) and 94.4 k proxied
(1,842.7 k -> 1,748.3 k, -5.1 %), the same Python calls per request for
it as zope.pipeline made before issue 42 (counted with
``sys.setprofile``).

They read zope.publisher's private state (``_app_server``,
``_app_names``, ``_traversed_names``, ``_cookies``, ``_environ``,
``_headers``, ``_base``, the name-mangled ``__setupCookies``,
``__setupPath`` and ``__setupURLBase``), zope.component's hook and the
registries' ``_generation``, and copy the parts of ``BaseRequest``'s
``__init__``, ``HTTPRequest.__init__``, ``BrowserRequest.__init__``,
``_setupPath_helper``, ``sane_environment``, ``HTTPResponse``'s
``__init__``/``reset``/``setResult``/``getHeaders``/``_implicitResult``,
``BrowserResponse._implicitResult`` and ``setDefaultSkin`` they change:
a change of zope.publisher inside the allowed versions can make them
wrong.  The whole module: see ``GAIN``.

What would retire it: zope.publisher remembering the quoted names of a
URL (or ``getURL`` quoting once per name), ``sane_environment`` copying
the environment with ``dict(environ)`` when no key has a ``REDIRECT_``
prefix, ``getCharsetUsingRequest`` and the parse of a text result's
Content-Type cached per value; ``setDefaultSkin`` caching its lookup
per request class and registry generation; ``setupLocale`` caching the
locale per preferred languages (and zope.i18n the parsed
``Accept-Language``); ``BaseRequest``, ``HTTPRequest`` and
``HTTPResponse`` setting their state in one ``__init__`` rather than
through ``super().__init__`` and ``reset`` chains, ``get`` reading the
form, cookies and environment without nested calls, and ``getHeaders``
spelling each name once; ``BrowserResponse`` inserting ``<base>`` only
when it has one.
"""

import zope.contenttype.parse
from persistent import Persistent
from zope.component import getSiteManager
from zope.component import hooks
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.i18n.interfaces import IUserPreferredLanguages
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.interface.adapter import AdapterRegistry
from zope.publisher import browser as publisher_browser
from zope.publisher import http as publisher_http
from zope.publisher.base import DebugFlags
from zope.publisher.browser import BROWSER_LANGUAGES_KEY
from zope.publisher.browser import BrowserLanguages
from zope.publisher.browser import CacheableBrowserLanguages
from zope.publisher.browser import ModifiableBrowserLanguages
from zope.publisher.http import HTTPCharsets
from zope.publisher.http import getCharsetUsingRequest
from zope.publisher.http import unicode_mimetypes_re
from zope.publisher.interfaces.http import IResult
from zope.publisher.skinnable import setDefaultSkin

from zope.pipeline import components
from zope.pipeline.engine import factories

#: The measured gain, instructions per request (400 requests, hash seed
#: 0): the proxied chain (``--peer pipeline``) and the view-checked chain
#: (``--peer pipeline-checked``), without and with this module, the
#: seam's other modules installed (-9.9 %, -12.4 %).
GAIN = {'pipeline': (1939388, 1748309),
        'pipeline-checked': (1585938, 1388597)}


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


# -- reading a header

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


# -- the environment, the path and the application server

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


#: Our request classes whose ``BaseRequest`` state ``http_init`` sets at
#: once (zope.publisher's ``BaseRequest.__init__`` is theirs); a subclass
#: of them (an application's) gets zope.publisher's ``__init__`` chain.
OWN_REQUESTS = frozenset((factories.BrowserRequest, factories.HTTPRequest))


def http_init(self, body_instream, environ, response=None):
    """zope.publisher's ``HTTPRequest.__init__``, the same state set up:
    ``BaseRequest``'s state at once for our own classes (``OWN_REQUESTS``),
    the environment copied in one step (``sane_environment``), the
    traversal stack made in one call (``setup_path``), the application
    server remembered per value of the keys it is made from
    (``setup_url_base``)."""
    body_instream = publisher_http.HTTPInputStream(body_instream, environ)
    if type(self) in OWN_REQUESTS:
        # zope.publisher's BaseRequest.__init__
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
    setup_path(self)
    setup_url_base(self, environ)
    self._vh_root = None
    self.setupLocale()


def browser_init(self, body_instream, environ, response=None):
    """zope.publisher's ``BrowserRequest.__init__``, then ``http_init``."""
    self.form = {}
    self.charsets = None
    http_init(self, body_instream, environ, response)


#: zope.publisher's steps ``setup_path`` takes at once.
STOCK_SETUP_PATH = publisher_http.HTTPRequest._HTTPRequest__setupPath
STOCK_PATH_HELPER = publisher_http.HTTPRequest._setupPath_helper
STOCK_SET_STACK = publisher_http.HTTPRequest.setTraversalStack


def setup_path(request):
    """zope.publisher's ``__setupPath``: the traversal stack made of
    ``PATH_INFO``, as its ``_setupPath_helper`` makes it, in one call
    where the class has zope.publisher's own ``__setupPath``,
    ``_setupPath_helper`` and ``setTraversalStack`` (``PATH_INFO`` read
    as ``request_value`` reads it); else theirs."""
    cls = type(request)
    if cls._HTTPRequest__setupPath is not STOCK_SETUP_PATH \
            or cls._setupPath_helper is not STOCK_PATH_HELPER \
            or cls.setTraversalStack is not STOCK_SET_STACK:
        request._HTTPRequest__setupPath()
        return
    path = request_value(request, 'PATH_INFO', '/')
    if path.endswith('/'):
        path = path[:-1]
        request._endswithslash = True
    else:
        request._endswithslash = False
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
    request._traversal_stack[:] = clean
    request._path_suffix = None


#: The most application servers remembered (the Host header is the
#: client's to choose).
MAX_SERVERS = 256

#: (SERVER_URL, HTTPS, SERVER_PORT_SECURE, HTTP_HOST, SERVER_NAME,
#: SERVER_PORT: what zope.publisher makes it of) -> the application server
_servers = {}


def setup_url_base(request, environ):
    """zope.publisher's ``__setupURLBase``: the application names, and
    the application server remembered per value of the keys
    zope.publisher makes it of (a value that cannot be a key goes the
    stock way)."""
    script = environ.get('SCRIPT_NAME', '').strip()
    request._app_names = [name for name in script.split('/') if name] \
        if script else []
    get = environ.get
    key = (get('SERVER_URL'), get('HTTPS'), get('SERVER_PORT_SECURE'),
           get('HTTP_HOST'), get('SERVER_NAME'), get('SERVER_PORT'))
    try:
        server = _servers.get(key)
    except TypeError:  # a value that cannot be a key
        request._HTTPRequest__setupURLBase()
        return
    if server is None:
        request._HTTPRequest__setupURLBase()
        components.remember(_servers, MAX_SERVERS, key, request._app_server)
        return
    request._app_server = server


# -- the locale

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

#: ``factories.BoundedLocale``'s ``setupLocale``: the stock way.
STOCK_SETUP_LOCALE = factories.BoundedLocale.setupLocale


def setupLocale(self):
    """``factories.BoundedLocale.setupLocale``, its outcome remembered.

    Where the adapter is one of zope.publisher's own
    (``HEADER_LANGUAGES``) and the request has no languages noted yet
    (``setPreferredLanguages`` notes them, then calls ``setupLocale``
    again), the outcome depends on the header's value only: the first
    request with a value sets the locale up and the others with that
    value get its languages (a list of their own, noted as the stock
    adapter notes them) and its locale (the same object, as zope.i18n's
    locale provider gives).  Any other adapter, header or state sets the
    locale up every time."""
    factory = language_factory(self)
    notes = HEADER_LANGUAGES.get(factory) \
        if isinstance(factory, type) else None
    header = request_value(self, 'HTTP_ACCEPT_LANGUAGE', '')
    if notes is None or type(header) is not str or \
            BROWSER_LANGUAGES_KEY in self.annotations:
        STOCK_SETUP_LOCALE(self)
        return
    key = (factory, header)
    known = _locales.get(key)
    if known is None:
        languages = list(factory(self).getPreferredLanguages())
        self._locale = factories.locale_for(languages)
        components.remember(_locales, MAX_LOCALES, key,
                            (languages, self._locale))
        return
    languages, self._locale = known
    if notes:
        self.annotations[BROWSER_LANGUAGES_KEY] = {'cached': list(languages)}


#: The most language factories remembered ((interfaces, hook) pairs).
MAX_LANGUAGE_FACTORIES = 64

#: (the request's interfaces, the current site's adapter hook) -> (the
#: hook's registry's generation, the interfaces' resolution order, the
#: factory, the registry)
_language_factories = {}


def language_factory(request):
    """``components.adapter_factory(request, IUserPreferredLanguages)``,
    remembered per interfaces the request provides and adapter hook of
    the current site, for as long as neither the hook's registry (its
    generation) nor the interfaces (their resolution order) change.

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
    registry = getattr(getattr(hook, '__self__', None), '_registry', None)
    if isinstance(registry, AdapterRegistry) \
            and not isinstance(registry, Persistent):
        components.remember(
            _language_factories, MAX_LANGUAGE_FACTORIES, key,
            (registry._generation, spec.__sro__, factory, registry))
    return factory


# -- the default skin

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
            not factories.skin_depends_on_class(adapters, spec):
        return
    provided = providedBy(request)
    components.remember(_skins, MAX_SKINS, key,
                        (generation, sro,
                         provided if provided is not spec else None))


def make_request(self, input_stream, environ):
    """``factories.RequestFactory.__call__``: the request, its default
    skin set as zope.publisher sets it, remembered (``set_default_skin``)."""
    request = self.request_class(input_stream, environ)
    set_default_skin(request)
    return request


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
    header = request_value(request, 'HTTP_ACCEPT_CHARSET', '')
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


#: The most header names remembered in their sent form.
MAX_HEADER_NAMES = 256

#: A header name as set (lower case unless set literally) -> as sent
_header_names = {}

#: The header zope.publisher's ``getHeaders`` puts first in every response.
POWERED_BY = ('X-Powered-By', 'Zope (www.zope.org), Python (www.python.org)')


def header_name(name):
    """zope.publisher's spelling of a header name in ``getHeaders``: a
    lower-case name capitalized per hyphen-separated word, any other as
    set; remembered (a name that is not text goes the stock way)."""
    sent = _header_names.get(name)
    if sent is None:
        sent = name
        if name.lower() == name:
            sent = '-'.join([word.capitalize() for word in name.split('-')])
        if type(name) is str:
            components.remember(_header_names, MAX_HEADER_NAMES, name, sent)
    return sent


def lower_name(item):
    return item[0].lower()


class RememberedCharset(publisher_http.HTTPResponse):
    """zope.publisher's ``HTTPResponse``, with less work per response.

    Our own classes (``STOCK_RESETS``) set its state at once where their
    ``reset`` is zope.publisher's; ``setResult`` looks the result's
    ``IResult`` adapter up as ``components.query_multi_adapter`` does; for
    a text result the request's preferred charset is remembered per
    ``Accept-Charset`` (``request_charset``), and the Content-Type made
    of the view's Content-Type and that charset per pair
    (``text_result_type``); a bytes result asks for no charset (it is not
    encoded); ``getHeaders`` spells header names as zope.publisher does,
    remembered (``header_name``), and makes no cookie header when there
    are no cookies.  Placed below zope.publisher's ``BrowserResponse`` in
    ``BrowserResponse``'s resolution order.
    """

    __slots__ = ()

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
        result = [POWERED_BY]
        for key, values in sorted(self._headers.items(), key=lower_name):
            key = header_name(key)
            result.extend([(key, value) for value in values])
        if self._cookies:  # (Set-Cookie headers)
            result.extend([tuple(cookie.split(': ', 1))
                           for cookie in self._cookie_list()])
        return result


class HTTPResponse(factories.HTTPResponse, RememberedCharset):
    """``factories.HTTPResponse``, its state set at once, its charsets
    and header names remembered."""

    __slots__ = ()


class BrowserResponse(factories.BrowserResponse, RememberedCharset):
    """``factories.BrowserResponse``, its state set at once, its charsets
    and header names remembered; zope.publisher's ``<base>`` insertion
    skipped where it has no base (it inserts none then)."""

    __slots__ = ()

    def _implicitResult(self, body):
        if getattr(self, '_base', ''):
            return super()._implicitResult(body)
        if not body and self.getHeader('content-type') is None:
            # factories.BrowserResponse's: no type guessed for nothing
            return b'', [('content-length', '0')]
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


#: The seam's response classes whose state ``RememberedCharset.__init__``
#: sets up at once -> whether zope.publisher's reset gives them a
#: ``_base``.
STOCK_RESETS = {HTTPResponse: False, BrowserResponse: True}
#: Whether a base is set -> zope.publisher's reset that does it.
STOCK_RESET_OF = {False: publisher_http.HTTPResponse.reset,
                  True: publisher_browser.BrowserResponse.reset}


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
        (factories.BrowserRequest, 'setupLocale', setupLocale),
        (factories.HTTPRequest, 'setupLocale', setupLocale),
        (factories.XMLRPCRequest, 'setupLocale', setupLocale),
        (factories.RequestFactory, '__call__', make_request),
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
    for memo in (_urls, _charsets, _text_types, _header_names, _servers,
                 _locales, _language_factories, _skins):
        memo.clear()
