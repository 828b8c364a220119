"""readiness: whether this process serves, told to the rolling restarts
and to a balancer.  One home for both: the serving layer (startup,
rolling, `zope-pipeline restart`) writes and reads the markers, the
stage answers from the same states.

**Markers for the rolling restarts.**  ``load_site`` calls
``mark_loaded`` once the site is loaded (or known not to load):
``<run dir>/ready/<pid>`` then holds the process's start time (so a
marker a former process of the same pid left is never taken for this
one's) and its state, which `zope-pipeline restart` waits for before it
restarts the next daemon process:

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

**The balancer's answer.**  The ``readiness`` stage, an outer stage
before ``virtual_host``, answers a GET or HEAD of ``readiness.path``
(``/_ready``) whatever the Host, from whatever client, without
credentials, uncounted by the ``metrics`` stage
(``zope.pipeline.unmetered``): a status and one word (``ready``, ``not
ready``), no version, no reason, nothing from the database.  200 while
this process serves; 503 (with Retry-After) while

- the server is out of the balancer's rotation (``draining``): the file
  ``<run dir>/out-of-rotation`` exists (`zope-pipeline restart
  --leave-rotation` makes it before a rolling restart and removes it
  after; an operator may ``touch`` it), so the balancer stops sending
  requests before the processes restart or stop;
- a database of this process was closed (the process is stopping), or is
  not open and does not open now (its server cannot be reached, a wrong
  password): the attempt is the one the next request would make, and
  costs nothing once the database is open.

What never reaches the stage answers 503 as every request does (a site
that did not load, a database that refused to open at the start:
zope.pipeline.serving.startup); a process still loading the site answers
nothing yet, which a health check counts as a failure too.
"""

import logging
import os

from zope.configuration.exceptions import ConfigurationError
from zope.interface import Interface
from zope.schema import ASCIILine

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import private_directory
from zope.pipeline.zodb.storage import process_databases

logger = logging.getLogger('zope.pipeline.stages.readiness')

#: The directory of the markers, in the run directory.
READY_DIRECTORY = 'ready'
SERVING = 'serving'
UNAVAILABLE = 'unavailable'
DATABASE_CLOSED = 'database-closed'
DRAINING = 'draining'
#: While this file exists in the run directory, the server's processes
#: answer the balancer 503 (``draining``).
OUT_OF_ROTATION = 'out-of-rotation'


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


# -- out of the balancer's rotation


def out_of_rotation_path(run_dir):
    return os.path.join(run_dir, OUT_OF_ROTATION)


def is_out_of_rotation(run_dir=None):
    """Whether the server of ``run_dir`` (default: this process's) is
    taken out of the balancer's rotation (one stat)."""
    run_dir = run_dir or os.environ.get(RUN_DIR_VARIABLE)
    return bool(run_dir) and os.path.exists(out_of_rotation_path(run_dir))


def leave_rotation(run_dir):
    """Take the server of ``run_dir`` out of the balancer's rotation."""
    # Never through a link: root may run this in the daemons' directory.
    os.close(os.open(out_of_rotation_path(run_dir),
                     os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))


def join_rotation(run_dir):
    """Put it back (the balancer takes it once its checks pass)."""
    try:
        os.unlink(out_of_rotation_path(run_dir))
    except FileNotFoundError:
        pass


# -- the balancer's answer

#: Seconds in the Retry-After of a 503: about one health check.
RETRY_AFTER = 1


class IReadinessSettings(Interface):

    path = ASCIILine(title="Path of the balancer's readiness answer",
                     default='/_ready')


def process_state():
    """This process's readiness (``zope.pipeline.stages.readiness``'s
    states)."""
    if is_out_of_rotation():
        return DRAINING
    for database in process_databases():
        if database.closed:
            return DATABASE_CLOSED
        if not database.is_open():
            try:
                database.get()
            except Exception:
                # Said in the log by the requests that need it.
                return DATABASE_CLOSED
    return SERVING


class ReadinessStage:
    """Answer the balancer's health check at ``path``."""

    settings_schema = IReadinessSettings
    contract = Contract(writes=(keys.UNMETERED,))

    def __init__(self, next_app, path='/_ready', build=None):
        if not path.startswith('/'):
            raise ConfigurationError(
                "readiness.path must start with '/': %r" % path)
        self.next_app = next_app
        self.path = path

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO') != self.path or \
                environ.get('REQUEST_METHOD') not in ('GET', 'HEAD'):
            return self.next_app(environ, start_response)
        environ[keys.UNMETERED] = True
        if process_state() == SERVING:
            body = plain_response(start_response, '200 OK', 'ready\n',
                                  [('Cache-Control', 'no-store')])
        else:
            body = plain_response(
                start_response, '503 Service Unavailable', 'not ready\n',
                [('Cache-Control', 'no-store'),
                 ('Retry-After', str(RETRY_AFTER))])
        return [] if environ['REQUEST_METHOD'] == 'HEAD' else body
