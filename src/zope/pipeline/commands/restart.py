"""Restart the mod_wsgi daemon processes of a running server one at a
time, so the site keeps answering (a rolling restart).

It asks one daemon process to restart gracefully (SIGUSR1: it finishes
its requests in flight, each within its own request limit, and the others
take the new ones from the group's shared socket), waits for Apache to
start its successor and for that process to have loaded the site (its
readiness marker in the server's run directory), and only then goes on
to the next (a touch of the WSGI script does the same from within the
daemon processes).  A successor that cannot serve (a broken
ini or ZCML, a database that refuses it) stops the restart there: the
processes not restarted yet keep serving the code they loaded, and the
command says what to look at.

Behind a balancer that reads the readiness answer (readiness.path,
zope.pipeline.stages.readiness), --leave-rotation SECONDS first takes
the server out of its rotation (its processes answer 503 there), waits
SECONDS for the balancer to notice and the requests it sent to end,
restarts the processes, puts the server back and waits SECONDS again for
the balancer to take it back: restart one host after the other with it,
and no request reaches a host that is restarting.

The server is zope-pipeline serve --mod-wsgi's (its server root, by
default var/mod_wsgi-PORT beside the etc/ of the ini) or a system
Apache's (--pid-file of its parent process, --run-dir of the
daemon processes, etc/apache/zope-pipeline.conf).  It must run as root
or as the daemon processes' user.
"""

import os
import time

from zope.pipeline.commands.serve import server_section
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.serving.modwsgi_express import default_server_root
from zope.pipeline.serving.modwsgi_express import run_directory
from zope.pipeline.serving.rolling import DRAIN
from zope.pipeline.serving.rolling import RestartError
from zope.pipeline.serving.rolling import daemon_processes
from zope.pipeline.serving.rolling import restart_process
from zope.pipeline.serving.rolling import take_turn
from zope.pipeline.stages import readiness

NAME = 'restart'
HELP = ('restart the mod_wsgi daemon processes of a running server one at '
        'a time, each after its predecessor serves again')

#: Seconds to wait for each step of one process's restart (its end, its
#: successor, the successor's site loaded) when --timeout is not given.
DEFAULT_TIMEOUT = 120
def add_arguments(parser):
    parser.add_argument('ini', help='the paste.deploy ini the server serves')
    parser.add_argument('--port', type=int, help="the server's port, which "
                        'names its default server root (default: the '
                        "ini's [server:main] port, else 8080)")
    parser.add_argument('--server-root', help='the server root of '
                        'zope-pipeline serve --mod-wsgi (default: '
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
    parser.add_argument('--drain', type=float, default=DRAIN,
                        metavar='SECONDS', help='how long one process may '
                        'take to finish its requests in flight, before the '
                        '--timeout for its end: the longest request limit '
                        'of its groups (default: %d, the administrative '
                        'group of serve --mod-wsgi and '
                        'etc/apache/zope-pipeline.conf: 600 s x (1 + ln 2) '
                        '+ 6 s)' % DRAIN)
    parser.add_argument('--leave-rotation', type=float, default=0,
                        metavar='SECONDS', help="first answer the "
                        "balancer's readiness check 503 for SECONDS (its "
                        'fall x inter, plus its longest request), then '
                        'restart, then answer 200 again and wait SECONDS '
                        '(its rise x inter) (default: 0, stay in rotation)')


def run(args):
    ini = os.path.abspath(args.ini)
    port = args.port or int(server_section(ini).get('port', 8080))
    server_root = os.path.abspath(args.server_root or default_server_root(
        ini, port))
    pid_file = args.pid_file or os.path.join(server_root, 'httpd.pid')
    run_dir = args.run_dir or run_directory(server_root)
    try:
        parent = read_pid(pid_file)
        # One rolling restart at a time (a touch of the script starts one
        # from within the daemon processes).
        lock = take_turn_in(run_dir)
        pids = daemon_processes(parent)
        if not pids:
            raise RestartError('Apache (pid %d, %s) has no mod_wsgi daemon '
                               'processes.' % (parent, pid_file))
        if args.leave_rotation > 0:
            out_of_rotation(run_dir, args.leave_rotation,
                            lambda: restart_all(parent, pids, run_dir, args))
        else:
            restart_all(parent, pids, run_dir, args)
        lock.close()
    except RestartError as error:
        raise SystemExit(str(error)) from None
    return 0


def restart_all(parent, pids, run_dir, args):
    for pid in pids:
        started = time.monotonic()
        successor = restart_process(parent, pid, run_dir, args.timeout,
                                    args.drain)
        print('Daemon process %d replaced by %d, serving after %.1f s.'
              % (pid, successor, time.monotonic() - started), flush=True)


def out_of_rotation(run_dir, seconds, restart, sleep=time.sleep):
    """``restart()`` with the server out of the balancer's rotation for
    ``seconds`` before and back in it ``seconds`` after; back in it
    whatever happened."""
    readiness.leave_rotation(run_dir)
    try:
        print('Out of rotation: waiting %g s for the balancer.' % seconds,
              flush=True)
        sleep(seconds)
        restart()
    finally:
        readiness.join_rotation(run_dir)
    print('Back in rotation: waiting %g s for the balancer.' % seconds,
          flush=True)
    sleep(seconds)


def take_turn_in(run_dir):
    try:
        return take_turn(run_dir)
    except UnsafePathError as error:
        raise RestartError(str(error)) from None
    except OSError as error:
        raise RestartError('Cannot take the rolling restarts\' lock in %s '
                           '(%s): is it the run directory of the server '
                           '(--run-dir)?' % (run_dir, error)) from None


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
