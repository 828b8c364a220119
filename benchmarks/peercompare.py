"""The peers comparison: the same page served by the plain-WSGI ceiling
and the apps of ``benchmarks.peers`` under one server configuration, and
the servers comparison (``--paste``: apps under paste.httpserver and
mod_wsgi), measured round by round, interleaved.

For each storage every app gets its own fresh database, populated by a
first start of the app alone (``python -m benchmarks.peers populate``);
then the apps' servers run side by side, each page is fetched and checked
(the title and the ten items), each app is warmed up, and every round
measures each load on each app in turn (the order rotates by one app per
round), every ab run verified against the server's own count.
"""

import contextlib
import datetime
import os
import subprocess
import sys

from benchmarks import peers
from benchmarks.loadgen import Load
from benchmarks.loadgen import measure_once
from benchmarks.loadgen import warm_up
from benchmarks.peers import page
from benchmarks.scripts import PROJECT_ROOT
from benchmarks.scripts import ceiling_body_script
from benchmarks.scripts import peer_script
from benchmarks.servers import fetch
from benchmarks.servers import serving
from benchmarks.stats import measurement_dict
from benchmarks.stats import summarize

#: ab -n for each -c when the plan does not say: the issue's 2000 at -c 8
#: and 1000 at -c 1.
DEFAULT_REQUESTS = {8: 2000, 1: 1000}


class PageMismatch(RuntimeError):
    """An app's answer is not the page."""


def peer_loads(concurrencies, requests=None):
    """ab loads, in order: ``requests`` each, or the default per -c."""
    return [Load(requests or DEFAULT_REQUESTS.get(concurrency, 1000),
                 concurrency) for concurrency in concurrencies]


def rotated(items, by):
    """``items`` starting at index ``by`` (modulo), wrapping around."""
    items = list(items)
    if not items:
        return items
    by %= len(items)
    return items[by:] + items[:by]


def populate(peer, zodb_config, workdir):
    """The peer's first start, alone: its content is in the database
    before the server's processes start together."""
    command = [sys.executable, '-m', 'benchmarks.peers', 'populate',
               peer.base_name, zodb_config, workdir]
    root = peer.checkout or PROJECT_ROOT
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + ([os.path.join(root, 'src')] if peer.checkout else [])))
    completed = subprocess.run(command, capture_output=True, text=True,
                               cwd=root, env=env)
    if completed.returncode:
        raise RuntimeError('Populating the %s peer failed:\n%s' % (
            peer.name, completed.stderr[-3000:]))


def check_page(name, server):
    """The size of the page app ``name`` serves; PageMismatch unless it is
    the page with a 200."""
    status, body = fetch(server.url(page.PAGE_PATH))
    problems = page.page_problems(body)
    if status != 200:
        problems.insert(0, 'status %s' % status)
    if problems:
        raise PageMismatch('%s does not serve the page: %s' % (
            name, '; '.join(problems)))
    return len(body)


class PeersComparison:
    """One interleaved comparison; ``run()`` returns the JSON-ready dict.

    Every app of ``apps`` (default: the plan's ``peer_apps``) is served
    under every server configuration of ``configs`` (default: the plan's
    ``peer_config``), each pair a server of its own on a database of its
    own; every round measures each pair in turn."""

    def __init__(self, plan, workspace, storage_for, log=print, apps=None,
                 configs=None):
        self.plan = plan
        self.workspace = workspace
        #: storage_for(storage name, key) -> a storage object.
        self.storage_for = storage_for
        self.log = log
        self.apps = [peers.resolve(name)
                     for name in (apps or plan.peer_apps)]
        self.configs = list(configs or [plan.peer_config])
        #: (app, config) in the order of the first round.
        self.entries = [(app, config) for config in self.configs
                        for app in self.apps]

    def key(self, app, config):
        """How a pair is named in logs and labels: the app's name, with
        its server configuration when there are several."""
        if len(self.configs) == 1:
            return app.name
        return '%s@%s' % (app.name, config.slug)

    def run(self):
        started = datetime.datetime.now().astimezone()
        data = {'date': started.isoformat(timespec='seconds'),
                'config': ', '.join(config.label for config in self.configs),
                'configs': [config.label for config in self.configs],
                'path': page.PAGE_PATH, 'rounds': self.plan.peer_rounds,
                'warmup': self.plan.peer_warmup,
                'apps': [{'name': app.name, 'label': app.describe()}
                         for app in self.apps],
                'page_bytes': {}, 'measurements': [],
                'server_commands': {},
                'load_average': {'before': os.getloadavg()}}
        for storage_name in self.plan.storages:
            self.log('  %s on %s' % (
                'peers' if len(self.configs) == 1 else 'servers',
                storage_name))
            self.measure_storage(storage_name, data)
        data['load_average']['after'] = os.getloadavg()
        return data

    def script_for(self, app, storage_name, key):
        """A script-text factory for ``app`` on a fresh database."""
        if app is peers.CEILING:
            body = page.expected_body()
            return lambda count_dir, log_dir: ceiling_body_script(
                body, count_dir, log_dir)
        label = 'peer-%s-%s' % (key, storage_name)
        storage = self.storage_for(storage_name, key)
        zodb_config = storage.setup(self.workspace, label)
        workdir = self.workspace.directory(label + '-work')
        populate(app, zodb_config, workdir)
        return lambda count_dir, log_dir: peer_script(
            app.base_name, zodb_config, workdir, count_dir, log_dir,
            app.checkout)

    def measure_storage(self, storage_name, data):
        with contextlib.ExitStack() as stack:
            servers = {}
            for app, config in self.entries:
                key = self.key(app, config)
                script = self.script_for(app, storage_name, key)
                servers[key] = stack.enter_context(serving(
                    config, self.workspace,
                    'peer-%s-%s-server' % (key, storage_name), script,
                    page.PAGE_PATH))
                command = servers[key].command_line()
                data.setdefault('server_command', command)
                data['server_commands'].setdefault(config.server, command)
            data['page_bytes'][storage_name] = {
                key: check_page(key, server)
                for key, server in servers.items()}
            for server in servers.values():
                warm_up(server, page.PAGE_PATH, self.plan.peer_warmup, 8)
            runs = self.rounds(servers)
        for (app, config, load), pair_runs in runs.items():
            data['measurements'].append(self.measurement(
                app.name, config, storage_name, load, pair_runs))

    def rounds(self, servers):
        """{(app, config, load): [Run per round]}, interleaved."""
        loads = peer_loads(self.plan.peer_concurrencies,
                           self.plan.peer_requests)
        runs = {(app, config, load): [] for load in loads
                for app, config in self.entries}
        for number in range(self.plan.peer_rounds):
            for load in loads:
                for app, config in rotated(self.entries, number):
                    key = self.key(app, config)
                    run = measure_once(servers[key], page.PAGE_PATH, load)
                    runs[app, config, load].append(run)
                    self.log('    round %d %s %s: %s req/s, %s' % (
                        number + 1, key, load.label,
                        '%.0f' % run.result.requests_per_second
                        if run.result else '-',
                        run.verification.describe()))
        return runs

    def measurement(self, app_name, config, storage_name, load, runs):
        data = measurement_dict(config, storage_name, load, runs,
                                summarize(runs))
        data['app'] = app_name
        return data
