"""A logout that commits the transaction itself (zope.pluggableauth's
session credentials plugin) answers through zope.pipeline as it does
through the classic publisher: the same test layer, once with each."""

import pytest

pytest.importorskip('zope.app.wsgi.testlayer')

import webtest
from zope.app.wsgi import testlayer

from zope.pipeline import testing

from . import logout_site

#: What the session of a user who logs in, then out, answers, request by
#: request: the principal with the credentials of the form, the principal
#: the session remembers, the logout, nobody.
LOGIN_THEN_LOGOUT = [
    ('/@@whoami?login=bob&password=bobpw', 'users.bob'),
    ('/@@whoami', 'users.bob'),
    ('/@@logout', 'logged out'),
    ('/@@whoami', 'zope.anybody'),
]


def log_in_then_out(layer_class):
    """The (status, body) of each request of LOGIN_THEN_LOGOUT through a
    ``layer_class`` layer of the logout site."""
    layer = layer_class(logout_site, allowTearDown=True)
    layer.setUp()
    try:
        layer.testSetUp()
        try:
            logout_site.populate(layer.getRootFolder())
            browser = webtest.TestApp(layer.make_wsgi_app())
            return [(response.status_int, response.text) for response in
                    (browser.get(path, expect_errors=True)
                     for path, _ in LOGIN_THEN_LOGOUT)]
        finally:
            layer.testTearDown()
    finally:
        layer.tearDown()


def test_logout_that_commits_answers_like_classic():
    expected = [(200, body) for _, body in LOGIN_THEN_LOGOUT]
    assert log_in_then_out(testlayer.BrowserLayer) == expected
    assert log_in_then_out(testing.BrowserLayer) == expected
