"""What the integration tests share: scratch sites (an ini, its ZConfig and
its var/ in a directory Apache's user can read), scratch MySQL databases,
mod_wsgi servers started with `zope-pipeline serve --mod-wsgi` and always
stopped, and ab.

Everything listens on 127.0.0.1, on ports the kernel picked as free, and
every wait is bounded.
"""

import concurrent.futures
import contextlib
import http.client
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from tests.conftest import ROOT
from tests.conftest import need

ZOPE_PIPELINE = os.path.join(os.path.dirname(sys.executable), 'zope-pipeline')
MOD_WSGI_EXPRESS = os.path.join(os.path.dirname(sys.executable),
                                'mod_wsgi-express')
SITE_ZCML = os.path.join(ROOT, 'etc', 'site.zcml')
#: etc/site.zcml and a view that sleeps (``/@@slow?seconds=N``).
SLOW_SITE_ZCML = os.path.join(os.path.dirname(__file__), 'slow', 'site.zcml')
MYSQL_SOCKET = '/run/mysqld/mysqld.sock'
PAGE = '/folder/page'

SQLITE_ZCONFIG = '''\
%%import relstorage
<zodb main>
  pool-size 8
  <relstorage>
    keep-history false
    cache-local-mb 16
    <sqlite3>
      data-dir %(var)s
    </sqlite3>
  </relstorage>
</zodb>
'''

MYSQL_ZCONFIG = '''\
%%import relstorage
%%import zope.pipeline
<zodb main>
  pool-size 8
  <relstorage>
    keep-history false
    cache-local-mb 16
    cache-local-dir %(var)s/relstorage-cache
    commit-lock-timeout 1
    <mysql-with-timeouts>
      driver MySQLdb
      host 127.0.0.1
      port %(port)d
      db %(db)s
      user %(db)s
      read_default_file %(option_file)s
      connect_timeout 2
      read_timeout 3
      write_timeout 3
    </mysql-with-timeouts>
  </relstorage>
</zodb>
'''

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %(site_zcml)s
open_root.zodb_config = %%(here)s/zodb.conf
open_root.populate = zope.pipeline.sample.content.populate
debug_headers.enabled = true
%(settings)s
[loggers]
keys = root, zope_pipeline

[handlers]
keys = stderr

[formatters]
keys = plain

[logger_root]
level = WARNING
handlers = stderr

[logger_zope_pipeline]
level = INFO
handlers =
qualname = zope.pipeline

[handler_stderr]
class = StreamHandler
args = (sys.stderr,)
formatter = plain

[formatter_plain]
class = zope.pipeline.http.logtext.Formatter
format = %%(levelname)s [%%(name)s] pid %%(process)d: %%(message)s
'''


# -- what the machine has


def have_mod_wsgi():
    return os.path.exists(MOD_WSGI_EXPRESS) and bool(
        shutil.which('apache2') or shutil.which('httpd'))


def need_mod_wsgi():
    need(have_mod_wsgi(), 'Apache and mod_wsgi-express are not installed')


def need_ab():
    need(shutil.which('ab') is not None, 'ab (apache2-utils) is missing')


def mysql_admin():
    """A connection as the MySQL administrator, or None."""
    try:
        import MySQLdb
    except ImportError:
        return None
    try:
        return MySQLdb.connect(user='root', unix_socket=MYSQL_SOCKET)
    except MySQLdb.Error:
        return None


def need_mysql():
    connection = mysql_admin()
    need(connection is not None,
         'no MySQL/MariaDB server at %s for root' % MYSQL_SOCKET)
    connection.close()


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


# -- scratch sites


class Site:
    """An ini and its ZConfig in a directory Apache's user can read."""

    def __init__(self, directory, zconfig_text, settings=None,
                 site_zcml=SITE_ZCML):
        self.directory = directory
        self.var = os.path.join(directory, 'var')
        self.ini = os.path.join(directory, 'site.ini')
        self.zconfig = os.path.join(directory, 'zodb.conf')
        with open(self.zconfig, 'w') as stream:
            stream.write(zconfig_text)
        with open(self.ini, 'w') as stream:
            stream.write(INI % {
                'site_zcml': site_zcml,
                'settings': ''.join('%s = %s\n' % item for item in
                                    (settings or {}).items())})


@contextlib.contextmanager
def scratch_directory():
    directory = tempfile.mkdtemp(prefix='zope-pipeline-it-', dir='/tmp')
    os.chmod(directory, 0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def sqlite_site(settings=None, site_zcml=SITE_ZCML):
    with scratch_directory() as directory:
        var = os.path.join(directory, 'var')
        yield Site(directory, SQLITE_ZCONFIG % {'var': var}, settings,
                   site_zcml)


@contextlib.contextmanager
def mysql_database():
    """A scratch database and user (same name); dropped afterwards."""
    name = 'zp_it_%s' % secrets.token_hex(4)
    password = secrets.token_hex(12)
    try:
        yield {'db': name, 'password': password}
    finally:
        drop_mysql_database(name)


def drop_mysql_database(name):
    """Drop a scratch database and its user, if they exist."""
    admin = mysql_admin()
    if admin is None:
        return
    try:
        cursor = admin.cursor()
        cursor.execute('DROP DATABASE IF EXISTS `%s`' % name)
        for host in ('localhost', '127.0.0.1'):
            cursor.execute("DROP USER IF EXISTS '%s'@'%s'" % (name, host))
    finally:
        admin.close()


def mysql_site(directory, database, settings=None, port=3306,
               site_zcml=SITE_ZCML):
    """A site on the MySQL server at 127.0.0.1:``port`` (timeouts as in
    etc/zodb-mysql.conf); the password in the MySQL option file its
    ``read_default_file`` names (``site.option_file``), as `zope-pipeline
    init-db` writes it."""
    from zope.pipeline.commands.init_db import write_option_file
    var = os.path.join(directory, 'var')
    option_file = os.path.join(directory, 'mysql-client.cnf')
    write_option_file(option_file, database['password'])
    site = Site(directory, MYSQL_ZCONFIG % dict(
        database, var=var, port=port, option_file=option_file), settings,
        site_zcml)
    site.option_file = option_file
    site.password = database['password']
    return site


def zope_pipeline(*args, timeout=60, env=None):
    """Run the zope-pipeline command (``env``: more environment
    variables); return the finished process."""
    return subprocess.run([ZOPE_PIPELINE] + [str(arg) for arg in args],
                          capture_output=True, text=True, timeout=timeout,
                          env=command_environment(env))


def command_environment(env=None):
    """The environment of a zope-pipeline command a test runs: this one,
    ``env`` added, and the checkout on the Python path for the test sites
    that live in tests/ (the command itself imports nothing from the
    current directory)."""
    environment = dict(os.environ, **(env or {}))
    environment['PYTHONPATH'] = os.pathsep.join(
        filter(None, [ROOT, environment.get('PYTHONPATH')]))
    return environment


def init_db(site, database, *args):
    """`zope-pipeline init-db` for a scratch site, the database password
    given as a deployer would, in $ZOPE_PIPELINE_DB_PASSWORD."""
    return zope_pipeline('init-db', site.ini, *args, env={
        'ZOPE_PIPELINE_DB_PASSWORD': database['password']})


# -- HTTP


def request(port, path, method='GET', body=None, timeout=30, headers=None):
    """(status, headers dict, body text) of one request."""
    connection = http.client.HTTPConnection('127.0.0.1', port,
                                            timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return (response.status, dict(response.getheaders()),
                response.read().decode('utf-8', 'replace'))
    finally:
        connection.close()


def daemon_pids(port, path=PAGE, wanted=2, seconds=30, clients=4):
    """The daemon processes answering ``path``: batches of concurrent GETs
    (one process alone would answer requests sent one after the other)
    until ``wanted`` processes answered or ``seconds`` passed (a daemon
    still loading the site answers nothing meanwhile: on a busy machine the
    second one once took longer than 20 batches to start)."""
    pids = set()

    def get(_):
        status, headers, body = request(port, path)
        assert status == 200, body[:500]
        return headers['X-Pipeline-Pid']

    deadline = time.monotonic() + seconds
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        while True:
            pids.update(pool.map(get, range(clients * 2)))
            if len(pids) >= wanted or time.monotonic() > deadline:
                return pids
            time.sleep(0.05)


def replaced_pids(port, before, wanted=2, seconds=90):
    """The daemon processes answering the page once none of ``before``
    does (a rolling restart replaces them one after the other), or after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        pids = daemon_pids(port, wanted=wanted)
        if not pids & set(before) or time.monotonic() > deadline:
            return pids
        time.sleep(0.5)


def item_titles(html):
    return re.findall(r'<li><a href="[^"]*/item-\d+">([^<]*)</a></li>', html)


# -- mod_wsgi servers


class ModWsgiServer:
    """`zope-pipeline serve INI --mod-wsgi` in its own session."""

    def __init__(self, site, processes=2, threads=2, port=None, extra=(),
                 reload=False):
        self.site = site
        self.processes = processes
        self.threads = threads
        self.port = port or free_port()
        self.server_root = os.path.join(site.directory,
                                        'apache-%d' % self.port)
        self.log_path = os.path.join(site.directory,
                                     'server-%d.log' % self.port)
        self.extra = list(extra)
        self.reload = reload
        self.process = None

    @property
    def script(self):
        return os.path.join(self.server_root, 'application.wsgi')

    def command(self):
        command = [ZOPE_PIPELINE, 'serve', self.site.ini, '--mod-wsgi',
                   '--processes', str(self.processes),
                   '--threads', str(self.threads),
                   '--port', str(self.port),
                   '--server-root', self.server_root]
        if self.reload:
            command.append('--reload')
        return command + ['--express-option=' + option
                          for option in self.extra]

    def start(self, timeout=90):
        log = open(self.log_path, 'ab')
        try:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, cwd=ROOT,
                env=command_environment())
        finally:
            log.close()
        self.wait_until_serving(timeout)

    def wait_until_serving(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError('The server exited (%s):\n%s'
                                     % (self.process.returncode, self.log()))
            try:
                status, headers, body = request(self.port, PAGE, timeout=10)
            except OSError:
                time.sleep(0.25)
                continue
            if self.ready(status):
                return
            time.sleep(0.25)
        raise AssertionError('The server did not serve %s within %d s:\n%s'
                             % (PAGE, timeout, self.log()))

    def ready(self, status):
        """Whether an answer with this status means the server is up."""
        return status == 200

    def apachectl(self, action):
        return subprocess.run(
            [os.path.join(self.server_root, 'apachectl'), action],
            capture_output=True, text=True, timeout=30)

    def stop(self, timeout=20):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        finally:
            kill_session(self.process.pid)

    def log(self):
        with open(self.log_path, errors='replace') as stream:
            return stream.read().replace('\0', '')


def kill_session(session_id):
    """SIGKILL what is left in the server's session (daemon processes)."""
    try:
        os.killpg(session_id, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextlib.contextmanager
def running(*servers, timeout=90):
    """Start the servers, yield, and always stop every one of them."""
    try:
        for server in servers:
            server.start(timeout)
        yield servers
    finally:
        for server in servers:
            server.stop()


# -- ab


def ab(url, requests, concurrency, post_file=None, timeout=120):
    """Run ab; return its figures as a dict (and its output as 'text')."""
    command = ['ab', '-q', '-n', str(requests), '-c', str(concurrency),
               '-s', '30']
    if post_file is not None:
        command += ['-p', post_file, '-T',
                    'application/x-www-form-urlencoded']
    result = subprocess.run(command + [url], capture_output=True, text=True,
                            timeout=timeout)
    return parse_ab(result.stdout + result.stderr)


def parse_ab(text):
    figures = {'text': text, 'non_2xx': 0, 'length_differs': 0}
    patterns = {'complete': r'Complete requests:\s+(\d+)',
                'failed': r'Failed requests:\s+(\d+)',
                'non_2xx': r'Non-2xx responses:\s+(\d+)',
                # ab counts a body whose length differs from the first
                # one's as failed: not an error for a counter's value.
                'length_differs': r'Receive: \d+, Length: (\d+)'}
    for key, pattern in patterns.items():
        match = re.search(pattern, text)
        if match:
            figures[key] = int(match.group(1))
    match = re.search(r'Requests per second:\s+([\d.]+)', text)
    if match:
        figures['rps'] = float(match.group(1))
    return figures


# -- MySQL sites made ready before any server starts


@contextlib.contextmanager
def initialized_mysql_site(settings=None, site_zcml=SITE_ZCML):
    """A scratch MySQL site whose database, user, tables and root
    `zope-pipeline init-db` made, so servers started together do not race
    to create the root.  ``site.database`` is the database's name (also
    its user's)."""
    need_mod_wsgi()
    need_mysql()
    with scratch_directory() as directory, \
            mysql_database() as database:
        site = mysql_site(directory, database, settings,
                          site_zcml=site_zcml)
        result = init_db(site, database)
        assert result.returncode == 0, result.stderr
        site.database = database['db']
        yield site


def stored_comments(config_path):
    """(the sample page's comment texts, its comment count), read from the
    database itself rather than through a server."""
    from zope.pipeline.zodb import storage
    db = storage.open_database(config_path)
    try:
        connection = db.open()
        page = connection.root()['Application']['folder']['page']
        figures = ([text for author, text, when in page.comments.values()],
                   page.comment_count())
        connection.close()
        return figures
    finally:
        db.close()


# -- load that times every answer


class TimedLoad:
    """``clients`` threads requesting ``path`` one request after the other
    until stopped (at most ``seconds``), each answer recorded as
    (monotonic time it completed, status or the exception's name, seconds
    it took), so the longest time without any answer, and the longest
    wait for one, can be measured."""

    def __init__(self, port, path=PAGE, clients=4, seconds=120,
                 timeout=30):
        self.port = port
        self.path = path
        self.clients = clients
        self.seconds = seconds
        self.timeout = timeout
        self.answers = []
        self.stop = None
        self.pool = None
        self.futures = []

    def client(self):
        deadline = time.monotonic() + self.seconds
        while not self.stop.is_set() and time.monotonic() < deadline:
            started = time.monotonic()
            try:
                status = request(self.port, self.path,
                                 timeout=self.timeout)[0]
            except OSError as error:
                status = type(error).__name__
            self.answers.append((time.monotonic(), status,
                                 time.monotonic() - started))

    def __enter__(self):
        import threading
        self.stop = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(self.clients)
        self.futures = [self.pool.submit(self.client)
                        for _ in range(self.clients)]
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        try:
            for future in self.futures:
                future.result(timeout=self.seconds + self.timeout + 30)
        finally:
            self.pool.shutdown(wait=True)

    def statuses(self):
        return [status for when, status, seconds in self.answers]

    def worst_latency(self):
        return max(seconds for when, status, seconds in self.answers)

    def longest_gap(self, start, end):
        """The longest time between ``start`` and ``end`` (monotonic)
        without an answer: between two answers, or from ``start`` to the
        first one, or from the last one to ``end``."""
        times = sorted([start, end] + [when for when, status, seconds
                                       in self.answers if start < when < end])
        return max(later - earlier for earlier, later
                   in zip(times, times[1:]))


class SlowClients:
    """``count`` connections that each send ``head`` and then ``trickle``
    every ``interval`` seconds, from one thread, until stopped (at most
    ``seconds``): slow request bodies or slow headers.  A connection the
    server answers or closes is opened again (``reconnects``; the status
    lines of the answers are kept in ``answers``)."""

    def __init__(self, port, count, head, trickle, interval, seconds=120,
                 address='127.0.0.1'):
        self.port = port
        self.count = count
        self.head = head
        self.trickle = trickle
        self.interval = interval
        self.seconds = seconds
        self.address = address
        self.reconnects = 0
        self.answers = []
        self.stop = None
        self.thread = None

    def connect(self):
        connection = socket.create_connection((self.address, self.port),
                                              timeout=10)
        connection.sendall(self.head)
        connection.setblocking(False)
        return connection

    def answered(self, connection):
        """Whether the server answered or closed ``connection``."""
        import select
        readable, _, _ = select.select([connection], [], [], 0)
        if not readable:
            return False
        try:
            data = connection.recv(4096)
        except OSError:
            return True
        if data:
            self.answers.append(data.split(b'\r\n', 1)[0].decode(
                'latin-1'))
        return True

    def run(self):
        deadline = time.monotonic() + self.seconds
        connections = [self.connect() for _ in range(self.count)]
        try:
            while not self.stop.wait(self.interval) and \
                    time.monotonic() < deadline:
                for index, connection in enumerate(connections):
                    if not self.answered(connection):
                        try:
                            connection.send(self.trickle)
                            continue
                        except OSError:
                            pass
                    connection.close()
                    self.reconnects += 1
                    connections[index] = self.connect()
        finally:
            for connection in connections:
                connection.close()

    def __enter__(self):
        import threading
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        self.thread.join(self.interval + 30)


def slow_bodies(port, count, length=100000, path=PAGE, **options):
    """Clients POSTing a body of ``length`` bytes at one byte a second."""
    head = ('POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: '
            'application/x-www-form-urlencoded\r\nContent-Length: %d\r\n'
            '\r\n' % (path, port, length)).encode()
    return SlowClients(port, count, head, b'x', 1, **options)


def slow_headers(port, count, interval=5, path=PAGE, **options):
    """Clients sending one more header line every ``interval`` seconds."""
    head = ('GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
            % (path, port)).encode()
    return SlowClients(port, count, head, b'X-Slow: 1\r\n', interval,
                       **options)
