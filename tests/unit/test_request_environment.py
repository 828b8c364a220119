"""The request's environment with zope.pipeline._speedups.zope_publisher:
our request classes copy the environment in one step
(``zope_publisher.sane_environment``, ``http_init``, ``browser_init``),
set zope.publisher's ``BaseRequest`` state at once, make the traversal
stack in one call and remember the application server; our responses
set their state at once; the state is zope.publisher's."""

import io

import pytest
from zope.publisher.browser import BrowserRequest
from zope.publisher.browser import BrowserResponse
from zope.publisher.http import HTTPRequest
from zope.publisher.http import HTTPResponse
from zope.publisher.http import sane_environment as stock_sane_environment

from zope.pipeline._speedups import zope_publisher
from zope.pipeline.engine import factories

from .test_speedups_zope_publisher import publisher_speedups  # noqa: F401

#: Slots whose values are objects made per request (the response of our
#: own class): compared by whether they are set.
MADE_PER_REQUEST = {'_response', '_body_instream', 'debug', '__provides__'}
MISSING = object()


def slots_of(cls):
    for klass in cls.__mro__:
        slots = vars(klass).get('__slots__', ())
        yield from ((slots,) if isinstance(slots, str) else slots)


def state(request):
    """Every slot of ``request`` (per-request objects by type)."""
    found = {}
    for name in set(slots_of(type(request))) - {'__weakref__'}:
        value = getattr(request, name, MISSING)
        if name in MADE_PER_REQUEST:
            value = value is not MISSING
        found[name] = value
    found['form'] = getattr(request, 'form', MISSING)
    found['charsets'] = getattr(request, 'charsets', MISSING)
    return found


def environ_with(**extra):
    environ = {'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/a/b', 'SCRIPT_NAME': '',
               'QUERY_STRING': '', 'wsgi.url_scheme': 'http',
               'wsgi.input': io.BytesIO(b'')}
    environ.update(extra)
    return environ


ENVIRONS = {
    'plain': environ_with(),
    'host and port': environ_with(HTTP_HOST='example.com:8080'),
    'default port in host': environ_with(HTTP_HOST='example.com:80'),
    'https': environ_with(HTTPS='on', SERVER_PORT='443'),
    'secure port': environ_with(SERVER_PORT_SECURE='1', SERVER_PORT='8443'),
    'server url': environ_with(SERVER_URL=' http://proxy.example/ '),
    'script name': environ_with(SCRIPT_NAME='/mount/point/'),
    'redirect prefix': environ_with(REDIRECT_HTTP_HOST='other.example',
                                    REDIRECT_REDIRECT_STATUS='200'),
    'redirect prefix overriding a key': dict(
        environ_with(), REDIRECT_PATH_INFO='/moved'),
    'redirect inside a name': environ_with(HTTP_X_REDIRECT_TO='x'),
    'cgi authorization': environ_with(HTTP_CGI_AUTHORIZATION='Basic eDp5'),
    'authorization': environ_with(HTTP_AUTHORIZATION='Basic eDp5'),
    'cookies': environ_with(HTTP_COOKIE='a=1; b="two"'),
    'latin-1 path': environ_with(PATH_INFO='/caf\xc3\xa9/'),
    'bytes path': environ_with(PATH_INFO=b'/caf\xc3\xa9'),
    'no path': {key: value for key, value in environ_with().items()
                if key != 'PATH_INFO'},
    'method in lower case': environ_with(REQUEST_METHOD='post'),
    'key that is not text': environ_with() | {1: 'one'},
    'dots and empty names in the path': environ_with(
        PATH_INFO='/./a//b/../c/./'),
    'parent names beyond the root': environ_with(PATH_INFO='/../../a/..'),
    'root path': environ_with(PATH_INFO='/'),
    'empty path': environ_with(PATH_INFO=''),
    'a cookie named like the path': environ_with(
        HTTP_COOKIE='PATH_INFO=/from/cookie'),
}


@pytest.mark.parametrize('environ', ENVIRONS.values(), ids=ENVIRONS)
def test_the_environment_is_the_one_zope_publisher_makes(environ):
    """The same keys in the same order, the same values, or the same
    error."""
    def outcome(sane_environment):
        try:
            sane = sane_environment(environ)
        except Exception as error:
            return type(error)
        return list(sane.items())

    assert outcome(zope_publisher.sane_environment) == outcome(
        stock_sane_environment)


@pytest.mark.parametrize('stock, ours', [
    (BrowserRequest, factories.BrowserRequest),
    (HTTPRequest, factories.HTTPRequest)], ids=['browser', 'http'])
@pytest.mark.parametrize('environ', ENVIRONS.values(), ids=ENVIRONS)
def test_a_request_has_the_state_zope_publisher_sets_up(
        publisher_speedups, stock, ours, environ):
    """A request of ours holds what zope.publisher's holds, the original
    environ itself included."""
    def made(cls, environ):
        try:
            return state(cls(io.BytesIO(b''), environ))
        except Exception as error:
            return type(error)

    expected = made(stock, dict(environ))
    for _ in range(2):  # the second time, its server remembered
        original = dict(environ)
        assert made(ours, original) == expected
    assert vars(ours)['__init__'] in (zope_publisher.http_init,
                                      zope_publisher.browser_init)
    if isinstance(expected, dict):
        body = io.BytesIO(b'')
        request = ours(body, original)
        assert request._orig_env is original
        assert request.response._request is request
        assert request._body_instream.stream is body


@pytest.fixture
def servers(publisher_speedups):  # noqa: F811
    yield zope_publisher._servers


def test_each_host_gets_its_own_server(servers):
    first = factories.BrowserRequest(io.BytesIO(b''), environ_with(
        HTTP_HOST='a.example'))
    other = factories.BrowserRequest(io.BytesIO(b''), environ_with(
        HTTP_HOST='b.example:81'))
    again = factories.BrowserRequest(io.BytesIO(b''), environ_with(
        HTTP_HOST='a.example'))
    assert (first._app_server, other._app_server, again._app_server) == (
        'http://a.example', 'http://b.example:81', 'http://a.example')
    assert len(servers) == 2


@pytest.mark.parametrize('changed', [
    {'HTTPS': 'on'}, {'SERVER_PORT_SECURE': '1'}, {'SERVER_PORT': '8080'},
    {'SERVER_NAME': 'other'}, {'SERVER_URL': 'https://given'},
    {'HTTP_HOST': 'h'}])
def test_a_server_is_made_afresh_when_what_it_is_made_of_changes(
        servers, changed):
    """Each key zope.publisher makes the server of is part of the key
    it is remembered by."""
    before = factories.HTTPRequest(io.BytesIO(b''), environ_with())
    after = factories.HTTPRequest(io.BytesIO(b''), environ_with(**changed))
    stock = HTTPRequest(io.BytesIO(b''), environ_with(**changed))
    assert before._app_server == 'http://localhost'
    assert after._app_server == stock._app_server != before._app_server


def test_a_value_that_cannot_be_a_key_goes_the_stock_way(servers):
    class Host(str):
        __hash__ = None

    request = factories.BrowserRequest(io.BytesIO(b''), environ_with(
        HTTP_HOST=Host('example.com:81')))
    assert request._app_server == 'http://example.com:81'
    assert servers == {}


def test_a_value_zope_publisher_cannot_read_fails_the_same_way(servers):
    for cls in (HTTPRequest, factories.HTTPRequest):
        with pytest.raises(AttributeError):
            cls(io.BytesIO(b''), environ_with(HTTPS=1))
    assert servers == {}


def test_remembered_servers_are_bounded(servers, monkeypatch):
    """The Host header is the client's: at most MAX_SERVERS servers are
    kept (then they are forgotten and remembered afresh)."""
    monkeypatch.setattr(zope_publisher, 'MAX_SERVERS', 3)
    for number in range(10):
        request = factories.BrowserRequest(io.BytesIO(b''), environ_with(
            HTTP_HOST='h%d.example' % number))
        assert request._app_server == 'http://h%d.example' % number
        assert 1 <= len(servers) <= 3


class OwnPathHelper(factories.BrowserRequest):
    __slots__ = ()

    def _setupPath_helper(self, attr):
        super()._setupPath_helper(attr)
        self._traversal_stack.append('helper')


class OwnTraversalStack(factories.BrowserRequest):
    __slots__ = ()

    def setTraversalStack(self, stack):
        super().setTraversalStack(['stack'] + list(stack))


class OwnGet(factories.BrowserRequest):
    __slots__ = ()

    def get(self, key, default=None):
        if key == 'PATH_INFO':
            return '/from/get'
        return super().get(key, default)


@pytest.mark.parametrize('cls, stack', [
    (OwnPathHelper, ['b', 'a', 'helper']),
    (OwnTraversalStack, ['stack', 'b', 'a']),
    (OwnGet, ['get', 'from'])], ids=['helper', 'stack', 'get'])
def test_a_class_with_its_own_path_steps_gets_them_called(
        publisher_speedups, cls, stack):  # noqa: F811
    """The traversal stack is made in one step only where the class has
    zope.publisher's own steps; a class overriding one gets it called."""
    request = cls(io.BytesIO(b''), environ_with())
    assert request.getTraversalStack() == stack


FORM_COOKIE_ENVIRON = environ_with(HTTP_COOKIE='both=cookie; cookie=c',
                                   HTTP_BOTH='environ', QUERY_STRING='x=1')


@pytest.mark.parametrize('cls', [
    BrowserRequest, HTTPRequest, factories.BrowserRequest,
    factories.HTTPRequest, OwnGet], ids=['browser', 'http', 'our browser',
                                         'our http', 'own get'])
@pytest.mark.parametrize('key', [
    'both', 'cookie', 'HTTP_BOTH', 'form', 'PATH_INFO', 'missing'])
def test_a_request_value_is_what_the_request_gets(cls, key):
    """``request_value`` reads the form, then the cookies, then the
    environment, as zope.publisher's ``get`` does (or calls the class's
    own ``get``), default included."""
    request = cls(io.BytesIO(b''), dict(FORM_COOKIE_ENVIRON))
    if hasattr(request, 'form'):
        request.form.update(both='form', form='f')
    default = object()
    assert zope_publisher.request_value(request, key, default) is request.get(
        key, default)


class OwnSubclass(factories.BrowserRequest):
    __slots__ = ('__provides__',)


@pytest.mark.parametrize('environ', [ENVIRONS['plain'], ENVIRONS['cookies']],
                         ids=['plain', 'cookies'])
def test_a_subclass_of_ours_is_set_up_by_zope_publishers_init(
        publisher_speedups, environ):  # noqa: F811
    """Our classes set zope.publisher's ``BaseRequest`` state at once; a
    subclass of theirs has ``BaseRequest.__init__`` called, with the same
    outcome."""
    expected = state(BrowserRequest(io.BytesIO(b''), dict(environ)))
    assert state(OwnSubclass(io.BytesIO(b''), dict(environ))) == expected
    assert state(factories.BrowserRequest(io.BytesIO(b''),
                                          dict(environ))) == expected


def response_state(response):
    return {name: getattr(response, name, MISSING)
            for name in set(slots_of(type(response))) - {'__weakref__'}}


class ResetCounting(zope_publisher.BrowserResponse):
    __slots__ = ()
    resets = 0

    def reset(self):
        type(self).resets += 1
        super().reset()


class OwnBrowserResponse(zope_publisher.BrowserResponse):
    __slots__ = ()


@pytest.mark.parametrize('ours, stock', [
    (zope_publisher.HTTPResponse, HTTPResponse),
    (zope_publisher.BrowserResponse, BrowserResponse),
    (OwnBrowserResponse, BrowserResponse),
    (ResetCounting, BrowserResponse)],
    ids=['http', 'browser', 'subclass', 'own reset'])
def test_a_response_has_the_state_zope_publisher_sets_up(ours, stock):
    """The seam's responses set zope.publisher's state at once; a
    subclass, or a class with a reset of its own (called), gets
    zope.publisher's ``__init__``."""
    assert response_state(ours()) == response_state(stock())
    retried = ours().retry()
    assert type(retried) is ours
    assert response_state(retried) == response_state(stock())
    if ours is ResetCounting:
        assert ResetCounting.resets == 3  # each response made
