"""mod_wsgi's own request metrics, read beside ours.

Inside a mod_wsgi process ``import mod_wsgi`` gives the server's module;
after ``start_recording_metrics()``, each ``request_metrics()`` call
returns what happened since the previous call (``sample_period`` seconds,
``capacity_utilization`` and more) and resets it.  So exactly one reader
per process may call it: ``claim_reader`` hands out one ``ModWsgiReader``
per process and None to every later caller.  The worker spreads each
sample's utilisation over the steps its period covers, beside ours.
"""

import os
import threading

_claimed = {}
_claim_lock = threading.Lock()


def server_module():
    """The mod_wsgi server module, or None outside mod_wsgi."""
    try:
        import mod_wsgi  # late: optional, and a server only inside mod_wsgi
    except ImportError:
        return None
    if not hasattr(mod_wsgi, 'request_metrics'):
        return None  # the mod_wsgi-express installer package, not a server
    return mod_wsgi


def threads_per_process(default):
    module = server_module()
    threads = getattr(module, 'threads_per_process', None)
    return threads if isinstance(threads, int) and threads > 0 else default


def claim_reader(module=None):
    """Return this process's reader, or None if claimed or not mod_wsgi."""
    module = module if module is not None else server_module()
    if module is None:
        return None
    with _claim_lock:
        if _claimed.get(os.getpid()):
            return None
        _claimed[os.getpid()] = True
    return ModWsgiReader(module)


def release_reader():
    with _claim_lock:
        _claimed.pop(os.getpid(), None)


class ModWsgiReader:
    """Calls ``request_metrics()`` and adds each sample to a collector."""

    def __init__(self, module):
        self.module = module
        self.threads = getattr(module, 'threads_per_process', 1) or 1
        module.start_recording_metrics()

    def sample(self, collector, now):
        """Read one sample; spread its utilisation over its period."""
        metrics = self.module.request_metrics()
        if not metrics:
            return None
        period = metrics.get('sample_period') or 0.0
        utilization = metrics.get('capacity_utilization')
        if period <= 0 or utilization is None:
            return None
        collector.add_server_utilization(now - period, now, utilization,
                                         self.threads)
        return utilization
