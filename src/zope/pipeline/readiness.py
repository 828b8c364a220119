"""Whether a server process has loaded its site: a marker file per process
in the server's run directory, which `zope-pipeline restart` waits for
before it restarts the next daemon process.

``load_site`` calls ``mark_loaded`` once the site is loaded (or known not
to load): ``<run dir>/ready/<pid>`` then holds the process's start time
(so a marker a former process of the same pid left is never taken for
this one's) and its state:

``serving``
    the site is loaded and its databases are open;
``unavailable``
    it cannot serve (a broken ini or ZCML, too many threads, a known
    password beyond loopback): every request gets 503 until the fix and a
    restart;
``database-closed``
    a database refused to open: requests get 503 and try again.

Outside a server with a run directory (``ZOPE_PIPELINE_RUN_DIR`` unset),
nothing is written.
"""

import logging
import os

from zope.pipeline.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.privatefiles import UnsafePathError
from zope.pipeline.privatefiles import private_directory

logger = logging.getLogger('zope.pipeline.readiness')

#: The directory of the markers, in the run directory.
READY_DIRECTORY = 'ready'
SERVING = 'serving'
UNAVAILABLE = 'unavailable'
DATABASE_CLOSED = 'database-closed'


def marker_path(run_dir, pid):
    return os.path.join(run_dir, READY_DIRECTORY, str(pid))


def process_start_time(pid):
    """The start time of process ``pid`` in clock ticks since boot
    (/proc/PID/stat field 22), or None when there is no such process."""
    try:
        with open('/proc/%d/stat' % pid) as stream:
            text = stream.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    return int(text.rsplit(')', 1)[1].split()[19])


def mark_loaded(state, run_dir=None, pid=None):
    """Write this process's marker holding ``state`` (see the module's
    docstring); return its path, or None outside a server with a run
    directory.  A marker that cannot be written is logged, never raised:
    the process serves all the same."""
    run_dir = run_dir or os.environ.get(RUN_DIR_VARIABLE)
    if not run_dir:
        return None
    pid = pid or os.getpid()
    path = marker_path(run_dir, pid)
    try:
        private_directory(os.path.dirname(path), parents=True)
        temporary = '%s.tmp' % path
        with open(temporary, 'w') as stream:
            stream.write('%s %s\n' % (state, process_start_time(pid)))
        os.replace(temporary, path)
    except (OSError, UnsafePathError) as error:
        logger.warning('Cannot write the readiness marker %s: %s', path,
                       error)
        return None
    return path


def loaded_state(run_dir, pid):
    """The state process ``pid`` marked, or None while it has not (or the
    marker is a former process's)."""
    try:
        with open(marker_path(run_dir, pid)) as stream:
            state, start_time = stream.read().split()
    except (OSError, ValueError):
        return None
    if start_time != str(process_start_time(pid)):
        return None
    return state


def forget(run_dir, pid):
    """Remove the marker of a process that has ended."""
    try:
        os.unlink(marker_path(run_dir, pid))
    except FileNotFoundError:
        pass
