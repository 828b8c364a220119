"""CPU time per request of each process kind serving the peers' page.

    python -m benchmarks.cpu_per_request [--peers pyramid,pipeline]
        [--storage sqlite] [--requests 2000] [--concurrency 8]
        [--rounds 5] [--keep-alive] [--strace PEER]

Starts the peers side by side under mod_wsgi-express 2x1 the way the peers
comparison does (``benchmarks.peercompare``), warms each up, then in
interleaved rounds runs ab against each and reads, before and after the
run, utime + stime of every process of the server's session from
``/proc/<pid>/stat`` and ab's own from its rusage.  The processes are
split into the mod_wsgi daemons (the pids that loaded the WSGI script),
the other Apache processes, and ab.  CPU microseconds per request are far
less sensitive to a shared machine's load than requests per second; the
medians of the rounds are printed per peer and process kind.

``--strace PEER`` also counts the system calls of one daemon process of
that peer over one extra run (``strace -c -f``), per request.
"""

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import tempfile
import time

from zope.pipeline.http.wsgi import ClosingIterator

from benchmarks import peers
from benchmarks import serverside
from benchmarks.loadgen import Load
from benchmarks.loadgen import ab_command
from benchmarks.loadgen import warm_up
from benchmarks.peercompare import check_page
from benchmarks.peercompare import populate
from benchmarks.peers import page
from benchmarks.scripts import ceiling_body_script
from benchmarks.scripts import peer_script
from benchmarks.servers import ServerConfig
from benchmarks.servers import serving
from benchmarks.storages import SqliteStorage
from benchmarks.workspace import Workspace

TICK = os.sysconf('SC_CLK_TCK')

TIMED = """\
from benchmarks.cpu_per_request import InAppTimer
application = InAppTimer(application, %r)
"""


class InAppTimer:
    """Around the counted application in the daemon: the request thread's
    CPU time from the call until the body's ``close()`` returned, summed
    per process into ``<pid>.inapp`` (seconds, requests) after each
    request; the rest of a daemon's CPU time is mod_wsgi's own work and
    the other threads'."""

    def __init__(self, app, directory):
        self.app = app
        self.directory = directory
        self.pid = None
        self.fd = None
        self.seconds = 0.0
        self.requests = 0

    def add(self, seconds):
        if self.pid != os.getpid():
            self.pid = os.getpid()
            self.seconds, self.requests = 0.0, 0
            self.fd = os.open(os.path.join(self.directory, '%d.inapp' % (
                self.pid)), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.seconds += seconds
        self.requests += 1
        os.pwrite(self.fd, b'%20.6f %12d\n' % (self.seconds, self.requests),
                  0)

    def __call__(self, environ, start_response):
        started = time.thread_time()
        body = self.app(environ, start_response)
        # zope.pipeline's own wrapper: close() forwarded exactly once, the
        # time added after it even if closing the body raises
        return ClosingIterator(
            body, lambda: self.add(time.thread_time() - started))


def in_app(directory):
    """Seconds of in-application CPU summed over the daemons."""
    total = 0.0
    for name in os.listdir(directory):
        if name.endswith('.inapp'):
            with open(os.path.join(directory, name)) as record:
                text = record.read().split()
            if text:
                total += float(text[0])
    return total


def session_cpu(session):
    """{pid: CPU seconds (utime + stime)} of the processes of a session."""
    cpu = {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as stat:
                fields = stat.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # field 6, session
            cpu[int(name)] = (int(fields[11]) + int(fields[12])) / TICK
    return cpu


def thread_cpu(pids):
    """{(pid, tid): CPU seconds} of every thread of ``pids``."""
    cpu = {}
    for pid in pids:
        try:
            tids = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open('/proc/%d/task/%s/stat' % (pid, tid)) as stat:
                    fields = stat.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            cpu[pid, int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return cpu


def kinds(server, before, after):
    """{'daemon': seconds, 'apache': seconds} spent between two reads."""
    daemons = set(serverside.read_ready(server.count_dir))
    spent = {'daemon': 0.0, 'apache': 0.0}
    for pid, seconds in after.items():
        kind = 'daemon' if pid in daemons else 'apache'
        spent[kind] += seconds - before.get(pid, 0.0)
    return spent


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_run(server, load):
    """{'daemon', 'apache', 'ab', 'wall'}: CPU µs per request of one run."""
    session = server.process.pid
    before_counts = serverside.total_counts(server.count_dir)
    before = session_cpu(session)
    before_ab = children_cpu()
    before_app = in_app(server.count_dir)
    daemons = sorted(serverside.read_ready(server.count_dir))
    before_threads = thread_cpu(daemons)
    started = time.monotonic()
    command = ab_command(server.url(page.PAGE_PATH), load)
    completed = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    serverside.wait_for_counts(server.count_dir, before_counts, load.requests)
    time.sleep(0.2)  # work after the response (close, GC) lands here too
    spent = kinds(server, before, session_cpu(session))
    spent['ab'] = children_cpu() - before_ab
    spent['in-app'] = in_app(server.count_dir) - before_app
    after_threads = thread_cpu(daemons)
    # the daemons' threads other than the busiest (the request thread)
    # of each process
    for pid in daemons:
        spent_by = sorted(
            (after_threads[key] - before_threads.get(key, 0.0), key[1])
            for key in after_threads if key[0] == pid)
        spent['other-thr'] = spent.get('other-thr', 0.0) + sum(
            seconds for seconds, _tid in spent_by[:-1])
    if 'Failed requests:        0' not in completed.stdout:
        print(completed.stdout[-800:])
    result = {kind: seconds * 1e6 / load.requests
              for kind, seconds in spent.items()}
    result['req/s'] = load.requests / wall
    return result


def strace_daemon(server, load):
    """strace -c -f of the first daemon over one run; its summary."""
    daemon = sorted(serverside.read_ready(server.count_dir))[0]
    handle, output = tempfile.mkstemp(prefix='strace-', suffix='.txt')
    os.close(handle)
    tracer = subprocess.Popen(['strace', '-c', '-f', '-o', output,
                               '-p', str(daemon)],
                              stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    before = serverside.read_counts(server.count_dir).get(daemon)
    subprocess.run(ab_command(server.url(page.PAGE_PATH), load),
                   capture_output=True)
    time.sleep(0.5)
    after = serverside.read_counts(server.count_dir).get(daemon)
    tracer.terminate()
    tracer.wait()
    with open(output) as text:
        summary = text.read()
    os.unlink(output)
    served = (after.total - before.total) if before and after else 0
    return summary, served


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--peers', default='pyramid,pipeline')
    parser.add_argument('--storage', default='sqlite')
    parser.add_argument('--requests', type=int, default=2000)
    parser.add_argument('--concurrency', type=int, default=8)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=500)
    parser.add_argument('--keep-alive', action='store_true')
    parser.add_argument('--strace', default=None)
    parser.add_argument('--idle', type=float, default=0,
                        help='seconds to measure each server idle')
    parser.add_argument('--headers', action='store_true',
                        help='print each peer\'s response headers')
    args = parser.parse_args(argv)
    config = ServerConfig('mod_wsgi', 2, 1)
    load = Load(args.requests, args.concurrency, args.keep_alive)
    apps = [peers.BY_NAME[name] for name in args.peers.split(',')]
    results = {app.name: [] for app in apps}
    with Workspace() as workspace, contextlib.ExitStack() \
            as stack:
        servers = {}
        for app in apps:
            if app is peers.CEILING:
                body = page.expected_body()

                def script(count_dir, log_dir, body=body):
                    return ceiling_body_script(body, count_dir, log_dir)
            else:
                label = 'peer-%s-%s' % (app.name, args.storage)
                storage = SqliteStorage()
                zodb_config = storage.setup(workspace, label)
                workdir = workspace.directory(label + '-work')
                populate(app, zodb_config, workdir)

                def script(count_dir, log_dir, name=app.name,
                           zodb_config=zodb_config, workdir=workdir):
                    return peer_script(name, zodb_config, workdir,
                                       count_dir, log_dir) + TIMED % (
                                           count_dir,)
            servers[app.name] = stack.enter_context(serving(
                config, workspace, 'cpu-%s' % app.name, script,
                page.PAGE_PATH))
            check_page(app, servers[app.name])
            if args.headers:
                print(app.name, subprocess.run(
                    ['curl', '-s', '-D', '-', '-o', '/dev/null',
                     servers[app.name].url(page.PAGE_PATH)],
                    capture_output=True, text=True).stdout)
            warm_up(servers[app.name], page.PAGE_PATH, args.warmup, 8)
        if args.idle:
            for app in apps:
                server = servers[app.name]
                before = session_cpu(server.process.pid)
                time.sleep(args.idle)
                spent = kinds(server, before, session_cpu(server.process.pid))
                print('idle %-8s %s' % (app.name, '  '.join(
                    '%s %.2f%% CPU' % (kind, seconds * 100 / args.idle)
                    for kind, seconds in spent.items())), flush=True)
        for number in range(args.rounds):
            order = apps[number % len(apps):] + apps[:number % len(apps)]
            for app in order:
                run = measure_run(servers[app.name], load)
                results[app.name].append(run)
                print('round %d %-8s %s' % (number + 1, app.name, '  '.join(
                    '%s %.0f' % item for item in run.items())), flush=True)
        for name in filter(None, (args.strace or '').split(',')):
            summary, count = strace_daemon(servers[name], load)
            print('strace -c -f of one %s daemon, %d requests:' % (
                name, count))
            print(summary)
    print('\nmedians, CPU µs per request (%s, %s, %d requests, %d rounds)'
          % (load.label, args.storage, args.requests, args.rounds))
    print('%-10s %8s %8s %9s %8s %8s %8s %8s' % (
        'peer', 'daemon', 'in-app', 'other-thr', 'apache', 'ab', 'total',
        'req/s'))
    for name, runs in results.items():
        medians = {kind: statistics.median(run[kind] for run in runs)
                   for kind in ('daemon', 'in-app', 'other-thr', 'apache',
                                'ab', 'req/s')}
        total = statistics.median(run['daemon'] + run['apache'] + run['ab']
                                  for run in runs)
        print('%-10s %8.0f %8.0f %9.0f %8.0f %8.0f %8.0f %8.0f' % (
            name, medians['daemon'], medians['in-app'], medians['other-thr'],
            medians['apache'], medians['ab'], total, medians['req/s']))


if __name__ == '__main__':
    main()
