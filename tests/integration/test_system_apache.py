"""etc/app.wsgi under a system Apache configured by
etc/apache/zope-pipeline.conf: the site's daemon processes serve the page,
administrative URLs go to their own daemon process group, HTTP Basic
credentials reach the application (an administrator `zope-pipeline
adduser` made), and TRACE is refused.  Its default, TLS, passes Apache's
configuration test with a certificate, and serves the site over HTTPS
with HSTS while plain HTTP only redirects there."""

import base64
import contextlib
import http.client
import os
import pwd
import shutil
import signal
import ssl
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from tests.conftest import need
from tests.integration import support

pytestmark = pytest.mark.integration

MODULES = '/usr/lib/apache2/modules'

HTTPD_CONF = '''\
ServerRoot "%(apache)s"
ServerName localhost
Listen 127.0.0.1:%(port)d
PidFile %(apache)s/httpd.pid
DefaultRuntimeDir %(apache)s
ErrorLog %(apache)s/error.log
LogLevel warn
LoadModule mpm_event_module %(modules)s/mod_mpm_event.so
LoadModule authz_core_module %(modules)s/mod_authz_core.so
LoadModule rewrite_module %(modules)s/mod_rewrite.so
LoadModule headers_module %(modules)s/mod_headers.so
LoadModule proxy_module %(modules)s/mod_proxy.so
LoadModule proxy_http_module %(modules)s/mod_proxy_http.so
LoadModule buffer_module %(modules)s/mod_buffer.so
LoadModule remoteip_module %(modules)s/mod_remoteip.so
LoadModule reqtimeout_module %(modules)s/mod_reqtimeout.so
%(module_config)s
# Debian's mods-enabled/mpm_event.conf and reqtimeout.conf, which
# apache2.conf includes before the sites.
<IfModule mpm_event_module>
StartServers 2
MinSpareThreads 25
MaxSpareThreads 75
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers 150
MaxConnectionsPerChild 0
</IfModule>
RequestReadTimeout header=20-40,MinRate=500 body=20,MinRate=500
WSGISocketPrefix %(apache)s/wsgi
User www-data
Group www-data
Define ZOPE_PIPELINE_ROOT %(root)s
Define ZOPE_PIPELINE_VENV %(venv)s
Define ZOPE_PIPELINE_PORT %(port)d
Define ZOPE_PIPELINE_BUFFERED_PORT %(buffered_port)d
Define ZOPE_PIPELINE_PLAIN_HTTP
Include %(root)s/etc/apache/zope-pipeline.conf
'''

#: The same server with the configuration's default: HTTPS on ``port``,
#: plain HTTP on ``http_port`` redirecting there.
HTTPD_TLS_CONF = '''\
ServerRoot "%(apache)s"
ServerName localhost
Listen 127.0.0.1:%(port)d https
Listen 127.0.0.1:%(http_port)d
PidFile %(apache)s/httpd.pid
DefaultRuntimeDir %(apache)s
ErrorLog %(apache)s/error.log
LogLevel warn
LoadModule mpm_event_module %(modules)s/mod_mpm_event.so
LoadModule authz_core_module %(modules)s/mod_authz_core.so
LoadModule ssl_module %(modules)s/mod_ssl.so
LoadModule headers_module %(modules)s/mod_headers.so
LoadModule alias_module %(modules)s/mod_alias.so
LoadModule rewrite_module %(modules)s/mod_rewrite.so
LoadModule proxy_module %(modules)s/mod_proxy.so
LoadModule proxy_http_module %(modules)s/mod_proxy_http.so
LoadModule buffer_module %(modules)s/mod_buffer.so
LoadModule remoteip_module %(modules)s/mod_remoteip.so
LoadModule reqtimeout_module %(modules)s/mod_reqtimeout.so
%(module_config)s
WSGISocketPrefix %(apache)s/wsgi
User www-data
Group www-data
Define ZOPE_PIPELINE_ROOT %(root)s
Define ZOPE_PIPELINE_VENV %(venv)s
Define ZOPE_PIPELINE_PORT %(port)d
Define ZOPE_PIPELINE_HTTP_PORT %(http_port)d
Define ZOPE_PIPELINE_BUFFERED_PORT %(buffered_port)d
Define ZOPE_PIPELINE_SERVER_NAME localhost:%(port)d
Define ZOPE_PIPELINE_TLS_CERTIFICATE %(apache)s/certificate.pem
Define ZOPE_PIPELINE_TLS_KEY %(apache)s/key.pem
Include %(root)s/etc/apache/zope-pipeline.conf
'''


def module_config():
    result = subprocess.run([support.MOD_WSGI_EXPRESS, 'module-config'],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


#: The administrator's password (given to adduser in its environment).
PASSWORD = 'system-apache-admin-password'


def make_project(directory):
    """A copy of etc/ (app.wsgi, site.zcml, zodb-sqlite.conf, apache/) with
    a var/ the daemon processes may write, and an ini for them, site.ini:
    deploy.ini (SQLite) with the production site and an administrator
    made by `zope-pipeline adduser`.  Returns (Apache's directory, the
    ini)."""
    etc = os.path.join(directory, 'etc')
    shutil.copytree(os.path.join(ROOT, 'etc'), etc)
    var = os.path.join(directory, 'var')
    os.mkdir(var)
    entry = pwd.getpwnam('www-data')
    os.chown(var, entry.pw_uid, entry.pw_gid)
    ini = os.path.join(etc, 'site.ini')
    with open(os.path.join(etc, 'deploy.ini')) as stream:
        text = stream.read()
    with open(ini, 'w') as stream:
        stream.write(text.replace(
            'site_zcml = site-dev.zcml',
            'site_zcml = site.zcml\nprincipals_zcml = ../var/principals.zcml'))
    result = support.zope_pipeline(
        'adduser', ini, '--login', 'boss',
        env={'ZOPE_PIPELINE_PASSWORD': PASSWORD})
    assert result.returncode == 0, result.stderr
    apache = os.path.join(directory, 'apache')
    os.mkdir(apache)
    return apache, ini


class SystemApache:

    def __init__(self, conf, error_log, port):
        self.conf = conf
        self.error_log = error_log
        self.port = port
        self.process = None
        self.ready = lambda: support.request(self.port,
                                             support.PAGE)[0] == 200

    def start(self, timeout=120, ini=None):
        apache2 = shutil.which('apache2') or shutil.which('httpd')
        environment = dict(os.environ)
        environment.pop('ZOPE_PIPELINE_INI', None)
        if ini is not None:
            environment['ZOPE_PIPELINE_INI'] = ini
        self.process = subprocess.Popen(
            [apache2, '-f', self.conf, '-DFOREGROUND'],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True, env=environment)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log()
            try:
                if self.ready():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError('Apache did not serve the page:\n' + self.log())

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            pass
        support.kill_session(self.process.pid)
        self.process.wait(10)

    def log(self):
        if not os.path.exists(self.error_log):
            return ''
        with open(self.error_log, errors='replace') as stream:
            return stream.read()


def make_certificate(apache):
    """A self-signed certificate for localhost in Apache's directory."""
    result = subprocess.run(
        ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
         '-days', '2', '-subj', '/CN=localhost',
         '-addext', 'subjectAltName=DNS:localhost',
         '-keyout', os.path.join(apache, 'key.pem'),
         '-out', os.path.join(apache, 'certificate.pem')],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return os.path.join(apache, 'certificate.pem')


def write_tls_conf(directory, apache, port, http_port):
    conf = os.path.join(apache, 'httpd.conf')
    with open(conf, 'w') as stream:
        stream.write(HTTPD_TLS_CONF % {
            'apache': apache, 'port': port, 'http_port': http_port,
            'modules': MODULES, 'module_config': module_config(),
            'root': directory, 'venv': sys.prefix,
            'buffered_port': support.free_port()})
    return conf


def config_test(conf):
    apache2 = shutil.which('apache2') or shutil.which('httpd')
    return subprocess.run([apache2, '-t', '-f', conf], capture_output=True,
                          text=True, timeout=60)


def https_request(port, path, certificate, headers=None, method='GET',
                  body=None):
    context = ssl.create_default_context(cafile=certificate)
    connection = http.client.HTTPSConnection('localhost', port,
                                             context=context, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        version = connection.sock.version()
        response = connection.getresponse()
        return (response.status, dict(response.getheaders()),
                response.read().decode('utf-8', 'replace'), version)
    finally:
        connection.close()


def test_tls_vhost_passes_apaches_configuration_test():
    support.need_mod_wsgi()
    need(shutil.which('openssl') is not None, 'openssl makes the '
         'certificate')
    with support.scratch_directory() as directory:
        shutil.copytree(os.path.join(ROOT, 'etc'),
                        os.path.join(directory, 'etc'))
        apache = os.path.join(directory, 'apache')
        os.mkdir(apache)
        conf = write_tls_conf(directory, apache, support.free_port(),
                              support.free_port())
        without_certificate = config_test(conf)
        make_certificate(apache)
        result = config_test(conf)
    assert result.returncode == 0, result.stderr
    assert 'Syntax OK' in result.stderr
    # the certificate is really used: without it the test fails
    assert without_certificate.returncode != 0
    assert 'SSLCertificateFile' in without_certificate.stderr


def test_system_apache_serves_the_site_over_https_only():
    support.need_mod_wsgi()
    need(os.geteuid() == 0, 'Apache switches to www-data only as root')
    need(shutil.which('openssl') is not None, 'openssl makes the '
         'certificate')
    with support.scratch_directory() as directory:
        apache, ini = make_project(directory)
        certificate = make_certificate(apache)
        port, http_port = support.free_port(), support.free_port()
        conf = write_tls_conf(directory, apache, port, http_port)
        server = SystemApache(conf, os.path.join(apache, 'error.log'), port)
        server.ready = lambda: https_request(
            port, support.PAGE, certificate)[0] == 200
        try:
            server.start(ini=ini)
            status, headers, page, protocol = https_request(
                port, support.PAGE, certificate)
            token = base64.b64encode(b'boss:' + PASSWORD.encode()).decode()
            status_admin = https_request(
                port, support.PAGE + '/@@edit', certificate,
                {'Authorization': 'Basic ' + token})[0]
            redirect = support.request(http_port, support.PAGE + '?a=1',
                                       headers={'Authorization':
                                                'Basic ' + token})
            # a request with a body goes through the proxy: still https,
            # whatever headers the client names in Connection
            post = https_request(port, support.PAGE, certificate, {
                'Content-Type': 'application/x-www-form-urlencoded',
                'Connection': 'close, X-Zope-Pipeline-Https, '
                              'X-Zope-Pipeline-Proxied'},
                'POST', 'a=1')
        finally:
            server.stop()
        log = server.log()
    assert status == 200, log
    assert len(support.item_titles(page)) == 10
    assert protocol in ('TLSv1.2', 'TLSv1.3')
    assert headers['Strict-Transport-Security'] == 'max-age=63072000'
    assert status_admin == 200
    # plain HTTP serves nothing: a permanent redirect to the HTTPS URL
    assert redirect[0] == 301
    assert redirect[1]['Location'] == 'https://localhost:%d%s?a=1' % (
        port, support.PAGE)
    assert 'Strict-Transport-Security' not in redirect[1]
    assert support.item_titles(redirect[2]) == []
    assert post[0] == 200, log
    assert 'href="https://localhost:%d/folder/' % port in post[2]
    assert 'http://localhost' not in post[2]



@contextlib.contextmanager
def system_apache():
    """A project (``make_project``) served by Apache with
    etc/apache/zope-pipeline.conf; always stopped."""
    support.need_mod_wsgi()
    need(os.geteuid() == 0, 'Apache switches to www-data only as root')
    with support.scratch_directory() as directory:
        apache, ini = make_project(directory)
        port = support.free_port()
        buffered_port = support.free_port()
        conf = os.path.join(apache, 'httpd.conf')
        with open(conf, 'w') as stream:
            stream.write(HTTPD_CONF % {
                'apache': apache, 'port': port, 'modules': MODULES,
                'module_config': module_config(), 'root': directory,
                'venv': sys.prefix, 'buffered_port': buffered_port})
        server = SystemApache(conf, os.path.join(apache, 'error.log'), port)
        server.buffered_port = buffered_port
        try:
            server.start(ini=ini)
            yield server
        finally:
            server.stop()


def test_system_apache_serves_app_wsgi_with_a_separate_admin_group():
    with system_apache() as server:
        port = server.port
        status, headers, page = support.request(port, support.PAGE)
        site_pids = {support.request(port, support.PAGE)[1][
            'X-Pipeline-Pid'] for _ in range(20)}
        status_anonymous, challenge, _ = support.request(
            port, support.PAGE + '/@@edit')
        token = base64.b64encode(b'boss:' + PASSWORD.encode()).decode()
        status_sample_admin = support.request(
            port, support.PAGE + '/@@edit', headers={
                'Authorization': 'Basic ' + base64.b64encode(
                    b'admin:admin').decode()})[0]
        status_trace, _, trace_body = support.request(
            port, '/', method='TRACE',
            headers={'Cookie': 'session=stolen-by-trace'})
        status_admin, admin_headers, form = support.request(
            port, support.PAGE + '/@@edit',
            headers={'Authorization': 'Basic ' + token})
        admin_pid = admin_headers['X-Pipeline-Pid']
        admin_again = support.request(
            port, '/folder/about/@@edit',
            headers={'Authorization': 'Basic ' + token})[1]
        # A request with a body reaches the daemons through Apache's
        # proxy (the daemons' virtual host): the same groups, the same
        # credentials.
        status_post, post_headers, _ = support.request(
            port, support.PAGE, method='POST', body='a=1', headers={
                'Content-Type': 'application/x-www-form-urlencoded'})
        status_admin_post, admin_post_headers, _ = support.request(
            port, support.PAGE + '/@@edit', method='POST', body='a=1',
            headers={'Authorization': 'Basic ' + token, 'Content-Type':
                     'application/x-www-form-urlencoded'})
        log = server.log()
    assert len(support.item_titles(page)) == 10
    assert status_anonymous == 401
    assert challenge['WWW-Authenticate'].lower().startswith('basic')
    assert status_admin == 200, form
    assert status_sample_admin == 401
    assert status_trace == 405
    assert 'stolen-by-trace' not in trace_body
    assert 'name="title"' in form
    assert headers['X-Pipeline-Process-Group'] == 'zope-pipeline'
    assert admin_headers['X-Pipeline-Process-Group'] == \
        'zope-pipeline-admin'
    assert status_post == 200
    assert post_headers['X-Pipeline-Process-Group'] == 'zope-pipeline'
    # The credentials reached the application (its answer to this bare
    # form is its own: not a 401, not a server error).
    assert status_admin_post not in (401, 500, 502, 503)
    assert admin_post_headers['X-Pipeline-Process-Group'] == \
        'zope-pipeline-admin'
    # The admin group has one process of its own, never a site process.
    assert admin_again['X-Pipeline-Pid'] == admin_pid
    assert admin_pid not in site_pids, log


def failed_login_from(port, source, headers):
    """POST a wrong password from ``source`` (a loopback address) with
    ``headers``; return the status."""
    connection = http.client.HTTPConnection(
        '127.0.0.1', port, timeout=30, source_address=(source, 0))
    try:
        connection.request('POST', support.PAGE + '/@@edit', body='a=1',
                           headers=dict(headers, **{
                               'Content-Type':
                                   'application/x-www-form-urlencoded',
                               'Authorization': 'Basic ' + base64.b64encode(
                                   b'boss:wrong-password').decode()}))
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_system_apache_connection_header_cannot_strip_the_client_address():
    """A client naming the proxy's X-Zope-Pipeline-Client-Address in
    Connection is still logged with its own address (127.0.0.2, not the
    proxy's 127.0.0.1); the daemons' listener refuses a request without
    the proxy's headers (tests/security/test_body_buffering_proxy.py has
    the same attacks on `serve --mod-wsgi`)."""
    with system_apache() as server:
        status = failed_login_from(server.port, '127.0.0.2', {
            'Connection': 'close, X-Zope-Pipeline-Client-Address'})
        bare = support.request(server.buffered_port, support.PAGE, 'POST',
                               'a=1', headers={'Content-Type':
                                               'application/x-www-form-'
                                               'urlencoded'})[0]
        deadline = time.monotonic() + 10
        while 'Failed login' not in server.log() and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        log = server.log()
    assert status == 401
    assert 'Failed login boss from 127.0.0.2 ' in log, log
    assert 'Failed login boss from 127.0.0.1 ' not in log
    assert bare == 400


#: More slow request bodies than the configuration's 4 x 4 daemon threads.
SLOW_BODY_CLIENTS = 20


def test_system_apache_slow_clients_leave_readers_answered():
    """20 request bodies sent at a byte a second, then 190 connections
    sending a header line every 5 s, against etc/apache/zope-pipeline.conf
    on Debian's MPM and mod_reqtimeout defaults: the readers' worst
    latency stays under 3 s (without the body buffering and the workers
    it sets, each stopped the site)."""
    from tests.integration import test_slow_requests as slow
    with system_apache() as server:
        bodies = support.slow_bodies(server.port, SLOW_BODY_CLIENTS)
        body_readers = slow.readers_under(server, bodies)
        headers = support.slow_headers(server.port,
                                       slow.SLOW_HEADER_CLIENTS)
        header_readers = slow.readers_under(server, headers)
        log = server.log()
    where = 'system Apache, etc/apache/zope-pipeline.conf, SQLite'
    body_statuses, body_worst = slow.slow_client_row(
        '%d request bodies sent at 1 byte/s' % SLOW_BODY_CLIENTS,
        body_readers, bodies, where)
    header_statuses, header_worst = slow.slow_client_row(
        '%d connections sending a header line every 5 s'
        % slow.SLOW_HEADER_CLIENTS, header_readers, headers, where)
    assert set(body_statuses) == {200}, body_statuses
    assert set(header_statuses) == {200}, header_statuses
    assert body_worst < slow.MAX_LATENCY, body_worst
    assert header_worst < slow.MAX_LATENCY, header_worst
    assert 'Traceback' not in log


def test_system_apache_rolling_restart_replaces_every_daemon_process():
    """`zope-pipeline restart` with the system Apache's pid file and the
    daemons' run directory (var/run beside etc/app.wsgi): the 4 site
    processes and the administrative one are replaced, one at a time;
    then a touch of etc/app.wsgi replaces them again."""
    with system_apache() as server:
        root = os.path.dirname(os.path.dirname(server.conf))
        before = support.daemon_pids(server.port, wanted=4)
        result = support.zope_pipeline(
            'restart', os.path.join(root, 'etc', 'site.ini'),
            '--pid-file', os.path.join(os.path.dirname(server.conf),
                                       'httpd.pid'),
            '--run-dir', os.path.join(root, 'var', 'run'), timeout=300)
        after = support.daemon_pids(server.port, wanted=4)
        os.utime(os.path.join(root, 'etc', 'app.wsgi'))
        touched = support.replaced_pids(server.port, after, wanted=4)
        log = server.log()
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(touched) == 4 and not after & touched, (after, touched)
    assert result.stdout.count('replaced by') == 5, result.stdout
    assert len(before) == 4 and len(after) == 4, (before, after)
    assert not before & after, (before, after)
    assert 'Traceback' not in log
