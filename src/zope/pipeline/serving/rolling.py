"""Daemon processes restarted one at a time, each after its successor has
loaded the site: what `zope-pipeline restart` does, and what a touch of
the WSGI script does under `zope-pipeline serve --mod-wsgi` and
etc/apache/zope-pipeline.conf (a rolling restart).

mod_wsgi's own reload on a touch (WSGIScriptReloading) restarts each
daemon process on its next request: under load every one within a
second, and the site answers nobody until a new one has loaded it.  The
servers zope-pipeline configures turn it off; instead ``watch_script``
(called by the WSGI script in each daemon process) looks at the script's
modification time twice a second.  The first process to notice a touch
takes an exclusive lock in the run directory (the others wait for it)
and restarts every other daemon process of its Apache that started
before it noticed, one at a time (``restart_process``: SIGUSR1, mod_wsgi's
graceful restart; then the successor's readiness marker,
zope.pipeline.stages.readiness), and then itself.  A successor that cannot
serve stops the roll, says so in the log, and is not tried again for the
same touch (``FAILED_NAME``); fix the cause and touch again.
"""

import fcntl
import logging
import os
import signal
import stat
import threading
import time

from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.stages import readiness

logger = logging.getLogger('zope.pipeline.serving.rolling')

#: Seconds between two looks at the processes.
POLL_INTERVAL = 0.05
#: Seconds between two looks at the WSGI script's modification time.
WATCH_INTERVAL = 0.5
#: Seconds each step of one process's restart may take.
TIMEOUT = 120
#: Seconds a daemon process may take to finish its requests in flight
#: before it ends, when the server does not say (``watch_script``'s
#: ``drain``): the longest request of the administrative group of
#: etc/apache/zope-pipeline.conf and of `zope-pipeline serve --mod-wsgi`
#: (600 s x (1 + ln 2), see
#: zope.pipeline.serving.modwsgi_express.drain_seconds).
#: mod_wsgi ends the process by then (its graceful-timeout and
#: shutdown-timeout); the wait only bounds a process that does not.
DRAIN = 1022
#: How mod_wsgi names its daemon processes (display-name).
DAEMON_PREFIX = '(wsgi:'
#: The lock the rolling processes take turns with, in the run directory.
LOCK_NAME = 'rolling-restart.lock'
#: The script's modification time of a roll that failed.
FAILED_NAME = 'rolling-restart.failed'


class RestartError(Exception):
    """A daemon process did not restart as it should."""


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


def ask_to_restart(pid):
    """Ask mod_wsgi daemon process ``pid`` to restart gracefully."""
    os.kill(pid, signal.SIGUSR1)


def restart_process(parent, pid, run_dir, timeout, drain=0):
    """Restart daemon process ``pid`` gracefully and wait until its
    successor serves; return the successor's pid.  The process has
    ``drain`` seconds to finish its requests in flight, ``timeout`` more
    to end."""
    before = set(daemon_processes(parent))
    ask_to_restart(pid)
    wait_for(lambda: not alive(pid), drain + timeout,
             'daemon process %d did not end within %s s (graceful-timeout '
             'and shutdown-timeout of its group?)' % (pid, drain + timeout))
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


# -- a touch of the WSGI script


def boot_ticks():
    """Now, in the clock ticks since boot of /proc/PID/stat's start
    times."""
    return time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf(
        'SC_CLK_TCK')


def watch_script(script, run_dir=None, interval=WATCH_INTERVAL,
                 drain=DRAIN):
    """In a mod_wsgi daemon process with a run directory, start the
    thread that turns a touch of ``script`` into a rolling restart (see
    the module's docstring); return it (None elsewhere).  ``drain``: the
    longest a daemon process of the server may take to finish its
    requests (the longest request limit of its groups)."""
    # late: the CLI's --help imports this module (commands.restart)
    from zope.pipeline.metrics.modwsgi import server_module
    run_dir = run_dir or os.environ.get(RUN_DIR_VARIABLE)
    if not run_dir or server_module() is None:
        return None
    baseline = modification_time(script)
    thread = threading.Thread(
        target=watch, args=(script, baseline, run_dir, interval, drain),
        name='zope.pipeline rolling restart', daemon=True)
    thread.start()
    return thread


def modification_time(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def watch(script, baseline, run_dir, interval=WATCH_INTERVAL, drain=DRAIN):
    """Wait for ``script`` to change from ``baseline``, then roll; look
    again afterwards (a roll that failed, or this process restarted by
    another one)."""
    while True:
        time.sleep(interval)
        touched = modification_time(script)
        if touched == baseline:
            continue
        baseline = touched
        try:
            roll(run_dir, touched, drain=drain)
        except (OSError, UnsafePathError) as error:
            logger.error('Rolling restart impossible: %s', error)


def roll(run_dir, touched, pid=None, parent=None, timeout=TIMEOUT,
         drain=DRAIN):
    """Once this process holds the lock: restart every other daemon
    process that started before now, one at a time, then this one
    (unless a roll failed for this touch already).  Return the pids
    restarted; the lock stays held until this process ends."""
    pid = pid or os.getpid()
    parent = parent or os.getppid()
    noticed = boot_ticks()
    lock = take_turn(run_dir)
    failed = os.path.join(run_dir, FAILED_NAME)
    if read_text(failed) == repr(touched):
        lock.close()
        return []
    older = [other for other in daemon_processes(parent)
             if other != pid and
             (readiness.process_start_time(other) or 0) < noticed]
    restarted = []
    try:
        for other in older:
            successor = restart_process(parent, other, run_dir, timeout,
                                        drain)
            logger.info('Rolling restart: daemon process %d replaced by '
                        '%d.', other, successor)
            restarted.append(other)
    except RestartError as error:
        logger.error('Rolling restart stopped: %s', error)
        with open(failed, 'w') as stream:
            stream.write(repr(touched))
        lock.close()
        return restarted
    logger.info('Rolling restart: daemon process %d restarts last.', pid)
    _locks.append(lock)   # held until this process ends
    ask_to_restart(pid)
    return restarted + [pid]


def take_turn(run_dir):
    """Wait for the rolling restarts' lock in ``run_dir`` and take it;
    return its file (closing it releases the lock).  A lock file root
    creates (`zope-pipeline restart`) is given to the run directory's
    owner, so the daemon processes can take it too; a lock file that is
    not a regular file of its own (a hard link) is refused with
    ``UnsafePathError``."""
    path = os.path.join(run_dir, LOCK_NAME)
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW,
                         0o600)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode) or found.st_nlink != 1:
            # the run directory's owner can put any name there: a hard
            # link to a file of root's would be given to that owner
            raise UnsafePathError(
                "%s is not a file of its own (a hard link, or not a "
                "regular file); refusing to use it as the rolling "
                "restarts' lock.  Remove it." % path)
        if os.geteuid() == 0 and found.st_uid == 0:
            owner = os.stat(run_dir)
            os.fchown(descriptor, owner.st_uid, owner.st_gid)
    except BaseException:
        os.close(descriptor)
        raise
    lock = os.fdopen(descriptor)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


#: The lock of this process's last roll, held until it ends.
_locks = []


def read_text(path):
    try:
        with open(path) as stream:
            return stream.read()
    except OSError:
        return None
