"""Request factories: zope.publisher's request classes, made per request.

The default factories make requests of subclasses of zope.publisher's
``BrowserRequest``, ``HTTPRequest`` and ``XMLRPCRequest`` that change only
what would cost more than linear work: the locale is looked for among a
few language tags (``BoundedLocale``, ``locale_for``); a browser request
decodes its form with at most ``MAX_CHARSETS`` distinct known charsets of
``Accept-Charset`` (``BoundedCharsets``), not with every charset listed,
repeats included; an XML-RPC request reads its body once
(``read_xmlrpc_call``), not line by line; cookies are unquoted in one pass
(``LinearCookies``).  Their ``repr`` names zope.publisher's class, as the
classic publisher's requests did (``StockRepr``).  A browser response
guesses no Content-Type for an empty body (``BrowserResponse``).  Every
other step is zope.publisher's own: its ``__init__``, ``reset``,
``setDefaultSkin``, ``getURL``, ``setResult`` and ``getHeaders``
(``zope.pipeline._speedups.zope_publisher`` puts remembered outcomes in
place of some of them when the speedups are installed).
"""

import io
import re
from xmlrpc.client import loads as parse_xmlrpc

from zope.component import getSiteManager
from zope.i18n.interfaces import IUserPreferredLanguages
from zope.i18n.locales import LoadLocaleError
from zope.i18n.locales import locales
from zope.interface import implementedBy
from zope.interface import implementer
from zope.interface import providedBy
from zope.interface.interfaces import IInterface
from zope.publisher import browser as publisher_browser
from zope.publisher import http as publisher_http
from zope.publisher import xmlrpc as publisher_xmlrpc
from zope.publisher.interfaces import IDefaultSkin
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.skinnable import getDefaultSkin
from zope.publisher.skinnable import setDefaultSkin
from zope.security.checker import getCheckerForInstancesOf
from zope.security.checker import selectChecker

from zope.pipeline.http.cookies import parse_cookies
from zope.pipeline.http.errors import PayloadTooLarge
from zope.pipeline.interfaces import IRequestFactory


class BoundedLocale:
    """``setupLocale`` as zope.publisher's, its work bounded.

    zope.publisher's ``setupLocale`` adapts the request to
    ``IUserPreferredLanguages``, parses the preferred languages and loads
    the first locale that exists, trying every language the client listed
    (a file looked for each); a "language" naming a path loaded any XML
    file of the server as a locale.  Here the locale is chosen among the
    first ``MAX_LOCALE_LANGUAGES`` distinct languages that are language
    tags (``locale_for``).
    """

    __slots__ = ()

    def setupLocale(self):
        adapter = IUserPreferredLanguages(self, None)
        self._locale = None if adapter is None else locale_for(
            adapter.getPreferredLanguages())


class StockRepr:
    """zope.publisher's short ``repr``, naming zope.publisher's class for
    ours (applications' doctests print it, e.g. zope.app.publication's
    methodnotallowed.rst)."""

    __slots__ = ()

    def __repr__(self):
        shown = type(self)
        shown = STOCK_CLASSES.get(shown, shown)
        return '<%s.%s instance URL=%s>' % (shown.__module__, shown.__name__,
                                            str(self.URL))


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


class LinearCookies:
    """``_parseCookies`` as zope.publisher's, in linear time: the standard
    library's cookie parser before Python 3.11.10 costs the square of a
    quoted value's backslashes (``zope.pipeline.http.cookies``)."""

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


class HTTPResponse(publisher_http.HTTPResponse):
    """zope.publisher's ``HTTPResponse``, proxied as zope.publisher's is."""

    __slots__ = ()

    __Security_checker__ = StockChecker(publisher_http.HTTPResponse)


class BrowserResponse(publisher_browser.BrowserResponse):
    """zope.publisher's ``BrowserResponse``, without a type guessed for an
    empty body."""

    __slots__ = ()

    __Security_checker__ = StockChecker(publisher_browser.BrowserResponse)

    def _implicitResult(self, body):
        if not body and self.getHeader('content-type') is None:
            # Nothing to describe (the 303 after a form's POST, a 204): no
            # type guessed from an empty body, no warning that it was.
            return b'', [('content-length', '0')]
        return super()._implicitResult(body)


class BrowserRequest(StockRepr, BoundedLocale, LinearCookies,
                     BoundedCharsets, publisher_browser.BrowserRequest):
    """zope.publisher's ``BrowserRequest``, its locale chosen among a few
    languages, its form decoded with a few known charsets."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    # proxied as zope.publisher's class is (``<class>`` in its ZCML)
    __Security_checker__ = StockChecker(publisher_browser.BrowserRequest)

    def _createResponse(self):
        return BrowserResponse()


class HTTPRequest(StockRepr, BoundedLocale, LinearCookies,
                  publisher_http.HTTPRequest):
    """zope.publisher's ``HTTPRequest``, its locale chosen among a few
    languages."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    # proxied as zope.publisher's class is (``<class>`` in its ZCML)
    __Security_checker__ = StockChecker(publisher_http.HTTPRequest)

    def _createResponse(self):
        return HTTPResponse()


class XMLRPCRequest(StockRepr, BoundedLocale, LinearCookies,
                    publisher_xmlrpc.XMLRPCRequest):
    """zope.publisher's ``XMLRPCRequest``, its locale chosen among a few
    languages, its body read once."""

    # a slot of its own, as zope.publisher's classes declare (else
    # zope.interface gives the class a read-only ClassProvides)
    __slots__ = ('__provides__',)

    def processInputs(self):
        read_xmlrpc_call(self)


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
        setDefaultSkin(request)
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


def default_skin_registrations(adapters, spec):
    """What ``setDefaultSkin`` looks up for requests providing ``spec``:
    the unnamed ``IDefaultSkin`` registration and the ``default`` one."""
    return (adapters.lookup((spec,), IDefaultSkin, ''),
            adapters.lookup((spec,), IDefaultSkin, 'default'))


def skin_of_class_alone(skin, default):
    """Do these ``default_skin_registrations`` give a skin that depends on
    the request's interfaces alone?  Yes for an interface registered as
    the default skin (``browser:defaultSkin``), for zope.publisher's named
    ``default`` adapter (``getDefaultSkin``, which gives
    ``IDefaultBrowserLayer`` whatever the request) and for none; not for
    another adapter, unnamed or ``default``, which is called with the
    request."""
    if skin is None:
        return default is None or default is getDefaultSkin
    return IInterface.providedBy(skin)


def skin_depends_on_class(adapters, spec):
    """Does ``setDefaultSkin`` give requests providing ``spec`` a skin
    that depends on ``spec`` and ``adapters`` alone
    (``skin_of_class_alone``)?"""
    return skin_of_class_alone(*default_skin_registrations(adapters, spec))


def request_spec_inputs(factory):
    """What the interfaces of a request made by ``factory`` are decided
    by, when nothing of the request's environ decides them: a tuple (the
    adapter registry, the request class's declaration, its resolution
    order and the default skin registrations ``setDefaultSkin`` looks up)
    to compare item by item with ``is`` (``same_inputs``); while it is
    the same, every request the factory makes provides the same
    interfaces.  None when they may depend on the request: a factory
    other than ``RequestFactory``, a request class other than this
    module's (whose ``__init__`` declares nothing), or a default skin
    adapter called with the request."""
    if type(factory) is not RequestFactory or \
            factory.request_class not in STOCK_CLASSES:
        return None
    adapters = getSiteManager().adapters
    spec = implementedBy(factory.request_class)
    skin, default = default_skin_registrations(adapters, spec)
    if not skin_of_class_alone(skin, default):
        return None
    return (adapters, spec, spec.__iro__, skin, default)


def same_inputs(inputs, other):
    """Are two ``request_spec_inputs`` the same objects, item by item?"""
    return other is not None and all(
        mine is theirs for mine, theirs in zip(inputs, other))


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
