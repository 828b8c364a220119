"""A private MariaDB server for tests that stop and start their database.

The shared server (``/run/mysqld/mysqld.sock``, port 3306) serves every
other test, so a test that needs an outage starts its own: a fresh data
directory made by ``mariadb-install-db`` in a temporary directory, its own
socket there and its own port on 127.0.0.1, a small InnoDB buffer pool.
``stop()`` ends it (SIGTERM, a bounded wait, then SIGKILL), ``start()``
runs it again on the same data directory and port; leaving the context
always kills it and removes the directory.

    with PrivateMariaDB() as server:
        server.create_database('zp', 'secret')   # database and user 'zp'
        ...
        server.stop()
        server.start()      # returns once it accepts connections

``PrivateMariaDB(options=[...])`` adds server options;
``PrivateMariaDB(datadir_size='64m')`` puts the data directory on a tmpfs
of that size, mounted for the server and unmounted afterwards (root only,
see ``can_mount_tmpfs``): a disk that really fills up.
"""

import contextlib
import errno
import getpass
import os
import shutil
import signal
import subprocess
import tempfile
import time

from tests.conftest import need
from tests.integration import support

#: The installer and the server (Debian puts the server in /usr/sbin).
INSTALL_DB = shutil.which('mariadb-install-db') or shutil.which(
    'mysql_install_db')
SERVER = (shutil.which('mariadbd') or
          shutil.which('mariadbd', path='/usr/sbin') or
          shutil.which('mysqld', path='/usr/sbin'))

#: Server options: small and quick to start and stop, never the shared
#: server's files (``--no-defaults`` ignores /etc/mysql).
OPTIONS = (
    '--skip-name-resolve',
    '--innodb-buffer-pool-size=16M',
    '--innodb-log-file-size=8M',
    '--innodb-flush-log-at-trx-commit=2',
    '--max-connections=200',
    '--skip-log-bin',
    '--performance-schema=off',
)


def can_mount_tmpfs():
    """Whether a private server can have its data directory on a tmpfs
    (``datadir_size``): root, with mount."""
    return os.geteuid() == 0 and shutil.which('mount') is not None


def have_private_mariadb():
    return bool(INSTALL_DB and SERVER)


def need_private_mariadb():
    need(have_private_mariadb(),
         'mariadb-install-db and mariadbd (mariadb-server) are not installed')


class PrivateMariaDB:
    """One private MariaDB server in a temporary directory."""

    def __init__(self, port=None, options=(), datadir_size=None,
                 machine=None):
        self.port = port or support.free_port()
        #: The network namespace it runs in (``command(argv)`` and
        #: ``address``, tests/integration/multi_host.py's ``Machine``),
        #: or None: this one, on loopback.
        self.machine = machine
        self.address = machine.address if machine else '127.0.0.1'
        #: Server options beyond OPTIONS (install and start).
        self.options = tuple(options)
        #: The size of the tmpfs holding the data directory, or None.
        self.datadir_size = datadir_size
        self.mounted = False
        self.directory = None
        self.process = None
        self.user = getpass.getuser()

    # -- paths

    @property
    def datadir(self):
        return os.path.join(self.directory, 'data')

    @property
    def socket(self):
        return os.path.join(self.directory, 'mysqld.sock')

    @property
    def log_path(self):
        return os.path.join(self.directory, 'mariadbd.log')

    def log(self):
        try:
            with open(self.log_path, errors='replace') as stream:
                return stream.read()
        except OSError:
            return ''

    # -- life cycle

    def __enter__(self):
        self.directory = tempfile.mkdtemp(prefix='zope-pipeline-mariadb-',
                                          dir='/tmp')
        try:
            if self.datadir_size:
                self.mount_datadir()
            self.install()
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc_info):
        self.destroy()

    def mount_datadir(self):
        os.mkdir(self.datadir, 0o700)
        subprocess.run(['mount', '-t', 'tmpfs', '-o',
                        'size=%s,mode=0700' % self.datadir_size, 'tmpfs',
                        self.datadir], check=True, capture_output=True,
                       timeout=30)
        self.mounted = True
        shutil.chown(self.datadir, self.user)

    def fill_datadir(self, name='filler'):
        """Write a file in the data directory until its file system is
        full; return its path (removing it frees the space)."""
        path = os.path.join(self.datadir, name)
        block = b'\0' * (1 << 16)
        with open(path, 'ab', buffering=0) as stream:
            try:
                while True:
                    stream.write(block)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
        return path

    def install(self, timeout=60):
        result = subprocess.run(
            [INSTALL_DB, '--no-defaults', '--datadir=' + self.datadir,
             '--auth-root-authentication-method=normal', '--skip-test-db',
             '--user=' + self.user] + self.server_options(),
            capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise AssertionError('mariadb-install-db failed:\n%s%s'
                                 % (result.stdout, result.stderr))

    def command(self):
        command = [
                SERVER, '--no-defaults', '--datadir=' + self.datadir,
                '--socket=' + self.socket, '--port=%d' % self.port,
                '--bind-address=' + self.address,
                '--pid-file=' + os.path.join(self.directory, 'mariadbd.pid'),
                '--log-error=' + self.log_path,
                '--user=' + self.user] + self.server_options()
        return self.machine.command(command) if self.machine else command

    def server_options(self):
        return list(OPTIONS) + list(self.options)

    def start(self, timeout=60):
        """Start the server; return once it accepts connections on its
        port (``time.monotonic()`` of that moment)."""
        assert self.process is None or self.process.poll() is not None
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        return self.wait_until_answering(timeout)

    def wait_until_answering(self, timeout):
        import MySQLdb
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise AssertionError('mariadbd exited (%s):\n%s'
                                     % (self.process.returncode,
                                        self.log()[-3000:]))
            try:
                # In a namespace, root may connect only through the
                # socket (root@localhost).
                where = ({'unix_socket': self.socket} if self.machine else
                         {'host': '127.0.0.1', 'port': self.port})
                connection = MySQLdb.connect(user='root', connect_timeout=2,
                                             **where)
            except MySQLdb.Error:
                if time.monotonic() > deadline:
                    raise AssertionError(
                        'mariadbd did not answer within %d s:\n%s'
                        % (timeout, self.log()[-3000:])) from None
                time.sleep(0.05)
                continue
            connection.close()
            return time.monotonic()

    def stop(self, timeout=30):
        """Stop the server (SIGTERM; SIGKILL after ``timeout`` seconds)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def destroy(self):
        """Kill the server if it runs; remove its directory."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        if self.mounted:
            subprocess.run(['umount', self.datadir], capture_output=True,
                           timeout=30)
            self.mounted = False
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    # -- SQL

    def admin(self):
        """A connection as root through the private socket."""
        import MySQLdb
        return MySQLdb.connect(user='root', unix_socket=self.socket,
                               connect_timeout=10)

    def execute(self, sql, *args, database=None):
        """Run one statement as root; return its rows."""
        connection = self.admin()
        try:
            if database:
                connection.select_db(database)
            cursor = connection.cursor()
            cursor.execute(sql, args or None)
            rows = cursor.fetchall()
            connection.commit()
            return rows
        finally:
            connection.close()

    def create_database(self, name, password):
        """A database and a user of the same name, from 127.0.0.1 and
        localhost, with every privilege on it."""
        self.execute('CREATE DATABASE `%s`' % name)
        for host in ('localhost', '127.0.0.1'):
            self.execute("CREATE USER '%s'@'%s' IDENTIFIED BY %%s"
                         % (name, host), password)
            self.execute("GRANT ALL ON `%s`.* TO '%s'@'%s'"
                         % (name, name, host))
