"""The pieces of the multi-host test (test_multi_host.py): app hosts, a
MariaDB primary and its GTID replica, and HAProxy in front, each in its
own network namespace on one bridge, and a bounded write+read load
through the balancer.

Every piece is a context manager that removes what it made (namespace,
veth pair, process, data directory) on the way out, whatever happened.
"""

import collections
import contextlib
import http.client
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time

from tests.integration import support
from tests.integration.private_mariadb import PrivateMariaDB

#: The addresses of the test: RFC 2544's benchmarking range, on one
#: bridge only (no route leads anywhere else).  Every machine of the
#: topology is a network namespace on the bridge, with its own address:
#: the app hosts 198.18.0.11, .12..., the primary .21, the replica .22,
#: the balancer .30; the root namespace, where the test and its clients
#: run, is on the bridge too, as 198.18.0.1.
NETWORK = '198.18.0.%d'
ROOT_ADDRESS = NETWORK % 1
HOST_BASE, PRIMARY, REPLICA, BALANCER = 10, 21, 22, 30
HAPROXY = shutil.which('haproxy') or shutil.which('haproxy',
                                                  path='/usr/sbin')
COUNTER = '/counter'
#: The readiness answer of zope.pipeline (the readiness stage).
READY = '/_ready'
INCREMENT = '/counter/@@increment'
PAGE = support.PAGE
ADD_COMMENT = PAGE + '/@@add-comment'
FORM_HEADERS = {'Content-Type': 'application/x-www-form-urlencoded'}


def run(*command, check=True):
    return subprocess.run(command, capture_output=True, text=True,
                          timeout=30, check=check)


# -- machines: a network namespace each, on one bridge


class Namespace:
    """A network namespace, removed (with its links) on the way out."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        try:
            run('ip', 'netns', 'add', self.name)
            self.set_up()
        except BaseException:
            self.destroy()
            raise
        return self

    def set_up(self):
        self.inside('ip', 'link', 'set', 'lo', 'up')

    def inside(self, *command):
        return run('ip', 'netns', 'exec', self.name, *command)

    def __exit__(self, *exc_info):
        self.destroy()

    def destroy(self):
        # Deleting a namespace deletes its links, and so the other end
        # of each veth pair.
        run('ip', 'netns', 'del', self.name, check=False)

    def exists(self):
        return self.name in run('ip', 'netns', 'list').stdout.split()


class Lan(Namespace):
    """The network of the test: a bridge in a namespace of its own (so no
    firewall rule of the root namespace applies to it), and the root
    namespace's link to it (``ROOT_ADDRESS``)."""

    BRIDGE = 'br0'

    def __init__(self, token):
        super().__init__('zp44-%s-lan' % token)
        self.token = token
        self.outer = 'zp%s0a' % token

    def set_up(self):
        super().set_up()
        self.inside('ip', 'link', 'add', self.BRIDGE, 'type', 'bridge')
        self.inside('ip', 'link', 'set', self.BRIDGE, 'up')
        self.plug(self.outer, 'zp%s0b' % self.token)
        run('ip', 'addr', 'add', ROOT_ADDRESS + '/24', 'dev', self.outer)
        run('ip', 'link', 'set', self.outer, 'up')

    def plug(self, outer, inner):
        """A veth pair ``outer``/``inner`` made here, ``inner`` on the
        bridge; ``outer`` is left to move."""
        run('ip', 'link', 'add', outer, 'type', 'veth', 'peer', 'name',
            inner)
        run('ip', 'link', 'set', inner, 'netns', self.name)
        self.inside('ip', 'link', 'set', inner, 'master', self.BRIDGE)
        self.inside('ip', 'link', 'set', inner, 'up')

    def destroy(self):
        super().destroy()
        # The root's end, when the namespace never got the other.
        run('ip', 'link', 'del', self.outer, check=False)


class Machine(Namespace):
    """A machine on the lan: a namespace with one link to the bridge,
    ``address`` on it."""

    def __init__(self, lan, role, number):
        super().__init__('zp44-%s-%s' % (lan.token, role))
        self.lan = lan
        self.index = number
        self.address = NETWORK % number
        self.link = 'zp%s%d' % (lan.token, number)

    def set_up(self):
        super().set_up()
        self.lan.plug(self.link, self.link + 'b')
        run('ip', 'link', 'set', self.link, 'netns', self.name)
        self.inside('ip', 'addr', 'add', self.address + '/24', 'dev',
                    self.link)
        self.inside('ip', 'link', 'set', self.link, 'up')

    def destroy(self):
        super().destroy()
        run('ip', 'link', 'del', self.link, check=False)

    def command(self, command):
        """``command`` run in this machine."""
        return ['ip', 'netns', 'exec', self.name] + list(command)


class AppHost(support.ModWsgiServer):
    """`zope-pipeline serve INI --mod-wsgi --host ADDRESS` in a
    namespace (the command as a deployer runs it on its host)."""

    def __init__(self, site, namespace, port, processes=2, threads=2):
        super().__init__(site, processes=processes, threads=threads,
                         port=port)
        self.namespace = namespace

    def command(self):
        return self.namespace.command(
            super().command() + ['--host', self.namespace.address])

    def wait_until_serving(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError('The server exited (%s):\n%s'
                                     % (self.process.returncode,
                                        self.log()[-3000:]))
            try:
                status, _, _ = request(self.namespace.address, self.port,
                                       'GET', PAGE, timeout=10)
            except OSError:
                time.sleep(0.25)
                continue
            if status == 200:
                return
            if status == 400:
                raise AssertionError('The server refused the request:\n%s'
                                     % self.log()[-3000:])
            time.sleep(0.25)
        raise AssertionError('The server did not serve within %d s:\n%s'
                             % (timeout, self.log()[-3000:]))

    def kill(self):
        """SIGKILL the whole host: `serve`, Apache, its daemons."""
        support.kill_session(self.process.pid)
        self.process.wait(10)


def request(host, port, method, path, body=None, headers=None, timeout=30):
    """(status, headers, body text) of one request on a new connection."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        # The headers as http.client's message: names case-insensitive.
        return (response.status, response.msg,
                response.read().decode('utf-8', 'replace'))
    finally:
        connection.close()


# -- MariaDB: a primary and its replica


ZCONFIG = '''\
%%import relstorage
%%import zope.pipeline
<zodb main>
  pool-size 8
  <relstorage>
    keep-history false
    cache-local-mb 16
    commit-lock-timeout 1
%(replicas)s
    <mysql-with-timeouts>
      driver MySQLdb
      host %(host)s
      port %(port)d
      db %(db)s
      user %(db)s
      read_default_file %(option_file)s
      connect_timeout 2
      read_timeout 3
      write_timeout 3
      replica_catch_up 2
    </mysql-with-timeouts>
  </relstorage>
</zodb>
'''

#: The replica keys of an app host (etc/zodb-mysql.conf): every
#: connection on the first line of the file (the primary), the next line
#: (the replica) when the primary refuses connections, the first again
#: after replica-timeout; a process never takes a state older than one it
#: has polled (revert_when_stale false).
REPLICA_KEYS = '''\
    replica-conf %(replica_file)s
    replica-timeout %(replica_timeout)s
    revert_when_stale false
'''


#: Milliseconds a commit waits for the replica's acknowledgement before
#: the primary goes on without it (asynchronous until it caught up).
SEMI_SYNC_TIMEOUT = 1000


class Replication:
    """A private primary (binary log, server id 1) and a read-only replica
    (server id 2) replicating from it with GTIDs, each in its machine on
    the lan."""

    def __init__(self, lan):
        self.machines = [Machine(lan, 'primary', PRIMARY),
                         Machine(lan, 'replica', REPLICA)]
        # Semi-synchronous, waiting after the binary log's sync: a commit
        # is visible (and acknowledged) only once the replica has
        # received it; without the replica's answer within
        # SEMI_SYNC_TIMEOUT, asynchronous until it has caught up again.
        self.primary = PrivateMariaDB(machine=self.machines[0], options=[
            '--server-id=1', '--log-bin=primary-bin',
            '--binlog-format=ROW', '--rpl-semi-sync-master-enabled=ON',
            '--rpl-semi-sync-master-wait-point=AFTER_SYNC',
            '--rpl-semi-sync-master-timeout=%d' % SEMI_SYNC_TIMEOUT])
        self.replica = PrivateMariaDB(machine=self.machines[1], options=[
            '--server-id=2', '--read-only=ON',
            '--relay-log=replica-relay', '--rpl-semi-sync-slave-enabled=ON'])
        self.repl_password = secrets.token_hex(12)

    def __enter__(self):
        stack = contextlib.ExitStack()
        with stack:
            for machine in self.machines:
                stack.enter_context(machine)
            stack.enter_context(self.primary)
            stack.enter_context(self.replica)
            self.start_replication()
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc_info):
        self._stack.close()

    def start_replication(self):
        primary, replica = self.primary, self.replica
        # What mariadb-install-db wrote is on both: start the binary log
        # afresh, so the replica begins at an empty GTID position.
        primary.execute('RESET MASTER')
        primary.execute("CREATE USER 'repl'@'%s' IDENTIFIED BY %%s"
                        % replica.address, self.repl_password)
        primary.execute("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%s'"
                        % replica.address)
        replica.execute(
            "CHANGE MASTER TO MASTER_HOST='%s', MASTER_PORT=%d, "
            "MASTER_USER='repl', MASTER_PASSWORD='%s', "
            "MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos"
            % (primary.address, primary.port, self.repl_password))
        replica.execute('START SLAVE')

    def create_database(self, name, password, hosts):
        """The database and its user (from the root namespace, where the
        test checks what is stored, and the hosts' addresses), on the
        primary: the replica gets them by replication."""
        self.primary.execute('CREATE DATABASE `%s`' % name)
        for host in [ROOT_ADDRESS] + list(hosts):
            self.primary.execute("CREATE USER '%s'@'%s' IDENTIFIED BY %%s"
                                 % (name, host), password)
            self.primary.execute("GRANT ALL ON `%s`.* TO '%s'@'%s'"
                                 % (name, name, host))
            # SHOW SLAVE STATUS, for replica_catch_up.
            self.primary.execute("GRANT SLAVE MONITOR ON *.* TO '%s'@'%s'"
                                 % (name, host))

    def positions(self):
        """(the primary's GTID binlog position, the replica's)."""
        primary, = self.primary.execute('SELECT @@gtid_binlog_pos')[0]
        replica, = self.replica.execute('SELECT @@gtid_slave_pos')[0]
        return primary, replica

    def wait_caught_up(self, timeout=60):
        """Seconds until the replica has applied what the primary wrote."""
        started = time.monotonic()
        while True:
            primary, replica = self.positions()
            if primary == replica:
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError('replica at %s, primary at %s: %s'
                                     % (replica, primary,
                                        self.replica_status()))
            time.sleep(0.1)

    def semi_synchronous(self):
        """Whether the primary waits for the replica at each commit now."""
        (_, value), = self.primary.execute(
            "SHOW STATUS LIKE 'Rpl_semi_sync_master_status'")
        return value == 'ON'

    def replica_status(self):
        connection = self.replica.admin()
        try:
            cursor = connection.cursor()
            cursor.execute('SHOW SLAVE STATUS')
            names = [column[0] for column in cursor.description]
            row = cursor.fetchone()
            return dict(zip(names, row)) if row else {}
        finally:
            connection.close()

    def lag_transactions(self):
        """How many transactions the replica is behind (one domain, one
        server: the sequence numbers of the GTIDs)."""
        primary, replica = self.positions()

        def sequence(position):
            return int(position.rsplit('-', 1)[1]) if position else 0
        return sequence(primary) - sequence(replica)


# -- the balancer


HAPROXY_CONFIG = '''\
global
    stats socket %(socket)s mode 600 level admin
    maxconn 500

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A connection a server refuses is tried again on another one (it
    # never reached the application); a request it took is never resent.
    retries 2
    option redispatch

frontend site
    bind %(address)s:%(port)d
    default_backend apps

backend apps
    balance roundrobin
    # A host is in rotation while its readiness answer is 200: a daemon
    # loading the site answers nothing, one whose database is closed or
    # whose server is out of rotation (zope-pipeline restart
    # --leave-rotation) answers 503.
    option httpchk
    http-check send meth GET uri %(ready)s ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
    default-server inter 500ms fastinter 250ms fall 2 rise 2
%(servers)s
'''


class Balancer:
    """HAProxy in its machine on the lan, in front of the hosts; the test
    reads its state through its admin socket."""

    def __init__(self, directory, hosts, lan):
        self.directory = directory
        self.machine = Machine(lan, 'balancer', BALANCER)
        self.address = self.machine.address
        self.port = support.free_port()
        self.socket = os.path.join(directory, 'haproxy.sock')
        self.config = os.path.join(directory, 'haproxy.cfg')
        self.log_path = os.path.join(directory, 'haproxy.log')
        self.hosts = hosts
        self.process = None

    def __enter__(self):
        servers = ''.join(
            '    server app%d %s:%d check\n' % (
                number, host.namespace.address, host.port)
            for number, host in enumerate(self.hosts, 1))
        with open(self.config, 'w') as stream:
            stream.write(HAPROXY_CONFIG % {
                'socket': self.socket, 'address': self.address,
                'port': self.port, 'ready': READY, 'servers': servers})
        self.machine.__enter__()
        try:
            with open(self.log_path, 'ab') as log:
                self.process = subprocess.Popen(
                    self.machine.command([HAPROXY, '-db', '-f',
                                          self.config]),
                    stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True)
            self.wait_for(lambda states: all(
                state == 'UP' for state in states.values()), 30)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            support.kill_session(self.process.pid)
            self.process.wait(10)
        self.machine.destroy()

    def command(self, line):
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(5)
            connection.connect(self.socket)
            connection.sendall(line.encode('ascii') + b'\n')
            chunks = []
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    return b''.join(chunks).decode('ascii', 'replace')
                chunks.append(chunk)

    def stats(self):
        """{server name: (status, current sessions)} of the backend."""
        return {name: (row['status'], int(row['scur'] or 0))
                for name, row in self.rows().items()}

    def sessions(self, name):
        """How many requests the balancer has sent server ``name``."""
        return int(self.rows()[name]['stot'] or 0)

    def rows(self):
        """{server name: its row of `show stat`} of the backend."""
        lines = self.command('show stat').splitlines()
        names = lines[0].lstrip('# ').split(',')
        found = {}
        for line in lines[1:]:
            row = dict(zip(names, line.split(',')))
            name = row.get('svname', '')
            if row.get('pxname') == 'apps' and name.startswith('app'):
                found[name] = row
        return found

    def wait_for(self, condition, timeout):
        """Wait until ``condition({server: status})``; its seconds."""
        started = time.monotonic()
        while True:
            if self.process.poll() is not None:
                raise AssertionError('haproxy exited:\n' + self.log())
            try:
                states = {name: status for name, (status, _)
                          in self.stats().items()}
            except OSError:
                states = {}
            if states and condition(states):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError('haproxy: %s after %d s' % (states,
                                                                 timeout))
            time.sleep(0.1)

    def log(self):
        with open(self.log_path, errors='replace') as stream:
            return stream.read()


# -- the load


class Client:
    """One client: increment, read the counter, add a comment; again.

    The counter a client reads must never be lower than the highest value
    it has seen (answered to its increments, or read): its reads do not
    go back in time.  A write that is not acknowledged is never sent
    again: it is in doubt (a 502 of a host that died, or a 503 of a
    commit cut off by a lost database connection, may have been stored;
    zope.pipeline's 503 says only that the outcome is not known), and
    the client goes on with the next one, after the Retry-After of a
    503."""

    def __init__(self, load, number):
        self.load = load
        self.number = number
        self.seen = 0
        self.records = []             # (status, seconds) of each request
        self.waits = []               # seconds of each operation
        self.values = []              # answers of the increments
        self.comments = []            # texts acknowledged (303)
        self.in_doubt = {'increments': 0, 'comments': 0}
        self.back_in_time = []        # (read, highest seen before)
        self.doubts = []              # (path, status, text)
        self.doubtful_comments = []   # texts of comments in doubt
        self.reads = 0                # counter reads answered 200

    def send(self, method, path, body=None, headers=None):
        started = time.monotonic()
        try:
            status, headers, text = request(
                self.load.address, self.load.port, method, path, body,
                headers)
        except OSError as error:
            status, headers, text = type(error).__name__, {}, ''
        self.records.append((status, time.monotonic() - started))
        return status, headers, text

    def write(self, path, body, headers, ok):
        started = time.monotonic()
        status, answer, text = self.send('POST', path, body, headers)
        self.waits.append(time.monotonic() - started)
        if status == ok:
            return text
        self.doubts.append((path, status, text[:200]))
        if status == 503 and 'Retry-After' in answer:
            time.sleep(min(float(answer['Retry-After']), 0.5))
        return None

    def read_counter(self):
        started = time.monotonic()
        for _ in range(40):
            status, answer, text = self.send('GET', COUNTER)
            if status == 200:
                break
            time.sleep(0.25)
        else:
            self.waits.append(time.monotonic() - started)
            return
        self.waits.append(time.monotonic() - started)
        self.reads += 1
        value = int(text)
        if value < self.seen:
            self.back_in_time.append((value, self.seen))
        self.seen = max(self.seen, value)

    def run(self):
        number = 0
        while not self.load.stopping.is_set():
            text = self.write(INCREMENT, b'', {}, 200)
            if text is None:
                self.in_doubt['increments'] += 1
            else:
                value = int(text)
                self.values.append(value)
                self.seen = max(self.seen, value)
            self.read_counter()
            comment = '%s %d-%d' % (self.load.label, self.number, number)
            body = 'author=multi-host&text=' + comment.replace(' ', '+')
            if self.write(ADD_COMMENT, body.encode('ascii'), FORM_HEADERS,
                          303) is None:
                self.in_doubt['comments'] += 1
                self.doubtful_comments.append(comment)
            else:
                self.comments.append(comment)
            number += 1
            time.sleep(self.load.pause)


class Load:
    """``clients`` clients through the balancer (``address``:``port``)
    until the block ends."""

    def __init__(self, address, port, label, clients=4, pause=0.05):
        self.address = address
        self.port = port
        self.label = label
        self.pause = pause
        self.stopping = threading.Event()
        self.clients = [Client(self, number) for number in range(clients)]
        self.threads = []

    def __enter__(self):
        for client in self.clients:
            thread = threading.Thread(target=client.run, daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def __exit__(self, *exc_info):
        self.stopping.set()
        for thread in self.threads:
            thread.join(120)

    def figures(self):
        statuses = collections.Counter(
            status for client in self.clients
            for status, _ in client.records)
        return {
            'requests': sum(statuses.values()),
            'statuses': ' '.join('%s x%d' % item for item in sorted(
                statuses.items(), key=lambda item: str(item[0]))),
            'longest wait s': '%.2f' % max(
                wait for client in self.clients for wait in client.waits),
            'acknowledged increments': len(self.values()),
            'acknowledged comments': len(self.comments()),
            'writes in doubt': sum(sum(client.in_doubt.values())
                                   for client in self.clients),
            'counter reads': sum(client.reads for client in self.clients),
            'reads back in time': len(self.back_in_time()),
        }

    def values(self):
        return [value for client in self.clients for value in client.values]

    def comments(self):
        return [text for client in self.clients for text in client.comments]

    def doubtful_comments(self):
        return [text for client in self.clients
                for text in client.doubtful_comments]

    def back_in_time(self):
        return [item for client in self.clients
                for item in client.back_in_time]

    def doubtful_increments(self):
        return sum(client.in_doubt['increments'] for client in self.clients)
