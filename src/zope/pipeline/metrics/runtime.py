"""The metrics of one process at run time: the collector and its worker.

One background thread per process (started with the first request, so
after any fork) drains the collector every ``flush_interval`` seconds and
hands the result to the exporters: statsd, this process's state file,
and mod_wsgi's own metrics reader.  Request threads never export: a page
that needs fresh numbers (``/_metrics``, the admin page) advances the
collector itself and leaves what it drained for the worker to send.
The worker stops, and the state file is retired, when the process shuts
down (``mod_wsgi.subscribe_shutdown`` under mod_wsgi, ``atexit``
otherwise).
"""

import atexit
import collections
import logging
import os
import threading
import weakref

from zope.pipeline.metrics import modwsgi
from zope.pipeline.metrics.group import merge

logger = logging.getLogger('zope.pipeline.metrics')

#: Runtimes whose worker runs, to stop them (tests, exit).
_running = weakref.WeakSet()


class MetricsRuntime:
    """Owns the collector's worker thread and the exporters."""

    def __init__(self, collector, state=None, statsd=None, use_modwsgi=True,
                 flush_interval=1.0, chart_steps=60):
        self.collector = collector
        self.state = state
        self.statsd = statsd
        self.use_modwsgi = use_modwsgi
        self.flush_interval = flush_interval
        self.chart_steps = chart_steps
        self.reader = None
        self.running = False
        self.thread = None
        self.stopping = threading.Event()
        self.pending = collections.deque()
        self.lock = threading.Lock()
        self.written = False
        forget = weakref.WeakMethod(self._forget_after_fork)
        os.register_at_fork(after_in_child=lambda: _call(forget))

    # -- life cycle

    def start(self):
        """Start the worker in this process (once; again after a fork)."""
        with self.lock:
            if self.running:
                return
            self.running = True
            self.stopping.clear()
            if self.use_modwsgi:
                self.reader = modwsgi.claim_reader()
            self.thread = threading.Thread(
                target=self._run, name='zope.pipeline.metrics', daemon=True)
            self.thread.start()
            self._subscribe_shutdown()
            _running.add(self)

    def _subscribe_shutdown(self):
        module = modwsgi.server_module()
        if module is not None and hasattr(module, 'subscribe_shutdown'):
            module.subscribe_shutdown(self._on_shutdown)
        else:
            atexit.register(self.stop)

    def _on_shutdown(self, *args, **kwargs):
        self.stop()

    def _forget_after_fork(self):
        """In a forked child the worker does not exist: start anew."""
        self.running = False
        self.thread = None
        self.reader = None
        self.lock = threading.Lock()

    def stop(self):
        """Stop the worker, export the rest, retire this process's file."""
        with self.lock:
            if not self.running:
                return
            self.running = False
            self.stopping.set()
            thread, self.thread = self.thread, None
        atexit.unregister(self.stop)
        if thread is not threading.current_thread():
            thread.join(max(5 * self.flush_interval, 1.0))
        self.flush()
        if self.state is not None:
            self.state.retire(os.getpid())
        if self.statsd is not None:
            self.statsd.close()
        if self.reader is not None:
            modwsgi.release_reader()
            self.reader = None

    # -- the worker

    def _run(self):
        while not self.stopping.wait(self.flush_interval):
            try:
                self.flush()
            except Exception:  # the worker must outlive a failed export
                logger.exception('Exporting request metrics failed')

    def flush(self, now=None):
        """Advance the collector and export (the worker's one iteration)."""
        now = self.collector.clock() if now is None else now
        progress = []
        while self.pending:
            progress.append(self.pending.popleft())
        progress.append(self.collector.advance(now))
        if self.reader is not None:
            self.reader.sample(self.collector, now)
        if self.statsd is not None:
            for item in progress:
                self.statsd.export(item, self.collector)
        if self.state is not None and (not self.written or any(
                item.records or item.closed for item in progress)):
            self.state.write(self.collector.snapshot(self.chart_steps))
            self.written = True
        return progress

    # -- reading

    def refresh(self):
        """Bring the collector up to date from a request thread."""
        self.pending.append(self.collector.advance())

    def group_snapshot(self):
        """The numbers of every process of the group (or this one)."""
        self.refresh()
        own = self.collector.snapshot(self.chart_steps)
        if self.state is None:
            return merge([own])
        return self.state.merged(own)


def _call(weak_method):
    method = weak_method()
    if method is not None:
        method()


def stop_all():
    """Stop every running worker (registered as a zope.testing cleanup)."""
    for runtime in list(_running):
        runtime.stop()


try:  # tests clean up with zope.testing; it is not a run-time dependency
    from zope.testing.cleanup import addCleanUp
except ImportError:  # pragma: no cover
    pass
else:
    addCleanUp(stop_all)
