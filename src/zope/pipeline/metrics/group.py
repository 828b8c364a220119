"""The numbers of a process group: per-process state files, merged.

Each process writes its snapshot (``Collector.snapshot``) to
``<state_dir>/<pid>.json`` (atomically: a temporary file renamed over
it).  A reader merges every file: lifetime totals are summed, and steps
with the same start are summed (their amounts are already normalised to a
full step, and each brings its own capacity, so utilisation stays busy
thread-seconds over available thread-seconds of the group).

When a process exits it folds its totals into ``retired.json`` and removes
its file, so counters never go backwards and the directory holds only live
processes; the file of a process that died without doing so is folded in
the same way by the next reader that notices its pid is gone.  Folding
happens under an exclusive ``flock`` on ``.lock``.

A directory made automatically for one run of a server (under mod_wsgi)
records that server's parent pid in ``parent``; the next group to start
removes the directories of servers that are gone (only its own user's).
The directory must be private (``zope.pipeline.security.privatefiles``): made
with
mode 0700, or an existing one owned by this user and writable by nobody
else, never a symbolic link.

Why not prometheus_client's multiprocess mode: it sums lifetime counters
and histograms from per-pid mmap files, but a gauge is merged per process
(sum, min, max, most recent), so a ratio cannot be: with one process of one
thread busy for a whole step and one of three threads idle, the group's
utilisation is 1/4, and its modes give 1.0 (sum, max) or 0.0 (min, most
recent), measured with prometheus_client 0.26.  It has no steps either,
so no time-weighted rate of a step closed by every process, and no history
of steps for the per-view percentiles of the admin page.  Its files of
exited processes stay, one set per pid; ours are folded into
``retired.json``.  The exposition format is the library's
(``prometheus``).
"""

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile

from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.metrics import modwsgi as modwsgi_server
from zope.pipeline.metrics.histogram import merge_counts
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import check_private_directory
from zope.pipeline.security.privatefiles import private_directory

RETIRED = 'retired.json'
LOCK = '.lock'
PARENT = 'parent'


def empty_snapshot(step=10.0, bounds=()):
    return {'step': step, 'threads': 0, 'bounds': list(bounds),
            'closed_until': None, 'totals': {}, 'steps': [],
            'processes': 0}


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_abandoned(directory):
    """Remove the sibling directories (same name up to the last '-') whose
    server, as their ``parent`` file says, is gone."""
    base, name = os.path.split(directory)
    prefix = name.rpartition('-')[0] + '-'
    for sibling in os.listdir(base):
        path = os.path.join(base, sibling)
        if not sibling.startswith(prefix) or path == directory:
            continue
        try:
            check_private_directory(path)
        except (OSError, UnsafePathError):
            continue  # not ours: never touched
        try:
            with open(os.path.join(path, PARENT)) as source:
                parent = int(source.read().strip())
        except (OSError, ValueError):
            continue
        if not pid_alive(parent):
            shutil.rmtree(path, ignore_errors=True)


class GroupState:
    """The state directory shared by the processes of one group.

    ``parent``: the pid of the server the directory was made for, when it
    was made automatically (its siblings of servers gone are removed).
    """

    def __init__(self, directory, parent=None):
        self.directory = directory
        private_directory(directory, parents=True)
        if parent is not None:
            path = os.path.join(directory, PARENT)
            if not os.path.exists(path):
                write_text(path, '%d\n' % parent)
            sweep_abandoned(directory)

    def path_of(self, pid):
        return os.path.join(self.directory, '%d.json' % pid)

    # -- writing

    def write(self, snapshot):
        """Replace this process's file with ``snapshot``."""
        write_json(self.path_of(snapshot['pid']), snapshot)

    def retire(self, pid):
        """Fold process ``pid``'s totals into retired.json; remove its file."""
        with self.locked():
            self._retire_locked(pid)

    def _retire_locked(self, pid):
        path = self.path_of(pid)
        snapshot = read_json(path)
        if snapshot is None:
            return
        retired = read_json(os.path.join(self.directory, RETIRED)) or \
            {'totals': {}}
        merge_totals(retired['totals'], snapshot['totals'])
        write_json(os.path.join(self.directory, RETIRED), retired)
        os.unlink(path)

    @contextlib.contextmanager
    def locked(self):
        with open(os.path.join(self.directory, LOCK), 'a') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # -- reading

    def live_pids(self):
        """Pids with a state file; files of dead processes are retired."""
        pids = []
        for name in sorted(os.listdir(self.directory)):
            stem, extension = os.path.splitext(name)
            if extension != '.json' or not stem.isdigit():
                continue
            pid = int(stem)
            if pid_alive(pid):
                pids.append(pid)
            else:
                self.retire(pid)
        return pids

    def merged(self, own=None):
        """The group's snapshot: every live file (``own``, this process's
        fresh snapshot, instead of its file) plus the retired totals."""
        snapshots = []
        for pid in self.live_pids():
            if own is not None and pid == own['pid']:
                continue
            snapshot = read_json(self.path_of(pid))
            if snapshot is not None:
                snapshots.append(snapshot)
        if own is not None:
            snapshots.append(own)
        result = merge(snapshots)
        retired = read_json(os.path.join(self.directory, RETIRED))
        if retired is not None:
            merge_totals(result['totals'], retired['totals'])
        return result


def write_json(path, data):
    write_text(path, json.dumps(data, separators=(',', ':')))


def write_text(path, text):
    """Replace ``path`` with ``text`` at once (a temporary file renamed)."""
    directory = os.path.dirname(path)
    descriptor, temporary = tempfile.mkstemp(prefix='.tmp-', dir=directory)
    try:
        with os.fdopen(descriptor, 'w') as output:
            output.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def read_json(path):
    """The data in ``path``, or None if it is gone or unreadable."""
    try:
        with open(path) as source:
            return json.load(source)
    except (OSError, ValueError):
        return None


def merge(snapshots):
    """Merge process snapshots into one of the same shape."""
    if not snapshots:
        return empty_snapshot()
    first = snapshots[0]
    result = empty_snapshot(first['step'], first['bounds'])
    steps = {}
    for snapshot in snapshots:
        result['processes'] += 1
        result['threads'] += snapshot['threads']
        closed = snapshot['closed_until']
        if result['closed_until'] is None or closed < result['closed_until']:
            result['closed_until'] = closed
        merge_totals(result['totals'], snapshot['totals'])
        for step in snapshot['steps']:
            target = steps.get(step['start'])
            if target is None:
                steps[step['start']] = copy_step(step)
            else:
                merge_step(target, step)
    result['steps'] = [steps[start] for start in sorted(steps)]
    return result


def merge_totals(target, totals):
    for name, view in totals.items():
        into = target.get(name)
        if into is None:
            target[name] = json.loads(json.dumps(view))
            continue
        for code, count in view['statuses'].items():
            into['statuses'][code] = into['statuses'].get(code, 0) + count
        for key in ('bytes', 'blocks', 'retries', 'duration'):
            into[key] += view[key]
        into['buckets'] = [mine + theirs for mine, theirs in
                           zip(into['buckets'], view['buckets'])]
        cache = into.setdefault('cache', {})
        for event, count in view.get('cache', {}).items():
            cache[event] = cache.get(event, 0) + count


def copy_step(step):
    return json.loads(json.dumps(step))


def merge_step(target, step):
    for key in ('busy', 'capacity', 'server_busy', 'server_capacity'):
        target[key] += step[key]
    for name, view in step['views'].items():
        into = target['views'].get(name)
        if into is None:
            target['views'][name] = copy_step(view)
            continue
        for key, value in view.items():
            if key == 'latency':
                merge_counts(into['latency'], value)
            else:       # a key an older process lacked counts as 0
                into[key] = into.get(key, 0) + value


def group_directory(state_dir):
    """(state directory, parent pid or None): the setting, or under
    mod_wsgi one directory per process group and run of the server, in
    the server's run directory (``$ZOPE_PIPELINE_RUN_DIR``, else the
    temporary directory)."""
    if state_dir:
        return state_dir, None
    module = modwsgi_server.server_module()
    if module is None:
        return None, None
    parent = os.getppid()
    group = '%s-%d' % (getattr(module, 'process_group', '') or 'embedded',
                       parent)
    digest = hashlib.sha1(group.encode('utf-8')).hexdigest()[:12]
    base = os.environ.get(RUN_DIR_VARIABLE) or tempfile.gettempdir()
    return os.path.join(base, 'zope.pipeline-metrics-%d-%s'
                        % (os.getuid(), digest)), parent


def group_state(directory, parent):
    """The GroupState of ``directory``; a directory another user prepared
    (or a link) stops the startup, naming the setting."""
    try:
        return GroupState(directory, parent)
    except UnsafePathError as error:
        raise ConfigurationError(
            'The metrics state directory is not private: %s  (It is '
            'metrics.state_dir, or made under $%s or the temporary '
            'directory under mod_wsgi.)' % (error, RUN_DIR_VARIABLE)) \
            from None
