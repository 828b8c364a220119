"""The request's environment with zope.pipeline._speedups.zope_publisher:
our request classes copy the environment in one step
(``zope_publisher.sane_environment``, ``http_init``, ``browser_init``);
the state is zope.publisher's."""

import io

import pytest
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.http import sane_environment as stock_sane_environment

from zope.pipeline import factories
from zope.pipeline._speedups import zope_publisher

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
