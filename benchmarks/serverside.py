"""What runs inside the benchmarked servers, and how the harness reads it.

The generated WSGI script wraps the application in ``CountingMiddleware``:
each process keeps its counts of finished responses (total, per status
class, and those answered from a stored page: an ``Age`` header) in its
own file, ``<pid>.count`` in a shared directory, rewritten in
place when a response is closed; the harness sums the files of every
process.  At import the middleware also writes ``<pid>.ready`` (when the
process started, when the application was ready), which tells the harness
how many processes are up and how long each took to load.  The ceiling is
``PlainPage``, a WSGI application with a fixed body.
"""

import json
import logging
import os
import threading
import time

from benchmarks.stats import ServerCounts

_RECORD = b'%12d %12d %12d %12d %12d %12d\n'
_RECORD_SIZE = len(_RECORD % (0, 0, 0, 0, 0, 0))


def process_start_time(pid='self'):
    """When process ``pid`` started, in seconds since the epoch (to the
    kernel's clock tick: its age from /proc/uptime and its start tick)."""
    with open('/proc/%s/stat' % pid) as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    started_ticks = int(fields[19])  # field 22, starttime
    with open('/proc/uptime') as uptime:
        now_uptime = float(uptime.read().split()[0])
    now = time.time()
    return now - (now_uptime - started_ticks / os.sysconf('SC_CLK_TCK'))


def status_index(status):
    """Index of a status line's class in a count record (1 for 2xx to 4
    for 5xx), or -1 for a class the record does not keep."""
    first = status[:1]
    return '12345'.index(first) if first and first in '2345' else -1


class CountingMiddleware:
    """Count every response the application finished, per process."""

    def __init__(self, app, directory):
        self.app = app
        self.directory = directory
        self._lock = threading.Lock()
        self._pid = None
        self._fd = None
        self._counts = None
        self._open()
        self._write_ready()

    def _open(self):
        self._pid = os.getpid()
        self._counts = [0, 0, 0, 0, 0, 0]
        path = os.path.join(self.directory, '%d.count' % self._pid)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.pwrite(self._fd, _RECORD % tuple(self._counts), 0)

    def _write_ready(self):
        record = {'pid': self._pid, 'started': process_start_time(),
                  'ready': time.time()}
        path = os.path.join(self.directory, '%d.ready' % self._pid)
        with open(path, 'w') as ready:
            json.dump(record, ready)

    def record(self, status, hit=False):
        """Count one finished response with this status line (``hit``: it
        was answered from a stored page, with an ``Age`` header)."""
        with self._lock:
            if self._pid != os.getpid():
                self._open()
            counts = self._counts
            counts[0] += 1
            index = status_index(status)
            if index > 0:
                counts[index] += 1
            if hit:
                counts[5] += 1
            os.pwrite(self._fd, _RECORD % tuple(counts), 0)

    def __call__(self, environ, start_response):
        statuses = []

        def counting_start_response(status, headers, exc_info=None):
            statuses.append((status, any(name.lower() == 'age'
                                         for name, _value in headers)))
            return start_response(status, headers, exc_info)

        try:
            body = self.app(environ, counting_start_response)
        except BaseException:
            self.record('500 Internal Server Error')
            raise
        return CountedBody(body, self, statuses)


class CountedBody:
    """The application's body; counted when the server closes it."""

    __slots__ = ('body', 'middleware', 'statuses')

    def __init__(self, body, middleware, statuses):
        self.body = body
        self.middleware = middleware
        self.statuses = statuses

    def __iter__(self):
        return iter(self.body)

    def close(self):
        try:
            close = getattr(self.body, 'close', None)
            if close is not None:
                close()
        finally:
            status, hit = self.statuses[-1] if self.statuses else (
                '500', False)
            self.middleware.record(status, hit)


class PlainPage:
    """The ceiling: a WSGI application that returns ``size`` bytes, or the
    bytes ``body``."""

    def __init__(self, size=0, body=None):
        if body is None:
            body = (b'<html><body>' + b'x' * size)[:size]
        self.body = body
        self.headers = [('Content-Type', 'text/html;charset=utf-8'),
                        ('Content-Length', str(len(self.body)))]

    def __call__(self, environ, start_response):
        start_response('200 OK', list(self.headers))
        return [self.body]


def configure_logging(directory):
    """Log zope.pipeline warnings, and the retry stage's INFO lines, to
    ``app-<pid>.log`` in ``directory``."""
    handler = logging.FileHandler(
        os.path.join(directory, 'app-%d.log' % os.getpid()))
    handler.setFormatter(logging.Formatter(
        '%(asctime)s %(levelname)s %(name)s %(message)s'))
    pipeline = logging.getLogger('zope.pipeline')
    pipeline.addHandler(handler)
    pipeline.setLevel(logging.WARNING)
    logging.getLogger('zope.pipeline.retry').setLevel(logging.INFO)


# -- the harness side


def read_count_file(path):
    """The counts of one process's file (zero while it is being made); a
    record without the hits field (a checkout of the harness from before
    it, serving a peer side by side) counts none."""
    with open(path, 'rb') as count_file:
        data = count_file.read(_RECORD_SIZE)
    line, newline, _rest = data.partition(b'\n')
    if not newline:
        return ServerCounts()
    return ServerCounts(*(int(field) for field in line.split()))


def read_counts(directory):
    """{pid: ServerCounts} for every process that counted in ``directory``."""
    counts = {}
    for name in os.listdir(directory):
        if name.endswith('.count'):
            pid = int(name[:-len('.count')])
            counts[pid] = read_count_file(os.path.join(directory, name))
    return counts


def total_counts(directory):
    return sum(read_counts(directory).values(), ServerCounts())


def wait_for_counts(directory, before, expected, timeout=5.0, quiet=None,
                    interval=0.02):
    """Counts served since ``before``, once they reach ``expected`` (the
    server closes a response just after the client has it; None: no count
    to reach), or once they have not changed for ``quiet`` seconds (None:
    only the timeout ends the wait), or at ``timeout``."""
    started = changed = time.monotonic()
    served = total_counts(directory) - before
    while expected is None or served.total < expected:
        now = time.monotonic()
        if now - started >= timeout or (
                quiet is not None and now - changed >= quiet):
            break
        time.sleep(interval)
        latest = total_counts(directory) - before
        if latest != served:
            served, changed = latest, time.monotonic()
    return served


def read_ready(directory):
    """{pid: {'pid', 'started', 'ready'}} for every loaded process."""
    ready = {}
    for name in os.listdir(directory):
        if name.endswith('.ready'):
            with open(os.path.join(directory, name)) as ready_file:
                try:
                    record = json.load(ready_file)
                except ValueError:
                    continue  # being written
            ready[record['pid']] = record
    return ready


def count_log_lines(directory, marker):
    """How many lines of the app logs in ``directory`` contain ``marker``."""
    total = 0
    for name in os.listdir(directory):
        if name.startswith('app-') and name.endswith('.log'):
            with open(os.path.join(directory, name),
                      errors='replace') as log:
                total += sum(1 for line in log if marker in line)
    return total
