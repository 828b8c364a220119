"""Beyond one machine (issue 44): two app hosts, a MariaDB primary with a
GTID replica, HAProxy in front; faults under write and read load.

The topology, made by the test as root and removed whatever happens:
every machine is a network namespace of its own, with its own address on
one bridge (198.18.0.0/24, RFC 2544's benchmarking range, no route
beyond it; the bridge in a namespace of its own too, and the root
namespace, where the test and its clients run, on it as 198.18.0.1):

- each app host (198.18.0.11, .12) runs the one command a deployer runs
  on a host: `zope-pipeline serve INI --mod-wsgi --host ADDRESS`
  (2 processes x 2 threads);
- a private MariaDB primary (.21; binary log, semi-synchronous
  replication waiting after sync) and a read-only replica (.22)
  replicating from it (CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos);
- each host's ZConfig names both in RelStorage's ``replica-conf`` (the
  primary first: every connection goes there; the replica when the
  primary refuses connections, the primary again after
  ``replica-timeout``) with ``revert_when_stale false``, and
  ``replica_catch_up`` in its ``<mysql-with-timeouts>`` section;
- HAProxy (.30), round robin, health-checking each host's readiness
  answer (``/_ready``: 200 keeps it in rotation).

Four clients go through the balancer, each in a loop: increment the
counter, read it, add a comment.  Faults, one after the other, each under
its own load: an app host killed (SIGKILL of its whole session) and
started again; an app host restarted with `zope-pipeline restart
--leave-rotation` (its readiness answer turns 503, HAProxy takes it out,
then its processes restart); the replica stopped and started;
replication paused (PAUSE_SECONDS: 10 s by default,
$ZP_MULTI_HOST_PAUSE for the issue's 30); the primary restarted, first
with the hosts' replica files listing it alone (rewritten during the
run: RelStorage reads the file again when it changes), then failing
over to the replica.  For each: the longest wait of one operation, the
statuses, the acknowledged writes, and whether a client ever read a
counter lower than one it had seen: asserted never, fail-over included.
On the primary, every load polls at each transaction's start, so it
sees every commit acknowledged before it.  On the replica, a process
that fails over first waits for the replica to apply every transaction
it has received (``replica_catch_up``: MASTER_GTID_WAIT of its
Gtid_IO_Pos), and semi-synchronous replication made the replica receive
each commit before any client could see it.  At the end the database
itself (the primary, then the replica once caught up) must hold every
acknowledged comment once and nothing twice, and the counter must count
every acknowledged increment (each answer given once).
"""

import contextlib
import os
import re
import shutil
import subprocess
import time

import pytest

from tests.conftest import need
from tests.integration import multi_host
from tests.integration import reliability_report
from tests.integration import support
from tests.integration.private_mariadb import need_private_mariadb

pytestmark = pytest.mark.integration

HOSTS = 2
#: Seconds replication stays paused (the issue says 30; 10 keeps the test
#: within its CI budget).
PAUSE_SECONDS = float(os.environ.get('ZP_MULTI_HOST_PAUSE', '10'))
#: Seconds of load before and after each fault.
QUIET = 2.0
#: Seconds a host restarting stays out of rotation before and after:
#: HAProxy's fall (2) x inter (0.5 s), and a margin for the requests in
#: flight.
LEAVE_ROTATION = 2.0
#: Seconds the replica stays stopped.
REPLICA_DOWN = 5.0
#: RelStorage's replica-timeout of the hosts: after a fail-over to the
#: replica, back to the primary after this many seconds.
REPLICA_TIMEOUT = 5


def need_topology():
    need(os.geteuid() == 0, 'network namespaces need root')
    need(shutil.which('ip') is not None, 'ip (iproute2) is not installed')
    need(multi_host.HAPROXY is not None, 'haproxy is not installed')
    need_private_mariadb()
    support.need_mod_wsgi()


def host_site(directory, namespace, replication, database):
    """The ini and ZConfig of one host: its database connections to the
    primary, the replica as RelStorage's fail-over."""
    from zope.pipeline.commands.init_db import write_option_file
    os.makedirs(directory, 0o755)
    os.chmod(directory, 0o755)
    option_file = os.path.join(directory, 'mysql-client.cnf')
    write_option_file(option_file, database['password'])
    replica_file = os.path.join(directory, 'replicas.conf')
    write_replicas(replica_file, replication, fail_over=True)
    zconfig = multi_host.ZCONFIG % dict(
        database, host=replication.primary.address,
        port=replication.primary.port, option_file=option_file,
        replicas=multi_host.REPLICA_KEYS % dict(
            replica_file=replica_file, replica_timeout=REPLICA_TIMEOUT))
    # The clients name the balancer (its address) in their Host; the
    # host's own address is for direct requests.
    return support.Site(directory, zconfig, {
        'retry.attempts': 4,
        'virtual_host.allowed_hosts': '%s %s' % (
            multi_host.NETWORK % multi_host.BALANCER, namespace.address)})


def write_replicas(path, replication, fail_over):
    """A host's replica file: the primary, then (``fail_over``) the
    replica.  Replaced at once (RelStorage reads it again, within a
    second, when it changes: a half-written file would list nothing)."""
    servers = [replication.primary]
    if fail_over:
        servers.append(replication.replica)
    lines = ['%s:%d' % (server.address, server.port) for server in servers]
    with open(path + '.new', 'w') as stream:
        stream.write('# the primary first\n' + '\n'.join(lines) + '\n')
    os.chmod(path + '.new', 0o644)
    os.replace(path + '.new', path)


def checker_config(directory, server, database):
    """A ZConfig file reading ``server`` directly from the root
    namespace."""
    from zope.pipeline.commands.init_db import write_option_file
    option_file = os.path.join(directory, 'checker-%d.cnf' % server.port)
    write_option_file(option_file, database['password'])
    path = os.path.join(directory, 'checker-%d.conf' % server.port)
    with open(path, 'w') as stream:
        stream.write(multi_host.ZCONFIG % dict(
            database, host=server.address, port=server.port,
            option_file=option_file, replicas=''))
    return path


class Topology:
    """Everything the test runs; ``close()`` removes all of it."""

    def __init__(self, stack, directory):
        token = os.urandom(2).hex()
        self.directory = directory
        lan = stack.enter_context(multi_host.Lan(token))
        self.namespaces = [stack.enter_context(
            multi_host.Machine(lan, 'host%d' % index,
                               multi_host.HOST_BASE + index))
            for index in range(1, HOSTS + 1)]
        self.replication = stack.enter_context(multi_host.Replication(lan))
        self.database = {'db': 'zp44', 'password': os.urandom(12).hex()}
        self.replication.create_database(
            'zp44', self.database['password'],
            [namespace.address for namespace in self.namespaces])
        port = support.free_port()
        self.hosts = []
        for number, namespace in enumerate(self.namespaces, 1):
            site = host_site(os.path.join(directory, 'host%d' % number),
                             namespace, self.replication, self.database)
            host = multi_host.AppHost(site, namespace, port)
            self.hosts.append(host)
            stack.callback(host.stop)
            # One after the other: the first creates the site's root.
            host.start(120)
        self.replication.wait_caught_up()
        self.balancer = stack.enter_context(
            multi_host.Balancer(directory, self.hosts, lan))
        #: Every namespace the test made.
        self.machines = [lan] + self.namespaces + \
            self.replication.machines + [self.balancer.machine]


def fault_kill_host(topology):
    host = topology.hosts[0]
    host.kill()
    taken_out = topology.balancer.wait_for(
        lambda states: states['app1'].startswith('DOWN'), 30)
    time.sleep(QUIET)
    started = time.monotonic()
    host.start(120)
    topology.balancer.wait_for(lambda states: states['app1'] == 'UP', 30)
    return {'seconds until out of rotation': '%.1f' % taken_out,
            'seconds to serve again': '%.1f' % (time.monotonic() - started)}


def fault_rolling_restart(topology):
    """`zope-pipeline restart --leave-rotation`: the host's readiness
    answer turns 503, HAProxy takes it out of rotation, and only then
    are its processes restarted; it sends the host no request until the
    restart is over."""
    host = topology.hosts[1]
    balancer = topology.balancer
    started = time.monotonic()
    restart = subprocess.Popen(
        [support.ZOPE_PIPELINE, 'restart', host.site.ini, '--server-root',
         host.server_root, '--leave-rotation', str(LEAVE_ROTATION)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=support.command_environment())
    try:
        taken_out = balancer.wait_for(
            lambda states: states['app2'].startswith('DOWN'), 30)
        sent_before = balancer.sessions('app2')
        lines = []
        for line in restart.stdout:
            lines.append(line)
            if line.startswith('Daemon process'):
                # Each process restarted out of rotation, and the host
                # got no request since it left.
                assert balancer.stats()['app2'][0].startswith('DOWN'), \
                    lines
                sent_during = balancer.sessions('app2') - sent_before
        assert restart.wait(180) == 0, ''.join(lines)
    finally:
        if restart.poll() is None:
            restart.kill()
            restart.wait(10)
    restarted = time.monotonic() - started
    balancer.wait_for(lambda states: states['app2'] == 'UP', 30)
    return {'seconds until out of rotation': '%.1f' % taken_out,
            'seconds restarting (out of rotation and back)':
                '%.1f' % restarted,
            'requests sent to the host while it restarted': sent_during}


def fault_replica_restart(topology):
    replication = topology.replication
    replication.replica.stop()
    time.sleep(REPLICA_DOWN)
    replication.replica.start()
    caught_up = replication.wait_caught_up()
    return {'seconds replica down': '%.0f' % REPLICA_DOWN,
            'seconds to catch up': '%.1f' % caught_up}


def fault_replication_paused(topology):
    replication = topology.replication
    replication.replica.execute('STOP SLAVE')
    time.sleep(PAUSE_SECONDS)
    lag = replication.lag_transactions()
    replication.replica.execute('START SLAVE')
    caught_up = replication.wait_caught_up()
    return {'seconds paused': '%.0f' % PAUSE_SECONDS,
            'transactions behind': lag,
            'seconds to catch up': '%.1f' % caught_up}


def set_fail_over(topology, fail_over):
    for host in topology.hosts:
        write_replicas(os.path.join(host.site.directory, 'replicas.conf'),
                       topology.replication, fail_over)
    # RelStorage looks at the file's time at most once a second.
    time.sleep(1.5)


def fault_primary_restart_alone(topology):
    set_fail_over(topology, False)
    try:
        return fault_primary_restart(topology)
    finally:
        set_fail_over(topology, True)


def fault_primary_restart(topology):
    replication = topology.replication
    # The premise of reads that never go back in time at a fail-over
    # (replica_catch_up waits for what the replica received).
    semi_synchronous = replication.semi_synchronous()
    started = time.monotonic()
    replication.primary.stop()
    down = time.monotonic()
    replication.primary.start()
    up = time.monotonic()
    # The hosts go back to the primary after replica-timeout.
    time.sleep(REPLICA_TIMEOUT)
    caught_up = replication.wait_caught_up()
    return {'semi-synchronous when stopped': semi_synchronous,
            'seconds stopping': '%.1f' % (down - started),
            'seconds down': '%.1f' % (up - down),
            'seconds to catch up': '%.1f' % caught_up}


FAULTS = [
    ('app host killed', fault_kill_host),
    ('app host restarted (zope-pipeline restart --leave-rotation)',
     fault_rolling_restart),
    ('replica stopped and started', fault_replica_restart),
    ('replication paused', fault_replication_paused),
    ('primary restarted, replica-conf listing it alone',
     fault_primary_restart_alone),
    ('primary restarted, replica-conf failing over to the replica',
     fault_primary_restart),
]
def stored(config_path):
    """(comment texts, counter value) read from one database server."""
    from zope.pipeline.zodb import storage
    db = storage.open_database(config_path)
    try:
        connection = db.open()
        application = connection.root()['Application']
        page = application['folder']['page']
        texts = [text for author, text, when in page.comments.values()]
        value = application['counter'].value
        connection.close()
        return texts, value
    finally:
        db.close()


def test_multi_host_faults_lose_nothing_and_never_read_back():
    need_topology()
    loads = []
    extras = []
    with contextlib.ExitStack() as stack:
        # A directory Apache's user can read (not pytest's tmp_path).
        directory = stack.enter_context(support.scratch_directory())
        topology = Topology(stack, directory)
        marks = []
        for _label, fault in FAULTS:
            marks.append([len(host.log()) for host in topology.hosts])
            with multi_host.Load(topology.balancer.address,
                                 topology.balancer.port,
                                 'fault-%d' % len(loads)) as load:
                time.sleep(QUIET)
                extras.append(fault(topology))
                time.sleep(QUIET)
            loads.append(load)
        topology.replication.wait_caught_up()
        primary = stored(checker_config(
            directory, topology.replication.primary, topology.database))
        replica = stored(checker_config(
            directory, topology.replication.replica, topology.database))
        logs = [host.log() for host in topology.hosts]
    namespaces = [machine.exists() for machine in topology.machines]

    texts, counter = primary
    acknowledged = [text for load in loads for text in load.comments()]
    values = sorted(value for load in loads for value in load.values())
    doubtful = sum(load.doubtful_increments() for load in loads)
    ends = marks[1:] + [[len(log) for log in logs]]
    tracebacks = {}
    for (label, _), start, end in zip(FAULTS, marks, ends):
        window = ''.join(log[begin:stop] for log, begin, stop
                         in zip(logs, start, end))
        tracebacks[label] = [window[index - 300:index + 2000] for index in [
            match.start() for match in re.finditer('Traceback', window)]]
    for (label, _), load, extra in zip(FAULTS, loads, extras):
        prefix = load.label + ' '
        mine = [text for text in texts if text.startswith(prefix)]
        figures = dict(load.figures())
        figures['stored comments'] = len(mine)
        figures['lost'] = len(set(load.comments()) - set(mine))
        figures['duplicated'] = len(mine) - len(set(mine))
        figures['comments in doubt, stored'] = len(
            set(load.doubtful_comments()) & set(mine))
        figures['tracebacks logged'] = len(tracebacks[label])
        figures.update(extra)
        verdict = ('nothing lost' if not figures['lost']
                   and not figures['duplicated'] else 'WRITES LOST')
        verdict += (', no read back in time'
                    if not figures['reads back in time']
                    else ', READS BACK IN TIME')
        reliability_report.record(
            'Multi-host: %s (2 hosts in namespaces x 2 processes x 2 '
            'threads, HAProxy, MariaDB primary + GTID replica, 4 clients)'
            % label, figures, verdict)
        print(label, figures)

    # Every namespace was removed (the processes in them were stopped).
    assert namespaces == [False] * (HOSTS + 4)
    # The replica holds what the primary holds.
    assert replica == primary
    # No comment acknowledged was lost, none stored twice (no commit that
    # happened was retried by the server), none invented.
    assert set(acknowledged) <= set(texts)
    assert len(texts) == len(set(texts))
    assert all(re.match(r'fault-\d+ \d+-\d+$', text) for text in texts)
    # Each increment's answer was given once; the counter counts every
    # acknowledged one and at most the ones whose answer was lost.
    assert len(values) == len(set(values))
    assert len(values) <= counter <= len(values) + doubtful
    assert values and values[-1] <= counter
    # No client ever read a counter lower than one it had seen, not even
    # when RelStorage failed over to the replica: the primary was
    # semi-synchronous (every state a client saw had reached the
    # replica) and replica_catch_up had each process wait, on the
    # replica, for it to apply what it had received.
    assert [extra['semi-synchronous when stopped'] for extra in extras
            if 'semi-synchronous when stopped' in extra] == [True, True]
    assert {label: load.back_in_time()
            for (label, _), load in zip(FAULTS, loads)} == {
                label: [] for label, _ in FAULTS}
    assert sum(load.figures()['counter reads'] for load in loads) > 0
    # The host restarted was out of rotation before its first process
    # restarted, and got no request until it was back.
    assert extras[1]['requests sent to the host while it restarted'] == 0
    # Both hosts served throughout the load (the balancer used both).
    # Nothing failed unexpectedly (a 500, its traceback logged): a write
    # that reached the read-only replica after the fail-over is a 503
    # (errors.is_read_only).
    assert {label: found[:2] for label, found in tracebacks.items()
            if found} == {}
