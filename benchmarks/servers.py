"""Starting and stopping the benchmarked servers.

``serving(...)`` writes the WSGI script, starts waitress or
paste.httpserver (one process, threads) or mod_wsgi-express (daemon mode,
processes x threads, the script imported in each daemon process at
start), waits until every process has
loaded the application and the page answers 200, and always stops the
server (SIGINT or SIGTERM, then SIGKILL of its process group).
"""

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from zope.pipeline.serving.modwsgi_express import run_dir_line
from zope.pipeline.serving.modwsgi_express import run_directory

from benchmarks import serverside
from benchmarks.scripts import PROJECT_ROOT

MOD_WSGI_EXPRESS = os.path.join(os.path.dirname(sys.executable),
                                'mod_wsgi-express')


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """A server and its processes x threads."""

    server: str
    processes: int
    threads: int

    @property
    def label(self):
        return '%s %dx%d' % (self.server, self.processes, self.threads)

    @property
    def slug(self):
        return '%s-%dx%d' % (self.server, self.processes, self.threads)


def parse_config(text):
    """'waitress:1x4', 'paste:1x10' or 'mod_wsgi:2x1' -> ServerConfig."""
    server, _, shape = text.partition(':')
    if server not in SERVERS or 'x' not in shape:
        raise ValueError('Server configurations look like waitress:1x4, '
                         'paste:1x10 or mod_wsgi:2x1, not %r' % text)
    processes, threads = (int(part) for part in shape.split('x'))
    if server in ONE_PROCESS and processes != 1:
        raise ValueError('%s runs one process: %r' % (server, text))
    return ServerConfig(server, processes, threads)


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class ServerFailed(RuntimeError):
    """The server did not start, or exited while it was needed."""


def fetch(url, data=None, timeout=10.0):
    """(status, body) of a request; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, data=data,
                                    timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class Server:
    """One running server; subclasses say how to start it."""

    stop_signal = signal.SIGTERM

    def __init__(self, config, script, root, count_dir, log_dir, port=None):
        self.config = config
        self.script = script
        self.root = root
        self.count_dir = count_dir
        self.log_dir = log_dir
        self.port = port or free_port()
        self.process = None
        self.started_at = None
        self._output = None

    @property
    def base_url(self):
        return 'http://127.0.0.1:%d' % self.port

    def url(self, path):
        return self.base_url + path

    def command(self):
        raise NotImplementedError

    def environment(self):
        env = dict(os.environ)
        paths = [PROJECT_ROOT] + [part for part in env.get(
            'PYTHONPATH', '').split(os.pathsep) if part]
        env['PYTHONPATH'] = os.pathsep.join(paths)
        return env

    def command_line(self):
        return ' '.join(self.command())

    def start(self):
        self._output = open(os.path.join(self.log_dir, 'server.out'), 'ab')
        self.started_at = time.time()
        self.process = subprocess.Popen(
            self.command(), stdout=self._output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=self.root,
            env=self.environment(), start_new_session=True)

    def ready_processes(self):
        return serverside.read_ready(self.count_dir)

    def check_alive(self):
        if self.process.poll() is not None:
            raise ServerFailed('%s exited with status %s:\n%s' % (
                self.config.label, self.process.returncode, self.log_tail()))

    def wait_ready(self, path, timeout=120.0, interval=0.05):
        """Wait until every process loaded the app and ``path`` is 200,
        and the server has counted that probe (it counts a response once
        the client has it: a late count would land in the next run)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            if len(self.ready_processes()) >= self.config.processes:
                before = serverside.total_counts(self.count_dir)
                status = self._probe(path)
                if status == 200:
                    serverside.wait_for_counts(self.count_dir, before, 1)
                    return
                if status is not None:
                    raise ServerFailed('%s answered %s for %s:\n%s' % (
                        self.config.label, status, path, self.log_tail()))
            time.sleep(interval)
        raise ServerFailed('%s was not ready within %ds:\n%s' % (
            self.config.label, timeout, self.log_tail()))

    def _probe(self, path):
        try:
            return fetch(self.url(path), timeout=30.0)[0]
        except (OSError, urllib.error.URLError):
            return None

    def log_tail(self, size=3000):
        parts = []
        for name in sorted(os.listdir(self.log_dir)):
            with open(os.path.join(self.log_dir, name), 'rb') as log:
                text = log.read().decode('utf-8', 'replace')
            if text.strip():
                parts.append('--- %s\n%s' % (name, text[-size:]))
        return '\n'.join(parts)

    def stop(self, timeout=15.0):
        """Stop the server: its stop signal, then SIGKILL to its group."""
        if self.process is not None and self.process.poll() is None:
            self._signal(self.stop_signal)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL, group=True)
                self.process.wait(timeout)
        self._kill_leftovers()
        if self._output is not None:
            self._output.close()
            self._output = None

    def _signal(self, number, group=False):
        try:
            if group:
                os.killpg(self.process.pid, number)
            else:
                self.process.send_signal(number)
        except ProcessLookupError:
            pass

    def _kill_leftovers(self):
        """Children of the server's session still alive (e.g. daemon
        processes of a killed Apache) get SIGKILL."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.5)
        self._signal(signal.SIGKILL, group=True)


class ThreadedServer(Server):
    """A Python server in one process with ``threads`` threads, started as
    ``python -m <module> SCRIPT --port PORT --threads N``."""

    stop_signal = signal.SIGINT
    #: The module that serves the script.
    module = None

    def command(self):
        return [sys.executable, '-m', self.module,
                self.script, '--port', str(self.port),
                '--threads', str(self.config.threads)]


class WaitressServer(ThreadedServer):
    """waitress in one process with ``threads`` threads."""

    module = 'benchmarks.waitress_server'


class PasteServer(ThreadedServer):
    """paste.httpserver in one process, its pool of ``threads`` workers."""

    module = 'benchmarks.paste_server'


class ModWsgiServer(Server):
    """mod_wsgi-express in daemon mode; the script is imported at start."""

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def command(self):
        command = [
            MOD_WSGI_EXPRESS, 'start-server', self.script,
            '--host', '127.0.0.1', '--port', str(self.port),
            '--processes', str(self.config.processes),
            '--threads', str(self.config.threads),
            '--server-root', os.path.join(self.root, 'apache'),
            '--log-directory', self.log_dir, '--startup-log',
            '--locale', 'C.UTF-8', '--python-path', PROJECT_ROOT,
            '--working-directory', self.root,
        ]
        if self.user is not None:
            command += ['--user', self.user[0], '--group', self.user[1]]
        return command


SERVERS = {'waitress': WaitressServer, 'paste': PasteServer,
           'mod_wsgi': ModWsgiServer}

#: The servers that run one process (of threads).
ONE_PROCESS = ('waitress', 'paste')


def make_server(config, workspace, name, script_text_for, port=None):
    """Write the WSGI script of a server named ``name``; return it (not yet
    started)."""
    root = workspace.directory(name)
    count_dir = workspace.directory(name, 'counts')
    log_dir = workspace.directory(name, 'logs')
    workspace.directory(name, 'apache')
    text = script_text_for(count_dir, log_dir)
    if config.server == 'mod_wsgi':
        # what the WSGI script of ``zope-pipeline serve --mod-wsgi`` sets
        # first: the daemons' private run directory (metrics, compiled
        # templates; the daemons make it at their start)
        text = 'import os\n%s\n%s' % (run_dir_line(run_directory(root)),
                                       text)
    script = workspace.write(os.path.join(name, 'app.wsgi'), text)
    kwargs = {'port': port}
    if config.server == 'mod_wsgi':
        kwargs['user'] = workspace.user
        # data a root-run waitress created must be writable by Apache's user
        workspace.give(workspace.path)
    return SERVERS[config.server](config, script, root, count_dir, log_dir,
                                  **kwargs)


@contextlib.contextmanager
def serving(config, workspace, name, script_text_for, ready_path,
            timeout=120.0):
    """Start a server, wait until it is ready, yield it, always stop it."""
    server = make_server(config, workspace, name, script_text_for)
    try:
        server.start()
        server.wait_ready(ready_path, timeout)
        yield server
    finally:
        server.stop()
