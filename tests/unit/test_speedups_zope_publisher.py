"""zope.pipeline._speedups.zope_publisher: zope.publisher's request and
response steps, their outcomes remembered; the same answers as the stock
steps, the memos bounded, the stock steps back when uninstalled."""

import io

import pytest
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.xmlrpc import XMLRPCRequest

from zope.pipeline import components
from zope.pipeline._speedups import zope_publisher
from zope.pipeline.engine import factories

from .environs import minimal_environ


@pytest.fixture
def publisher_speedups(monkeypatch):
    """This module installed for the test, whatever
    ZOPE_PIPELINE_SPEEDUPS says (with the seam's zope_component, which
    tells it the adapter factories), its memos empty."""
    try:
        from zope.pipeline._speedups import zope_component
    except ImportError:  # components tells the factories itself
        zope_component = None
    if zope_component is not None:
        for name in zope_component.REPLACED:
            monkeypatch.setattr(components, name,
                                getattr(zope_component, name))
    installed = bool(zope_publisher._saved)
    zope_publisher.install()
    zope_publisher.clear()
    yield
    zope_publisher.clear()
    if not installed:
        zope_publisher.uninstall()


@pytest.fixture
def stock_publisher():
    """This module uninstalled for the test."""
    installed = bool(zope_publisher._saved)
    zope_publisher.uninstall()
    yield
    if installed:
        zope_publisher.install()


#: The default factories, the zope.publisher class each extends and a
#: method each is chosen for.
over_factories = pytest.mark.parametrize('factory, stock, method', [
    (factories.browser, BrowserRequest, 'GET'),
    (factories.xmlrpc, XMLRPCRequest, 'POST'),
    (factories.http, HTTPRequest, 'PUT'),
], ids=['browser', 'xmlrpc', 'http'])


# -- installing

def test_install_puts_the_steps_in_place_and_uninstall_takes_them_away(
        stock_publisher):
    def state():
        return [(owner, name, vars(owner).get(name))
                for owner, name, _ in zope_publisher.swaps()]

    stock = state()
    zope_publisher.install()
    try:
        zope_publisher.install()  # a second time: nothing more
        assert state() == [(owner, name, value)
                           for owner, name, value in zope_publisher.swaps()]
        assert len(zope_publisher._saved) == len(stock)
    finally:
        zope_publisher.uninstall()
    assert state() == stock
    assert 'getURL' not in vars(factories.BrowserRequest)
    assert vars(factories.BrowserRequest)['_createResponse'] is [
        value for owner, name, value in stock
        if owner is factories.BrowserRequest
        and name == '_createResponse'][0]


def test_the_seam_lists_this_module():
    from zope.pipeline import _speedups
    assert 'zope_publisher' in _speedups.MODULES
# -- URLs: zope.publisher's, remembered per server, names and arguments

@pytest.fixture
def urls(clean_zope, publisher_speedups, monkeypatch):
    """Forgets the remembered URLs; counts zope.publisher's quoting."""
    from zope.publisher import http
    quoted = []

    def quote(name, safe):
        quoted.append(name)
        return stock_quote(name, safe)

    stock_quote = http.quote
    monkeypatch.setattr(http, 'quote', quote)
    zope_publisher.clear()
    yield quoted
    zope_publisher.clear()


def url_request(make, host='localhost', app_names=(), names=(),
                method='GET'):
    """A request of ``make`` for ``host`` (a Host header), under the
    virtual host names ``app_names``, that has traversed ``names``."""
    environ = minimal_environ(method)
    environ['HTTP_HOST'] = host
    request = make(io.BytesIO(b''), environ)
    if app_names:
        request.setVirtualHostRoot(list(app_names))
    request._traversed_names = list(names)
    return request


#: Names with characters quoted and kept (getURL keeps '/', '+' and '@').
URL_NAMES = [(), ('folder',), ('folder', 'page', 'index.html'),
             ('++etc++site', '@@view', 'a b', 'caf\xe9', 'x/y%z+w?q#r')]
#: (level, path_only) pairs asked of each request.
URL_ARGUMENTS = [(level, path_only) for level in (0, 1, 2)
                 for path_only in (False, True)]


def url_or_error(request, level, path_only):
    try:
        return request.getURL(level, path_only)
    except Exception as error:
        return type(error)


@over_factories
@pytest.mark.parametrize('names', URL_NAMES)
@pytest.mark.parametrize('app_names', [(), ('vh', 'r\xf6\xf6t')],
                         ids=['no-vh', 'vh'])
def test_a_remembered_url_is_the_one_zope_publisher_makes(
        urls, factory, stock, method, names, app_names):
    """Each level and form of the URL, asked of a first request and of a
    second one with the same host and names (remembered: nothing quoted
    again), is zope.publisher's; a level deeper than the names raises
    IndexError every time."""
    def ask(make):
        request = url_request(make, 'example.com:8080', app_names, names,
                              method)
        return [url_or_error(request, *arguments)
                for arguments in URL_ARGUMENTS]

    expected = ask(stock)
    assert (IndexError in expected) == (len(app_names) + len(names) < 2)
    assert ask(factory) == expected
    quoted = len(urls)
    assert ask(factory) == expected
    assert urls[quoted:] == []


def test_urls_of_other_hosts_and_names_are_made_afresh(urls):
    first = url_request(factories.browser, 'a.example.com', (), ('x',))
    assert first.getURL() == 'http://a.example.com/x'
    other_host = url_request(factories.browser, 'b.example.com', (), ('x',))
    assert other_host.getURL() == 'http://b.example.com/x'
    other_name = url_request(factories.browser, 'a.example.com', (), ('y',))
    assert other_name.getURL() == 'http://a.example.com/y'
    moved = url_request(factories.browser, 'a.example.com', ('x',), ())
    assert moved.getURL() == 'http://a.example.com/x'
    first._traversed_names.append('z')
    assert first.getURL() == 'http://a.example.com/x/z'
    assert first.getURL(1) == 'http://a.example.com/x'


@pytest.mark.parametrize('level, path_only', [
    (True, False), (1.0, False), ('1', True), (0, []), (1, 'yes')])
def test_odd_url_arguments_answer_as_zope_publisher_does(
        urls, level, path_only):
    """A level that is not an int goes the stock way (a bool is a level,
    a float or a string a TypeError); any ``path_only`` answers as it does
    in zope.publisher, which reads it for its truth (an unhashable one
    goes the stock way)."""
    def ask(make):
        request = url_request(make, names=('a', 'b'))
        remembered = [request.getURL(1), request.getURL(1, True)]
        return remembered + [url_or_error(request, level, path_only)
                             for _ in range(2)]

    assert ask(factories.browser) == ask(BrowserRequest)


def test_a_name_that_is_not_text_fails_as_it_does_in_zope_publisher(urls):
    def ask(make):
        return url_or_error(url_request(make, names=('a', ['b'])), 0, False)

    assert ask(factories.browser) is ask(BrowserRequest) is AttributeError


def test_remembered_urls_are_bounded(urls, monkeypatch):
    """Host and names are the client's: at most MAX_URLS URLs are kept
    (then they are forgotten and remembered afresh)."""
    monkeypatch.setattr(zope_publisher, 'MAX_URLS', 3)
    for number in range(10):
        request = url_request(factories.browser, names=('n%d' % number,))
        assert request.getURL() == 'http://localhost/n%d' % number
        assert 1 <= len(zope_publisher._urls) <= 3




# -- responses: charsets per Accept-Charset, Content-Types

@pytest.fixture
def charsets(clean_zope, publisher_speedups):
    from zope.component import provideAdapter
    from zope.component.hooks import setHooks
    from zope.publisher.http import HTTPCharsets
    setHooks()
    provideAdapter(HTTPCharsets)


def respond(environ, content_type, result='x'):
    response = factories.browser(io.BytesIO(b''), environ).response
    response.setHeader('Content-Type', content_type)
    response.setResult(result)
    return response


def charset_environ(accept_charset=None):
    if accept_charset is None:
        return minimal_environ()
    return minimal_environ(HTTP_ACCEPT_CHARSET=accept_charset)


def test_responses_are_the_seams(charsets):
    response = respond(charset_environ(), 'text/plain')
    assert isinstance(response, zope_publisher.RememberedCharset)
    assert isinstance(response, factories.BrowserResponse)
    http = factories.http(io.BytesIO(b''), minimal_environ('PUT')).response
    assert isinstance(http, zope_publisher.HTTPResponse)


def test_the_charset_is_remembered_per_accept_charset(charsets):
    for _ in range(3):
        for value in ('koi8-r', 'iso-8859-1, utf-8'):
            respond(charset_environ(value), 'text/plain')
    assert zope_publisher._charsets == {'koi8-r': 'koi8-r',
                                        'iso-8859-1, utf-8': 'utf-8'}
    assert set(zope_publisher._text_types) == {('text/plain', 'koi8-r'),
                                               ('text/plain', 'utf-8')}


def test_another_charset_adapter_is_asked_every_time(charsets):
    from zope.component import provideAdapter
    from zope.i18n.interfaces import IUserPreferredCharsets
    from zope.publisher.interfaces.http import IHTTPRequest

    from .test_responses import QueryCharsets
    respond(charset_environ('koi8-r'), 'text/plain')
    assert zope_publisher._charsets == {'koi8-r': 'koi8-r'}
    provideAdapter(QueryCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    zope_publisher.clear()
    for charset in ('iso-8859-1', 'koi8-r', 'utf-16'):
        request = factories.browser(io.BytesIO(b''),
                                    charset_environ('koi8-r'))
        request.form['charset'] = charset
        request.response.setHeader('Content-Type', 'text/plain')
        request.response.setResult('x')
        assert request.response.getHeader('content-type') == \
            'text/plain;charset=' + charset
    assert zope_publisher._charsets == {}


@pytest.mark.parametrize('memo, bound, vary', [
    ('_charsets', 'MAX_RESPONSE_CHARSETS',
     lambda n: (charset_environ('x-%d, utf-8' % n), 'text/plain')),
    ('_text_types', 'MAX_TEXT_TYPES',
     lambda n: (charset_environ(), 'text/plain;x=%d' % n)),
    ('_header_names', 'MAX_HEADER_NAMES',
     lambda n: (charset_environ(), 'text/plain')),
], ids=['charsets', 'text types', 'header names'])
def test_the_remembered_outcomes_are_bounded(charsets, monkeypatch, memo,
                                             bound, vary):
    monkeypatch.setattr(zope_publisher, bound, 3)
    for number in range(10):
        environ, content_type = vary(number)
        response = factories.browser(io.BytesIO(b''), environ).response
        response.setHeader('Content-Type', content_type)
        response.setHeader('X-Header-%d' % number, 'v')
        response.setResult('x')
        stock = BrowserRequest(io.BytesIO(b''), environ).response
        stock.setHeader('Content-Type', content_type)
        stock.setHeader('X-Header-%d' % number, 'v')
        stock.setResult('x')
        assert response.getHeaders() == stock.getHeaders()
        assert 1 <= len(getattr(zope_publisher, memo)) <= 3


def headers_sent(make):
    response = make(io.BytesIO(b''), charset_environ()).response
    response.setHeader('x-my-header', 'a')
    response.setHeader('X-Literal-NAME', 'b', literal=True)
    response.setResult(b'x')
    return response.getHeaders()


def test_header_names_are_remembered_as_zope_publisher_spells_them(
        charsets):
    """A name set in lower case is capitalized per word, a literal one
    kept; the next responses get the remembered spelling."""
    for _ in range(2):
        assert headers_sent(factories.browser) == headers_sent(
            BrowserRequest)
    assert zope_publisher._header_names['x-my-header'] == 'X-My-Header'
    assert zope_publisher._header_names['X-Literal-NAME'] == \
        'X-Literal-NAME'


def test_cookies_are_sent_as_zope_publisher_sends_them(charsets):
    made = []
    for make in (factories.browser, BrowserRequest):
        response = make(io.BytesIO(b''), charset_environ()).response
        response.setCookie('a', 'b', path='/')
        response.setResult(b'x')
        made.append(response.getHeaders())
    assert made[0] == made[1]
    assert ('Set-Cookie', 'a=b; Path=/') in made[0]


def test_a_header_name_that_is_not_text_is_not_remembered(charsets):
    assert zope_publisher.header_name(b'X-Bytes') == b'X-Bytes'
    assert zope_publisher._header_names == {}
