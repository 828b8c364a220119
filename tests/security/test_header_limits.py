"""The request line and headers are bounded by every server zope-pipeline
runs, before the application sees them: waitress by its head limit (it
had none but its 256 KiB default), Apache (mod_wsgi-express, the system
configuration) by its own LimitRequestLine, LimitRequestFieldSize and
LimitRequestFields, which nothing we ship raises."""

import os
import re
import socket
import threading

import pytest
import waitress.server

from zope.pipeline.commands import serve
from zope.pipeline.serving.modwsgi_express import SECURITY_CONF

from tests.conftest import ROOT
from tests.security.conftest import build_site

APACHE_CONF = os.path.join(ROOT, 'etc', 'apache', 'zope-pipeline.conf')
#: Apache's defaults (https://httpd.apache.org/docs/2.4/mod/core.html).
APACHE_LIMITS = {'LimitRequestLine': 8190, 'LimitRequestFieldSize': 8190,
                 'LimitRequestFields': 100}
#: A query string of the review's records attack, 3,000 x 2 fields.
HUGE_QUERY = '&'.join(['r.a:records=1'] * 3000 +
                      ['r.b%d:default:records=1' % n for n in range(3000)])


@pytest.fixture
def waitress_port(clean_zope):
    """The sample site under waitress with the options `serve` gives."""
    publisher = build_site()
    options = serve.waitress_options(publisher, '127.0.0.1', 0, 2)
    server = waitress.server.create_server(publisher, **options)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield server.effective_port
    server.close()
    thread.join(5)


def raw_status(port, head):
    """The status code waitress answers a raw request head with."""
    with socket.create_connection(('127.0.0.1', port), timeout=30) as sock:
        sock.sendall(head)
        reply = b''
        while b'\r\n' not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply.split(b' ', 2)[1])


def get(path, *headers):
    lines = ['GET %s HTTP/1.1' % path, 'Host: localhost', *headers,
             'Connection: close']
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1')


def test_waitress_is_given_a_head_limit_in_line_with_apache():
    assert serve.MAX_REQUEST_HEAD <= 4 * APACHE_LIMITS['LimitRequestLine']


def test_waitress_refuses_a_query_string_beyond_its_head_limit(
        waitress_port):
    assert len(HUGE_QUERY) > serve.MAX_REQUEST_HEAD
    assert raw_status(waitress_port, get('/folder/page?' + HUGE_QUERY)) \
        == 431
    assert raw_status(waitress_port, get('/folder/page?a=1')) == 200


def test_waitress_refuses_many_or_large_headers_beyond_its_head_limit(
        waitress_port):
    many = ['X-Junk-%d: %s' % (number, 'a' * 100) for number in range(400)]
    assert raw_status(waitress_port, get('/folder/page', *many)) == 431
    assert raw_status(waitress_port, get(
        '/folder/page', 'Cookie: a=' + 'b' * 40000)) == 431
    assert raw_status(waitress_port, get(
        '/folder/page', 'Cookie: a=' + 'b' * 4000)) == 200


def limits_in(text):
    return {name: int(value) for name, value in re.findall(
        r'^\s*(LimitRequest(?:Line|FieldSize|Fields))\s+(\d+)', text,
        re.M)}


def test_the_mod_wsgi_express_configuration_states_apaches_limits():
    assert limits_in(SECURITY_CONF) == APACHE_LIMITS


def test_mod_wsgi_express_itself_sets_no_request_line_or_header_limit():
    import mod_wsgi.express.apache
    with open(mod_wsgi.express.apache.__file__) as stream:
        assert limits_in(stream.read()) == {}


def test_the_system_apache_configuration_raises_no_request_limit():
    with open(APACHE_CONF) as stream:
        limits = limits_in(stream.read())
    assert all(value <= APACHE_LIMITS[name]
               for name, value in limits.items()), limits


def test_a_real_mod_wsgi_express_server_refuses_long_lines_and_headers():
    from tests.integration import support
    support.need_mod_wsgi()
    with support.sqlite_site() as site:
        server = support.ModWsgiServer(site, processes=1, threads=2)
        with support.running(server):
            line = raw_status(server.port, get('/?' + HUGE_QUERY))
            field = raw_status(server.port, get(
                '/', 'Cookie: a=' + 'b' * 9000))
            fields = raw_status(server.port, get(
                '/', *['X-Junk-%d: 1' % number for number in range(101)]))
            ordinary = support.request(server.port, '/')[0]
    assert (line, field, fields, ordinary) == (414, 400, 400, 200)

