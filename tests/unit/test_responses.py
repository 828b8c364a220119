"""The responses of zope.pipeline's requests: zope.publisher's results
and headers (no type guessed for an empty body), sent without
``X-Powered-By`` unless kept; each test runs with the stock steps and
with zope.pipeline._speedups.zope_publisher's (their memos are tested in
tests/unit/test_speedups_zope_publisher.py)."""

import io

import pytest
from zope.component import provideAdapter
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.interface import implementer
from zope.publisher.browser import BrowserRequest
from zope.publisher.browser import BrowserResponse
from zope.publisher.http import HTTPCharsets
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.interfaces.http import IHTTPResponse
from zope.publisher.interfaces.http import IResult
from zope.security.checker import NamesChecker
from zope.security.checker import ProxyFactory
from zope.security.checker import defineChecker
from zope.security.interfaces import ForbiddenAttribute
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.engine import factories
from zope.pipeline.publishing import responses

from .test_speedups_zope_publisher import publisher_speedups  # noqa: F401
from .test_speedups_zope_publisher import stock_publisher  # noqa: F401


@pytest.fixture(params=['stock_publisher', 'publisher_speedups'])
def both_ways(request):
    """The stock steps, then the seam's."""
    request.getfixturevalue(request.param)


@pytest.fixture
def charsets(clean_zope, both_ways):
    from zope.component.hooks import setHooks
    setHooks()
    provideAdapter(HTTPCharsets)


def environ_for(accept_charset=None, method='GET', query=''):
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'QUERY_STRING': query, 'wsgi.input': io.BytesIO(b'')}
    if accept_charset is not None:
        environ['HTTP_ACCEPT_CHARSET'] = accept_charset
    return environ


def responded(make, environ, result, content_type=None, status=None,
              cookies=(), base=None):
    """(headers, body) a response of ``make``'s request gives ``result``."""
    response = make(io.BytesIO(b''), environ).response
    if base is not None:
        response.setBase(base)
    if content_type is not None:
        response.setHeader('Content-Type', content_type)
    if status is not None:
        response.setStatus(status)
    for name, value in cookies:
        response.setCookie(name, value, path='/')
    try:
        response.setResult(result)
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)
    return response.getHeaders(), response.consumeBody()


ACCEPT_CHARSETS = [None, '', 'utf-8', 'iso-8859-1', 'ISO-8859-1;q=0.9, *',
                   'koi8-r', 'x-unknown', 'utf-8;q=0', 'ascii, utf-8;q=0.5']
RESULTS = [
    ('<html><head></head><body>caf\u00e9 \u20ac</body></html>',
     'text/html'),
    ('caf\u00e9', 'text/plain;charset=iso-8859-1'),
    ('caf\u00e9', 'text/plain;charset=x-unknown'),
    ('{"a": "\u00e9"}', 'application/json'),
    ('<a/>', 'application/atom+xml; charset=koi8-r'),
    ('text', 'image/png'),
    ('text', 'text/html; charset="oops'),
    ('', None),
    ('plain text', None),
    ('<html><body>x</body></html>', None),
    (b'\xff bytes', 'application/octet-stream'),
    (b'<html></html>', None),
    (None, None),
    (object(), None),
]


@pytest.mark.parametrize('accept_charset', ACCEPT_CHARSETS)
@pytest.mark.parametrize('make, stock', [
    (factories.browser, BrowserRequest), (factories.http, HTTPRequest)],
    ids=['browser', 'http'])
def test_a_result_gets_the_headers_and_body_zope_publisher_gives(
        charsets, accept_charset, make, stock):
    for attempt in ('first', 'remembered'):
        for result, content_type in RESULTS:
            environ = environ_for(accept_charset)
            ours = responded(make, environ, result, content_type)
            theirs = responded(stock, environ, result, content_type)
            if make is factories.browser and is_empty(theirs):
                theirs = without_guessed_type(theirs)
            assert (attempt, result, content_type, ours) == (
                attempt, result, content_type, theirs)


@pytest.mark.parametrize('accept_charset', ['utf-8', 'iso-8859-1'])
@pytest.mark.parametrize('base', ['', 'http://localhost/caf\u00e9/'])
def test_a_response_with_a_base_inserts_it_as_zope_publisher_does(
        charsets, accept_charset, base):
    for result, content_type in RESULTS[:5] + [
            ('<html><head><base href="x" /></head></html>', 'text/html')]:
        environ = environ_for(accept_charset)
        assert responded(factories.browser, environ, result, content_type,
                         base=base) == responded(
            BrowserRequest, environ, result, content_type, base=base)


def is_empty(responded_result):
    """Whether a response has no body (``responded``'s result)."""
    return not isinstance(responded_result[0], type) and \
        responded_result[1] == b''


def without_guessed_type(responded_result):
    """zope.publisher's browser response without the type it guessed for
    an empty body (ours guesses none: ``test_an_empty_...``)."""
    headers, body = responded_result
    guessed = ('Content-Type', 'X-Content-Type-Warning')
    return [(name, value) for name, value in headers
            if name not in guessed], body


def test_an_empty_browser_response_gets_no_guessed_type(charsets):
    """The 303 after a form's POST has no body: zope.publisher calls it
    text/plain, 'guessed from content'; ours says no type."""
    for result in ('', b'', None):
        headers = dict(responded(factories.browser, environ_for(), result,
                                 status=303)[0])
        assert 'Content-Type' not in headers
        assert 'X-Content-Type-Warning' not in headers
        assert headers['Content-Length'] == '0'
    typed = dict(responded(factories.browser, environ_for(), '',
                           'text/html', status=200)[0])
    assert typed['Content-Type'].startswith('text/html')


def test_a_not_modified_response_gets_no_guessed_type(charsets):
    for result in ('x', b'x'):
        ours = responded(factories.browser, environ_for(), result,
                         status=304)
        assert ours == responded(BrowserRequest, environ_for(), result,
                                 status=304)
    assert 'Content-Type' not in dict(ours[0])


def test_responses_of_our_requests_are_zope_publishers_classes(both_ways):
    browser = factories.browser(io.BytesIO(b''), environ_for())
    http = factories.http(io.BytesIO(b''), environ_for(method='PUT'))
    assert isinstance(browser.response, BrowserResponse)
    assert isinstance(http.response, factories.HTTPResponse)
    assert type(browser.response.retry()) is type(browser.response)
    assert not hasattr(browser.response, '__dict__')


def test_a_form_field_named_like_the_header_is_read_as_zope_publisher_does(
        charsets):
    """The stock adapter reads ``request.get``: a form field wins."""
    for make in (factories.browser, BrowserRequest):
        request = make(io.BytesIO(b''), environ_for('utf-8'))
        request.form['HTTP_ACCEPT_CHARSET'] = 'koi8-r'
        request.response.setHeader('Content-Type', 'text/plain')
        request.response.setResult('x')
        assert request.response.getHeader('content-type') == \
            'text/plain;charset=koi8-r'
        request.form['HTTP_ACCEPT_CHARSET'] = ['a', 'list']
        with pytest.raises(AttributeError):  # as zope.publisher fails
            request.response.setResult('x')


@implementer(IUserPreferredCharsets)
class QueryCharsets:
    """An application's adapter: the charset a query field names."""

    def __init__(self, request):
        self.request = request

    def getPreferredCharsets(self):
        return [self.request.get('charset', 'utf-8')]


def test_an_adapter_registered_later_is_asked_at_once(charsets):
    headers, _ = responded(factories.browser, environ_for('koi8-r'), 'x',
                           'text/plain')
    assert dict(headers)['Content-Type'] == 'text/plain;charset=koi8-r'
    provideAdapter(QueryCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    headers, _ = responded(factories.browser, environ_for('koi8-r'), 'x',
                           'text/plain')
    assert dict(headers)['Content-Type'] == 'text/plain;charset=utf-8'


def test_a_subclass_of_the_stock_adapter_is_asked_every_time(charsets):
    class Latin1First(HTTPCharsets):
        def getPreferredCharsets(self):
            return ['iso-8859-1']

    provideAdapter(Latin1First, (IHTTPRequest,), IUserPreferredCharsets)
    headers, _ = responded(factories.browser, environ_for('koi8-r'), 'x',
                           'text/plain')
    assert dict(headers)['Content-Type'] == 'text/plain;charset=iso-8859-1'


def test_without_a_charset_adapter_text_is_utf8(clean_zope, both_ways):
    headers, body = responded(factories.browser, environ_for('koi8-r'),
                              '\u00e9', 'text/plain')
    assert (dict(headers)['Content-Type'], body) == (
        'text/plain;charset=utf-8', '\u00e9'.encode())


def test_headers_are_those_zope_publisher_sends(charsets):
    def fill(response):
        response.setHeader('content-type', 'text/plain')
        response.setHeader('X-Literal-name', 'a', literal=True)
        response.setHeader('x-lower', 'b', literal=True)
        response.addHeader('Vary', 'Accept')
        response.addHeader('Vary', 'Cookie')
        response.setHeader('x-powered-by', 'the app')
        response.setCookie('c', 'v\u00e9', path='/', max_age=3)
        response.expireCookie('gone')

    ours = factories.browser(io.BytesIO(b''), environ_for()).response
    stock = BrowserRequest(io.BytesIO(b''), environ_for()).response
    assert ours.getHeaders() == stock.getHeaders()
    fill(ours)
    fill(stock)
    assert ours.getHeaders() == stock.getHeaders()
    assert len(ours.getHeaders()) == 9
    assert ours.getHeaders()[0][0] == responses.POWERED_BY


@pytest.mark.parametrize('powered_by', [True, False])
def test_headers_sent_without_x_powered_by_unless_kept(charsets, powered_by):
    """``responses.headers_of`` takes ours as they are made, a stock
    response's filtered: the same headers."""
    environ = {keys.POWERED_BY: True} if powered_by else {}
    made = []
    for make in (factories.browser, BrowserRequest):
        response = make(io.BytesIO(b''), environ_for()).response
        response.setHeader('x-powered-by', 'the app')
        response.setHeader('Content-Type', 'text/html')
        response.setCookie('c', 'v')
        made.append(responses.headers_of(response, environ))
    assert made[0] == made[1]
    assert any(name == 'X-Powered-By' for name, _ in made[0]) is powered_by


def test_a_response_that_makes_its_own_headers_is_asked_for_them(charsets):
    """(its ``X-Powered-By`` dropped all the same)"""
    class OwnHeaders(factories.BrowserResponse):
        __slots__ = ()

        def getHeaders(self):
            return [('X-Powered-By', 'me'), ('X-Own', 'yes')]

    assert responses.headers_of(OwnHeaders(), {}) == [('X-Own', 'yes')]


def test_a_proxied_response_is_checked_as_zope_publishers(clean_zope,
                                                         both_ways):
    from zope.publisher.browser import BrowserResponse as Stock
    response = factories.browser(io.BytesIO(b''), environ_for()).response
    with pytest.raises(ForbiddenAttribute):
        ProxyFactory(response).setHeader('X-A', 'b')
    defineChecker(Stock, NamesChecker(list(IHTTPResponse)))
    proxied = ProxyFactory(response)
    proxied.setHeader('X-A', 'b')
    with pytest.raises(ForbiddenAttribute):
        proxied.setResult(ProxyFactory(response)._headers)
    assert response.getHeader('x-a') == 'b'
    assert isinstance(type(response).__Security_checker__,
                      factories.StockChecker)


class Chunks:
    """A result zope.publisher adapts to IResult (registered below)."""

    def __init__(self, *chunks):
        self.chunks = chunks


@implementer(IResult)
class ChunksResult:

    def __init__(self, chunks, request):
        self.chunks = chunks

    def __iter__(self):
        return iter(self.chunks.chunks)


def test_results_adapted_to_iresult_are_as_in_zope_publisher(charsets):
    from zope.publisher.http import DirectResult
    provideAdapter(ChunksResult, (Chunks, IHTTPRequest), IResult)
    for result in (Chunks(b'a', b'b'), DirectResult([b'c'])):
        made = []
        for make in (factories.browser, BrowserRequest):
            response = make(io.BytesIO(b''), environ_for()).response
            response.setResult(result)
            made.append((response.getStatus(), response.getHeaders(),
                         b''.join(response.consumeBodyIter())))
        assert made[0] == made[1]
        assert made[0][2] in (b'ab', b'c')


def test_a_content_type_that_is_not_text_fails_as_in_zope_publisher(
        charsets):
    failed = []
    for make in (factories.browser, BrowserRequest):
        response = make(io.BytesIO(b''), environ_for()).response
        response.addHeader('content-type', 42)
        with pytest.raises(TypeError) as info:
            response.setResult('x')
        failed.append(str(info.value))
    assert failed[0] == failed[1]


@pytest.mark.parametrize('stock, make', [
    (BrowserRequest, factories.browser),
    (HTTPRequest, factories.http),
])
def test_a_proxied_request_is_checked_as_zope_publishers(clean_zope,
                                                         both_ways, stock,
                                                         make):
    # a template's view/request/URL: the request proxied, as classic
    # Zope's is, by the checker declared for zope.publisher's class
    request = make(io.BytesIO(b''), environ_for())
    with pytest.raises(ForbiddenAttribute):
        ProxyFactory(request).getURL()
    defineChecker(stock, NamesChecker(['getURL', 'response']))
    proxied = ProxyFactory(request)
    assert proxied.getURL() == request.getURL()
    assert removeSecurityProxy(proxied.response) is request.response
    with pytest.raises(ForbiddenAttribute):
        proxied.processInputs()
