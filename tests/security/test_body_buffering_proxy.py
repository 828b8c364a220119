"""The body-buffering proxy of ``serve --mod-wsgi`` (and of
etc/apache/zope-pipeline.conf: tests/integration/test_system_apache.py)
told to drop headers.

Apache's proxy removes every header a client names in ``Connection``
(hop-by-hop headers, RFC 9110 section 7.6.1), the ones the clients'
listener has just set included: ``Connection: close,
X-Zope-Pipeline-Client-Address`` got a client logged as the proxy
(127.0.0.1), and ``Connection: X-Forwarded-For`` strips a header a front
proxy sent.  The clients' listener lets ``Connection`` name only
``close`` and ``keep-alive``; the daemons' listener refuses a request
without the headers the clients' listener sets, or whose headers do not
agree."""

import http.client
import os
import re
import socket

import pytest

from tests.integration import support

pytestmark = pytest.mark.integration

#: A loopback address that is not the proxy's (127.0.0.1).
CLIENT = '127.0.0.2'
ECHO = '/folder/@@echo'
FORM = {'Content-Type': 'application/x-www-form-urlencoded'}


def have_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(('::1', 0))
    except OSError:
        return False
    return True


def echo(port, method='POST', headers=None, source=CLIENT, body=b'a=1'):
    """(status, what the echo view saw, response headers)."""
    connection = http.client.HTTPConnection(
        '::1' if source == '::1' else '127.0.0.1', port, timeout=30,
        source_address=(source, 0))
    try:
        connection.request(method, ECHO, body=body if method == 'POST'
                           else None, headers=dict(
                               headers or {},
                               **(FORM if method == 'POST' else {})))
        response = connection.getresponse()
        text = response.read().decode('utf-8', 'replace')
        return (response.status, dict(line.split('=', 1) for line in
                                      text.splitlines() if '=' in line),
                dict(response.getheaders()))
    finally:
        connection.close()


def inner_port(server):
    """The daemons' listener of a ``serve --mod-wsgi`` server."""
    with open(os.path.join(server.server_root,
                           'body-buffering.conf')) as stream:
        return int(re.search(r'<VirtualHost 127\.0\.0\.1:(\d+)>',
                             stream.read()).group(1))


class DualStackServer(support.ModWsgiServer):
    """Listening on every address, IPv6 included (when there is one)."""

    def command(self):
        command = super().command()
        return command + (['--host', '::'] if have_ipv6_loopback() else [])


@pytest.fixture(scope='module')
def server():
    support.need_mod_wsgi()
    # CLIENT is also a trusted front proxy (its X-Forwarded-For believed)
    with support.sqlite_site({'virtual_host.trusted_proxies': CLIENT},
                             site_zcml=support.SLOW_SITE_ZCML) as site:
        server = DualStackServer(site, processes=1, threads=2)
        with support.running(server):
            yield server


@pytest.mark.parametrize('connection', [
    'close, X-Zope-Pipeline-Client-Address',
    'X-Zope-Pipeline-Client-Address',
    'keep-alive,x-zope-pipeline-client-address , X-Zope-Pipeline-Proxied',
])
def test_connection_header_cannot_strip_the_client_address_at_the_proxy(
        server, connection):
    status, seen, headers = echo(server.port,
                                 headers={'Connection': connection})

    assert status == 200
    assert seen['REMOTE_ADDR'] == CLIENT
    assert seen['zope.pipeline.client_address'] == CLIENT
    assert seen['body'] == "3 b'a=1'"
    if 'close' in connection:
        assert headers.get('Connection') == 'close'


def test_connection_header_cannot_strip_the_ipv6_client_address_at_the_proxy(
        server):
    """The review's case: a client at ::1 was logged as 127.0.0.1."""
    if not have_ipv6_loopback():
        pytest.skip('no IPv6 loopback address')
    status, seen, _ = echo(server.port, source='::1', headers={
        'Connection': 'close, X-Zope-Pipeline-Client-Address'})

    assert status == 200
    assert seen['zope.pipeline.client_address'] == '::1'


def test_connection_header_cannot_strip_a_front_proxys_header_at_the_proxy(
        server):
    """The X-Forwarded-For of a trusted front proxy (at CLIENT), named
    in Connection by its client, reaches the site whether Apache proxied
    the request (a body) or served it directly: its client is not taken
    for the front proxy (a loopback address)."""
    forwarded = {'Connection': 'close, X-Forwarded-For',
                 'X-Forwarded-For': '192.0.2.7'}

    proxied = echo(server.port, headers=forwarded)[1]
    direct = echo(server.port, 'GET', headers=forwarded)[1]

    assert proxied['zope.pipeline.client_address'] == '192.0.2.7'
    assert direct['zope.pipeline.client_address'] == '192.0.2.7'


@pytest.mark.parametrize('headers', [
    {},
    {'X-Zope-Pipeline-Client-Address': '127.0.0.3'},
    {'X-Zope-Pipeline-Proxied': '127.0.0.3 http'},
    {'X-Zope-Pipeline-Client-Address': '127.0.0.3',
     'X-Zope-Pipeline-Proxied': '127.0.0.4 http'},
    {'X-Zope-Pipeline-Client-Address': '127.0.0.3',
     'X-Zope-Pipeline-Proxied': '127.0.0.3 gopher'},
])
def test_daemons_listener_refuses_a_request_without_the_proxys_headers(
        server, headers):
    status, seen, _ = echo(inner_port(server), headers=headers,
                           source='127.0.0.1')

    assert status == 400
    assert 'REMOTE_ADDR' not in seen


def test_daemons_listener_takes_the_proxys_headers_when_they_agree(server):
    status, seen, _ = echo(inner_port(server), source='127.0.0.1', headers={
        'X-Zope-Pipeline-Client-Address': '127.0.0.3',
        'X-Zope-Pipeline-Proxied': '127.0.0.3 https'})

    assert status == 200
    assert seen['REMOTE_ADDR'] == '127.0.0.3'
    assert seen['wsgi.url_scheme'] == 'https'
