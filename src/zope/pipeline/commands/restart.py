"""Restart the mod_wsgi daemon processes of a running server one at a
time, so the site keeps answering (a rolling restart: deploy new code
with it).

Touching the WSGI script restarts every daemon process at once under
load (each restarts on its next request), and the site answers nobody
until a new one has loaded it.  This command instead asks one daemon
process to restart gracefully (SIGUSR1: it finishes its requests, and
the others take the new ones from the group's shared socket), waits for
Apache to start its successor and for that process to have loaded the
site (its readiness marker in the server's run directory, see
zope.pipeline.readiness), and only then goes on to the next.  A
successor that cannot serve (a broken ini or ZCML, a database that
refuses it) stops the restart there: the processes not restarted yet
keep serving the code they loaded, and the command says what to look
at.

The server is `zope-pipeline serve --mod-wsgi`'s (its server root, by
default var/mod_wsgi-PORT beside the etc/ of the ini) or a system
Apache's (``--pid-file`` of its parent process, ``--run-dir`` of the
daemon processes, etc/apache/zope-pipeline.conf).  It must run as root
or as the daemon processes' user.
"""

import os
import signal
import time

from zope.pipeline import readiness
from zope.pipeline.modwsgi_express import default_server_root
from zope.pipeline.modwsgi_express import run_directory

NAME = 'restart'
HELP = ('restart the mod_wsgi daemon processes of a running server one at '
        'a time, each after its predecessor serves again')

#: Seconds to wait for each step of one process's restart (its end, its
#: successor, the successor's site loaded) when --timeout is not given.
DEFAULT_TIMEOUT = 120
#: Seconds between two looks at the processes.
POLL_INTERVAL = 0.05
#: How mod_wsgi names its daemon processes (display-name).
DAEMON_PREFIX = '(wsgi:'


class RestartError(Exception):
    """A daemon process did not restart as it should."""


def add_arguments(parser):
    parser.add_argument('ini', help='the paste.deploy ini the server serves')
    parser.add_argument('--port', type=int, help="the server's port, which "
                        'names its default server root (default: the '
                        "ini's [server:main] port, else 8080)")
    parser.add_argument('--server-root', help='the server root of '
                        '`zope-pipeline serve --mod-wsgi` (default: '
                        'var/mod_wsgi-PORT beside the etc/ of the ini)')
    parser.add_argument('--pid-file', help="the Apache parent's pid file "
                        '(default: httpd.pid in the server root; a system '
                        'Apache: e.g. /run/apache2/apache2.pid)')
    parser.add_argument('--run-dir', help="the daemon processes' run "
                        'directory (default: run/ in the server root; a '
                        'system Apache: var/run beside etc/app.wsgi, or '
                        'its ZOPE_PIPELINE_RUN_DIR)')
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT,
                        metavar='SECONDS', help='the longest wait for one '
                        'process to end, for its successor, and for the '
                        'successor to load the site (default: %d)'
                        % DEFAULT_TIMEOUT)


def run(args):
    from zope.pipeline.commands.serve import server_section
    ini = os.path.abspath(args.ini)
    port = args.port or int(server_section(ini).get('port', 8080))
    server_root = os.path.abspath(args.server_root or default_server_root(
        ini, port))
    pid_file = args.pid_file or os.path.join(server_root, 'httpd.pid')
    run_dir = args.run_dir or run_directory(server_root)
    try:
        parent = read_pid(pid_file)
        pids = daemon_processes(parent)
        if not pids:
            raise RestartError('Apache (pid %d, %s) has no mod_wsgi daemon '
                               'processes.' % (parent, pid_file))
        for pid in pids:
            started = time.monotonic()
            successor = restart_process(parent, pid, run_dir, args.timeout)
            print('Daemon process %d replaced by %d, serving after %.1f s.'
                  % (pid, successor, time.monotonic() - started),
                  flush=True)
    except RestartError as error:
        raise SystemExit(str(error)) from None
    return 0


def read_pid(pid_file):
    try:
        with open(pid_file) as stream:
            pid = int(stream.read().strip())
    except (OSError, ValueError) as error:
        raise RestartError('Cannot read the pid of the Apache server from '
                           '%s (%s): is it running?  Name its pid file with '
                           '--pid-file, or its server root with '
                           '--server-root.' % (pid_file, error)) from None
    if readiness.process_start_time(pid) is None:
        raise RestartError('Apache (pid %d in %s) is not running.'
                           % (pid, pid_file))
    return pid


def process_status(pid):
    """(parent pid, state letter) of process ``pid``, or None."""
    try:
        with open('/proc/%d/stat' % pid) as stream:
            fields = stream.read().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields[0]


def display_name(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as stream:
            return stream.read().split(b'\0')[0].decode('utf-8', 'replace')
    except OSError:
        return ''


def daemon_processes(parent):
    """The pids of the mod_wsgi daemon processes of the Apache parent
    process ``parent``: its children mod_wsgi named (display-name; the
    name is cut to the length of Apache's own, so it does not tell the
    groups apart), in the order they started.  Every group's processes
    are restarted one at a time; a group of one process (the
    administrative one) has its requests wait while it restarts."""
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        pid = int(entry)
        status = process_status(pid)
        if status is None or status[0] != parent or status[1] == 'Z':
            continue
        if display_name(pid).startswith(DAEMON_PREFIX):
            pids.append(pid)
    return sorted(pids, key=lambda pid: (
        readiness.process_start_time(pid) or 0, pid))


def restart_process(parent, pid, run_dir, timeout):
    """Restart daemon process ``pid`` gracefully and wait until its
    successor serves; return the successor's pid."""
    before = set(daemon_processes(parent))
    os.kill(pid, signal.SIGUSR1)
    wait_for(lambda: not alive(pid), timeout,
             'daemon process %d did not end within %s s (graceful-timeout '
             'and shutdown-timeout of its group?)' % (pid, timeout))
    readiness.forget(run_dir, pid)
    successor = wait_for(
        lambda: min(set(daemon_processes(parent)) - before, default=None),
        timeout, 'Apache started no daemon process within %s s after %d '
        'ended' % (timeout, pid))
    state = wait_for(
        lambda: readiness.loaded_state(run_dir, successor), timeout,
        'daemon process %d did not load the site within %s s (no '
        'readiness marker in %s: is that the run directory of its server?)'
        % (successor, timeout, os.path.join(
            run_dir, readiness.READY_DIRECTORY)))
    if state != readiness.SERVING:
        raise RestartError(
            'Daemon process %d cannot serve (%s): the restart stops here, '
            'and the processes not restarted yet keep serving.  Its error '
            'log says why; fix it and run restart again.'
            % (successor, state))
    return successor


def alive(pid):
    status = process_status(pid)
    return status is not None and status[1] != 'Z'


def wait_for(value, timeout, message):
    """Poll ``value()`` until it is true (return it) or ``timeout``
    seconds passed (RestartError with ``message``)."""
    deadline = time.monotonic() + timeout
    while True:
        result = value()
        if result:
            return result
        if time.monotonic() > deadline:
            raise RestartError(message[0].upper() + message[1:] + '.')
        time.sleep(POLL_INTERVAL)
