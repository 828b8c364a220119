"""The sample site for hostile requests, and a client that sends raw ones.

WebTest's lint (wsgiref.validate) refuses most hostile requests before
they reach the application, so ``RawClient`` builds the environ by hand,
as a server would (PEP 3333: PATH_INFO is the latin-1 decoded path), and
calls the publisher with a start_response that checks nothing.
"""

import io
import os

import pytest
import zope.testing.cleanup

from zope.pipeline.zodb import storage

from tests.conftest import ROOT

SITE_ZCML = os.path.join(ROOT, 'etc', 'site-dev.zcml')
POPULATE = 'zope.pipeline.sample.content.populate'
#: Bodies above this many bytes are refused with 413 in these tests.
MAX_BODY = 100000


def site_settings(**extra):
    settings = {'open_root': {'populate': POPULATE},
                'retry': {'max_body': str(MAX_BODY)}}
    settings.update(extra)
    return settings


class Response:
    """What the publisher answered: status line, headers and body."""

    def __init__(self, status, headers, body):
        self.status = status
        self.status_int = int(status.split()[0])
        self.headers = headers
        self.body = body
        self.text = body.decode('utf-8', 'replace')

    def header_values(self, name):
        return [value for key, value in self.headers
                if key.lower() == name.lower()]


class RawClient:
    """Call a WSGI application with a hand-built environ."""

    def __init__(self, app):
        self.app = app

    def environ(self, method, path, query, body, headers, content_length,
                terminated):
        environ = {
            'REQUEST_METHOD': method, 'SCRIPT_NAME': '', 'PATH_INFO': path,
            'QUERY_STRING': query, 'SERVER_NAME': 'localhost',
            'SERVER_PORT': '80', 'SERVER_PROTOCOL': 'HTTP/1.1',
            'REMOTE_ADDR': '127.0.0.1', 'HTTP_HOST': 'localhost',
            'wsgi.version': (1, 0), 'wsgi.url_scheme': 'http',
            'wsgi.input': io.BytesIO(body), 'wsgi.errors': io.StringIO(),
            'wsgi.multithread': False, 'wsgi.multiprocess': False,
            'wsgi.run_once': False}
        if content_length is not None:
            environ['CONTENT_LENGTH'] = content_length
        elif body:
            environ['CONTENT_LENGTH'] = str(len(body))
        if terminated:
            environ['wsgi.input_terminated'] = True
        environ.update(headers or {})
        return environ

    def request(self, method='GET', path='/', query='', body=b'',
                headers=None, content_length=None, terminated=False):
        started = []

        def start_response(status, response_headers, exc_info=None):
            started[:] = [status, list(response_headers)]

        result = self.app(self.environ(method, path, query, body, headers,
                                       content_length, terminated),
                          start_response)
        try:
            body = b''.join(result)
        finally:
            if hasattr(result, 'close'):
                result.close()
        return Response(started[0], started[1], body)


def build_site(site_zcml=SITE_ZCML, settings=None):
    from zope.pipeline.app import make_app
    return make_app(site_zcml, settings or site_settings())


@pytest.fixture(scope='module')
def shared_site():
    """One sample site for a whole module (its requests change nothing
    that the others depend on); a clean registry before and after."""
    zope.testing.cleanup.cleanUp()
    yield RawClient(build_site())
    storage.close_all()
    zope.testing.cleanup.cleanUp()


@pytest.fixture
def raw_site(clean_zope):
    """A fresh sample site for one test, called with raw environs."""
    return RawClient(build_site())


@pytest.fixture
def cheap_unknown_login_check(monkeypatch):
    """The check a failed login with no bcrypt check pays, at bcrypt's
    lowest cost, for sites whose principals have plain-text passwords
    (where its cost proves nothing and would add 0.2 s to every failed
    login): tests/security/test_login_timing.py checks the real one."""
    import bcrypt

    from zope.pipeline.security import passwords
    monkeypatch.setattr(passwords, 'UNKNOWN_LOGIN_HASH',
                        b'{BCRYPT}' + bcrypt.gensalt(4))
