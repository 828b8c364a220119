"""Worker start-up: from process start to the first response.

For waitress the worker is the server process: it is started and the page
polled until it answers.  For mod_wsgi the server is started once, then its
daemon process is stopped (SIGTERM); Apache starts a new one, which imports
the WSGI script at start, and the page is polled until the new process
answers.  In both cases the start is the kernel's start time of the
process (``/proc/<pid>/stat``) and ``load`` is the time until the counting
middleware was built (the application loaded).

A mod_wsgi daemon finds the templates its predecessors compiled in the
server's run directory (as ``zope-pipeline serve --mod-wsgi`` deploys
it): every other restart removes them first, so the daemons that compile
their templates are timed too.  Waitress keeps them in memory.
"""

import os
import shutil
import signal
import time
import urllib.error

from zope.pipeline.serving.modwsgi_express import run_directory

from benchmarks import serverside
from benchmarks.servers import ServerConfig
from benchmarks.servers import fetch
from benchmarks.servers import make_server
from benchmarks.stats import median

WAITRESS = ServerConfig('waitress', 1, 4)
MOD_WSGI = ServerConfig('mod_wsgi', 1, 4)


def wait_for_new_process(server, known, timeout=120.0, interval=0.002):
    """Wait until a process not in ``known`` has loaded the application;
    return its ready record."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server.check_alive()
        for pid, record in serverside.read_ready(server.count_dir).items():
            if pid not in known:
                return record
        time.sleep(interval)
    raise TimeoutError('%s loaded no new process within %ds'
                       % (server.config.label, timeout))


def first_ok(server, path, timeout=60.0, interval=0.002):
    """Request ``path`` until it answers 200; return when it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server.check_alive()
        try:
            status = fetch(server.url(path), timeout=timeout)[0]
        except (OSError, urllib.error.URLError):
            status = None  # waitress binds its port just after loading
        if status == 200:
            return time.time()
        if status is not None and status != 503:
            raise RuntimeError('%s answered %s for %s:\n%s' % (
                server.config.label, status, path, server.log_tail()))
        time.sleep(interval)
    raise TimeoutError('%s did not answer %s within %ds'
                       % (server.config.label, path, timeout))


def timings(record, first):
    return {'first_response_s': first - record['started'],
            'load_s': record['ready'] - record['started'],
            'pid': record['pid']}


def waitress_start(workspace, name, script_text_for, path):
    """One start of waitress, timed to its first response."""
    server = make_server(WAITRESS, workspace, name, script_text_for)
    try:
        server.start()
        record = wait_for_new_process(server, ())
        first = first_ok(server, path)
        return dict(timings(record, first),
                    server_start_s=first - server.started_at)
    finally:
        server.stop()


def wait_until_gone(pid, timeout=30.0, interval=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(interval)
    raise TimeoutError('process %d did not exit within %ds' % (pid, timeout))


def restart_daemon(server, path, old_pid):
    """Stop daemon ``old_pid`` (SIGTERM); Apache starts a new one, which
    is timed from its start to its first response."""
    known = set(serverside.read_ready(server.count_dir))
    os.kill(old_pid, signal.SIGTERM)
    wait_until_gone(old_pid)
    record = wait_for_new_process(server, known)
    return timings(record, first_ok(server, path))


def forget_compiled_templates(server):
    """Remove the templates the daemons compiled into the server's run
    directory (``templates-<uid>``): the next daemon compiles them."""
    run = run_directory(server.root)
    for entry in os.listdir(run) if os.path.isdir(run) else ():
        if entry.startswith('templates-'):
            shutil.rmtree(os.path.join(run, entry))


def mod_wsgi_starts(workspace, name, script_text_for, path, repeats):
    """Start mod_wsgi 1x4, then restart its daemon ``repeats`` times with
    the templates compiled before kept in the run directory (as deployed)
    and ``repeats`` times without, alternately (``compiling``)."""
    server = make_server(MOD_WSGI, workspace, name, script_text_for)
    starts, compiling = [], []
    try:
        server.start()
        record = wait_for_new_process(server, ())
        cold = first_ok(server, path) - server.started_at
        pid = record['pid']
        for _ in range(repeats):
            for kept in (starts, compiling):
                if kept is compiling:
                    forget_compiled_templates(server)
                start = restart_daemon(server, path, pid)
                kept.append(start)
                pid = start['pid']
    finally:
        server.stop()
    return cold, starts, compiling


def summarize_starts(starts):
    return {key: median(start[key] for start in starts)
            for key in ('first_response_s', 'load_s')}


def measure(workspace, script_for, path, repeats=3, log=print):
    """Median start-up of a waitress process and a mod_wsgi daemon.

    ``script_for(label)`` returns the script-text factory of the site on
    its own storage, so the two servers (one runs as root, the other as
    Apache's user) share no files.
    """
    waitress = []
    waitress_script = script_for('startup-waitress')
    for number in range(repeats):
        waitress.append(waitress_start(workspace, 'startup-waitress-%d'
                                       % number, waitress_script, path))
        log('    waitress start %d: first response after %.2f s'
            % (number + 1, waitress[-1]['first_response_s']))
    cold, daemons, compiling = mod_wsgi_starts(
        workspace, 'startup-mod_wsgi', script_for('startup-mod_wsgi'), path,
        repeats)
    for number, (start, compiled) in enumerate(zip(daemons, compiling), 1):
        log('    mod_wsgi daemon start %d: first response after %.2f s '
            '(%.2f s compiling its templates)'
            % (number, start['first_response_s'],
               compiled['first_response_s']))
    return {
        'repeats': repeats,
        'waitress': dict(summarize_starts(waitress),
                         server_start_s=median(
                             start['server_start_s'] for start in waitress)),
        'mod_wsgi': dict(summarize_starts(daemons), server_start_s=cold),
        'mod_wsgi_compiling': dict(summarize_starts(compiling),
                                   server_start_s=None),
    }
