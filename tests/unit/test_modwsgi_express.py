"""zope.pipeline.serving.modwsgi_express: the WSGI script `serve --mod-wsgi`
writes for its daemon processes."""

import os
import re
import runpy

import pytest

from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.serving import modwsgi_express
from zope.pipeline.serving import startup


@pytest.fixture
def loaded(monkeypatch):
    """What the script asked ``load_site`` for, and the run directory
    the environment named when it did (no site is loaded)."""
    calls = []

    def load_site(ini, name, listen):
        calls.append((ini, name, listen, os.environ.get(RUN_DIR_VARIABLE)))
        return 'the application'

    monkeypatch.setattr(startup, 'load_site', load_site)
    # set first, so that what the script sets is undone after the test
    monkeypatch.setenv(RUN_DIR_VARIABLE, '')
    monkeypatch.delenv(RUN_DIR_VARIABLE)
    return calls


def test_the_daemons_script_names_the_servers_run_directory(tmp_path,
                                                             loaded):
    script = modwsgi_express.write_wsgi_script(
        str(tmp_path), '/srv/etc/deploy.ini', 'main', '/srv/var/run',
        '127.0.0.1:8080')
    namespace = runpy.run_path(script)
    assert namespace['application'] == 'the application'
    assert loaded == [('/srv/etc/deploy.ini', 'main', '127.0.0.1:8080',
                       '/srv/var/run')]


def test_a_run_directory_the_environment_names_is_kept(tmp_path, loaded,
                                                        monkeypatch):
    monkeypatch.setenv(RUN_DIR_VARIABLE, '/elsewhere')
    script = modwsgi_express.write_wsgi_script(
        str(tmp_path), '/srv/etc/deploy.ini', 'main', '/srv/var/run',
        '127.0.0.1:8080')
    runpy.run_path(script)
    assert loaded[0][3] == '/elsewhere'


# -- the body buffering


@pytest.mark.parametrize('host, listen', [('10.1.2.3', '10.1.2.3:8080'),
                                          ('', '8080')])
def test_the_clients_listener_proxies_bodies_to_the_daemons_one(
        tmp_path, host, listen):
    path = modwsgi_express.write_body_buffering_conf(str(tmp_path), host,
                                                     8080, 9123)
    with open(path) as stream:
        conf = stream.read()
    assert 'Listen %s\n' % listen in conf
    assert '<VirtualHost *:8080>' in conf
    assert 'RewriteRule ^ http://127.0.0.1:9123%1 [P,NE,E=buffered:1]' \
        in conf
    assert 'RewriteCond %{THE_REQUEST} "^\\S+ (/[^?\\s]*)"' in conf
    assert 'SetInputFilter BUFFER' in conf
    assert '<VirtualHost 127.0.0.1:9123>' in conf
    assert 'RemoteIPHeader X-Zope-Pipeline-Client-Address' in conf
    # A client's own header is removed before anything reads it.
    assert 'RequestHeader unset X-Zope-Pipeline-Client-Address early' \
        in conf


@pytest.mark.parametrize('connection, kept', [
    ('close, X-Zope-Pipeline-Client-Address', ['close']),
    ('X-Zope-Pipeline-Proxied,Keep-Alive', ['Keep-Alive']),
    ('keep-alive , x-forwarded-for,CLOSE ', ['keep-alive', 'CLOSE']),
    ('closed, keep-alives', []),
    ('close', ['close']),
    ('TE, Upgrade', []),
])
def test_connection_keeps_only_close_and_keep_alive_at_the_proxy(
        connection, kept):
    """What the clients' listener's ``RequestHeader edit*`` leaves of a
    Connection header (Python's re reads this expression as PCRE does):
    no header name that Apache's proxy would remove (empty elements of
    the list are allowed, RFC 9110 section 5.6.1)."""
    edited = re.sub(modwsgi_express.CONNECTION_TOKENS_RE, r'\1', connection)
    assert [token.strip() for token in edited.split(',')
            if token.strip()] == kept


def test_the_daemons_listener_gets_a_free_loopback_port():
    import socket
    port = modwsgi_express.free_loopback_port()
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', port))


class OfferedPorts:
    """socket.socket for free_loopback_port: the kernel offers these
    ports, one per probe."""

    def __init__(self, ports):
        self.ports = list(ports)

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False

    def bind(self, address):
        self.port = self.ports.pop(0)

    def getsockname(self):
        return ('127.0.0.1', self.port)


def test_the_daemons_listener_never_gets_the_clients_port(monkeypatch):
    """The clients' port is chosen first but bound by Apache later: the
    kernel can offer it again, and Apache then refused to start (two
    Listen lines for one address, seen in a full run)."""
    import socket
    monkeypatch.setattr(socket, 'socket', OfferedPorts([8080, 8080, 8081]))
    assert modwsgi_express.free_loopback_port(taken={8080}) == 8081


def test_no_free_loopback_port_besides_the_taken_one_is_an_error(
        monkeypatch):
    import socket
    monkeypatch.setattr(socket, 'socket', OfferedPorts([8080] * 100))
    with pytest.raises(OSError, match='besides 8080'):
        modwsgi_express.free_loopback_port(taken={8080})


def test_client_limits_are_mod_wsgi_express_options():
    assert modwsgi_express.client_limits(77) == [
        '--max-clients=77', '--header-timeout=10',
        '--header-max-timeout=20', '--header-min-rate=500',
        '--body-timeout=15', '--body-min-rate=500']


def test_the_system_apache_configuration_guards_its_proxy_the_same_way():
    """etc/apache/zope-pipeline.conf edits Connection with the same
    expression as ``serve --mod-wsgi``, and its daemons' listener refuses
    what lacks the proxy's headers."""
    with open(os.path.join(os.path.dirname(__file__), '..', '..', 'etc',
                           'apache', 'zope-pipeline.conf')) as stream:
        conf = stream.read()
    generated = modwsgi_express.BODY_BUFFERING_CONF % {
        'listen': '8080', 'port': 8080, 'inner_host': '127.0.0.1',
        'inner_port': 9123,
        'header': modwsgi_express.CLIENT_ADDRESS_HEADER,
        'proxied': modwsgi_express.PROXIED_HEADER,
        'connection_re': modwsgi_express.CONNECTION_TOKENS_RE}
    for line in ('RequestHeader edit* Connection "%s" "$1" early'
                 % modwsgi_express.CONNECTION_TOKENS_RE,
                 'RequestHeader unset X-Zope-Pipeline-Proxied early',
                 'RewriteRule ^ - [R=400,L]'):
        assert line in conf
        assert line in generated
