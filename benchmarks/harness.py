"""One benchmark run: what to measure (a Plan) and the measuring, in order.

The HTTP matrix runs, for each server configuration, the site on each
storage and then the plain-WSGI ceiling with a body of the page's size,
so a configuration's figures and its ceiling are measured close in time.
The peers comparison (``benchmarks.peercompare``) serves one page with
the ceiling and each app of ``benchmarks.peers``, interleaved round by
round.
The result is a JSON-ready dict that ``benchmarks.report`` renders.
"""

import compileall
import dataclasses
import datetime
import functools
import json
import os
import subprocess
import sys
import time

from benchmarks import environment
from benchmarks import imports
from benchmarks import peercompare
from benchmarks import startup
from benchmarks import writepath
from benchmarks import wrk
from benchmarks.loadgen import Load
from benchmarks.loadgen import measure
from benchmarks.scripts import PROJECT_ROOT
from benchmarks.scripts import bench_ini
from benchmarks.scripts import ceiling_script
from benchmarks.scripts import pipeline_script
from benchmarks.scripts import write_principals
from benchmarks.servers import ServerConfig
from benchmarks.servers import fetch
from benchmarks.servers import serving
from benchmarks.stats import measurement_dict
from benchmarks.storages import make_storage
from benchmarks.workspace import Workspace

PARTS = ('imports', 'inprocess', 'http', 'peers', 'paste', 'startup',
         'write')

#: The ceiling's row in the matrix, beside the storages.
CEILING = 'ceiling'

#: The ab concurrency at which wrk runs too, with as many connections.
WRK_CONNECTIONS = 8


@dataclasses.dataclass
class Plan:
    mode: str
    configs: list
    storages: list
    concurrencies: list
    keep_alive: list
    requests: int
    repeats: int
    warmup: int
    inprocess_iterations: int
    inprocess_batches: int
    startup_repeats: int
    write_config: ServerConfig
    write_requests: int
    write_repeats: int
    parts: tuple = PARTS
    #: wrk beside ab at -c 8: runs per measurement (0: no wrk), seconds each.
    wrk_repeats: int = 3
    wrk_duration_s: int = 5
    #: The peers comparison: its server configuration, apps (names in
    #: benchmarks.peers), ab -c values, -n (None: the default per -c),
    #: rounds and warm-up requests per app.
    peer_config: ServerConfig = ServerConfig('mod_wsgi', 2, 1)
    peer_apps: tuple = ('ceiling', 'pyramid', 'pyramid-acl', 'zope',
                        'classic', 'pipeline', 'pipeline-checked')
    peer_concurrencies: tuple = (8, 1)
    peer_requests: int = None
    peer_rounds: int = 5
    peer_warmup: int = 300
    #: The servers comparison (``--paste``): these apps under each of
    #: these configurations (paste.httpserver's default pool of 10 threads
    #: against one single-threaded mod_wsgi process per core), with the
    #: peers' loads, rounds and warm-up.
    paste_configs: tuple = (ServerConfig('paste', 1, 10),
                            ServerConfig('mod_wsgi', 2, 1))
    paste_apps: tuple = ('classic', 'pipeline')
    #: Principals in the site's principals file (``--principals``): a
    #: worker's start must not depend on them.
    principals: int = 0

    def loads(self):
        return [Load(self.requests, concurrency, keep_alive)
                for concurrency in self.concurrencies
                for keep_alive in self.keep_alive]

    def describe(self):
        data = dataclasses.asdict(self)
        data['configs'] = [config.label for config in self.configs]
        data['write_config'] = self.write_config.label
        data['peer_config'] = self.peer_config.label
        data['paste_configs'] = [config.label
                                 for config in self.paste_configs]
        return data


QUICK = Plan(
    mode='quick',
    configs=[ServerConfig('waitress', 1, 4), ServerConfig('mod_wsgi', 2, 1)],
    storages=['sqlite', 'mysql'], concurrencies=[8], keep_alive=[False],
    requests=500, repeats=3, warmup=200,
    inprocess_iterations=60, inprocess_batches=7, startup_repeats=2,
    write_config=ServerConfig('mod_wsgi', 2, 2), write_requests=300,
    write_repeats=3, wrk_repeats=1,
    parts=tuple(part for part in PARTS if part not in ('peers', 'paste')))

#: ``--peers`` (and ``--paste``): the comparisons alone, as issues 13 and
#: 34 measure them.
PEERS = Plan(
    mode='peers', configs=[], storages=['sqlite', 'mysql'],
    concurrencies=[], keep_alive=[False], requests=0, repeats=0, warmup=0,
    inprocess_iterations=0, inprocess_batches=0, startup_repeats=0,
    write_config=ServerConfig('mod_wsgi', 2, 2), write_requests=0,
    write_repeats=0, parts=('peers',))

FULL = Plan(
    mode='full',
    configs=[ServerConfig('waitress', 1, 4), ServerConfig('mod_wsgi', 1, 4),
             ServerConfig('mod_wsgi', 2, 1), ServerConfig('mod_wsgi', 4, 1),
             ServerConfig('mod_wsgi', 2, 2), ServerConfig('paste', 1, 10)],
    storages=['sqlite', 'mysql'], concurrencies=[1, 8],
    keep_alive=[False, True], requests=1000, repeats=3, warmup=300,
    inprocess_iterations=200, inprocess_batches=15, startup_repeats=5,
    write_config=ServerConfig('mod_wsgi', 2, 2), write_requests=1000,
    write_repeats=3)


# -- the run


def precompile_sources(root=PROJECT_ROOT):
    """Write the bytecode of the project's modules, as an installed
    package has it: the servers run with the harness's environment
    (PYTHONDONTWRITEBYTECODE may be set) or as Apache's user, who cannot
    write ``__pycache__``, so without it every worker start compiles them.
    Returns whether every file compiled."""
    return all(compileall.compile_dir(os.path.join(root, directory),
                                      quiet=1)
               for directory in ('src', 'benchmarks'))


class Harness:

    def __init__(self, plan, site, output_dir, log=print, keep=False):
        self.plan = plan
        self.site = site
        self.output_dir = output_dir
        self.log = log
        self.keep = keep
        self.storages = {}
        self.results = {}

    def run(self):
        started = time.monotonic()
        self.results.update(
            mode=self.plan.mode, plan=self.plan.describe(),
            date=datetime.datetime.now().astimezone().isoformat(
                timespec='seconds'),
            machine=environment.machine(), versions=environment.versions(),
            site={'name': self.site.name,
                  'description': self.site.description,
                  'page_path': self.site.page_path,
                  'site_zcml': os.path.relpath(self.site.site_zcml,
                                               PROJECT_ROOT)},
            load_average={'before': os.getloadavg()})
        with Workspace(keep=self.keep) as workspace:
            self.workspace = workspace
            precompile_sources()
            try:
                self.run_parts()
            finally:
                self.drop_storages()
        self.results['load_average']['after'] = os.getloadavg()
        self.results['duration_s'] = time.monotonic() - started
        return self.results

    def run_parts(self):
        for part in PARTS:
            if part in self.plan.parts:
                self.log('== %s' % part)
                self.results[part] = getattr(self, 'measure_' + part)()

    # -- storages

    def storage(self, name):
        if name not in self.storages:
            self.storages[name] = make_storage(name, self.site)
        return self.storages[name]

    def peer_storage(self, name, peer):
        """A storage of its own for a peer (a MySQL database each)."""
        key = (name, peer)
        if key not in self.storages:
            self.storages[key] = make_storage(name, self.site)
        return self.storages[key]

    def drop_storages(self):
        for storage in self.storages.values():
            storage.teardown()

    def app_script(self, storage_name, label):
        """A script-text factory for the site on a storage (fresh data),
        its ini in ``LABEL/etc/`` beside a ``LABEL/var/`` (as a project
        lays them out) with ``plan.principals`` principals there."""
        zodb_config = self.storage(storage_name).setup(self.workspace, label)
        self.workspace.directory(label, 'etc')
        var = self.workspace.directory(label, 'var')
        principals = None
        if self.plan.principals:
            principals = write_principals(
                os.path.join(var, 'principals.zcml'), self.plan.principals)
            self.workspace.give(var)
        ini = self.workspace.write(os.path.join(
            label, 'etc', '%s.ini' % label), bench_ini(
                self.site.site_zcml, self.site.settings_for(storage_name),
                zodb_config, principals))
        return lambda count_dir, log_dir: pipeline_script(ini, count_dir,
                                                          log_dir)

    # -- the parts

    def measure_imports(self):
        return imports.measure(self.site.site_zcml,
                               self.site.settings_for('sqlite'))

    def measure_inprocess(self):
        profile_path = os.path.join(self.output_dir, 'profile.txt')
        command = [sys.executable, '-m', 'benchmarks.inprocess',
                   self.site.site_zcml, '--settings',
                   json.dumps(self.site.settings_for('sqlite')),
                   '--path', self.site.page_path,
                   '--iterations', str(self.plan.inprocess_iterations),
                   '--batches', str(self.plan.inprocess_batches),
                   '--profile', profile_path]
        completed = subprocess.run(command, capture_output=True, text=True,
                                   cwd=PROJECT_ROOT)
        if completed.returncode:
            raise RuntimeError('The in-process benchmark failed:\n%s'
                               % completed.stderr[-3000:])
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        result['profile'] = os.path.relpath(profile_path, PROJECT_ROOT)
        return result

    def measure_http(self):
        measurements, commands = [], {}
        page_bytes = None
        for config in self.plan.configs:
            for storage_name in self.plan.storages:
                label = 'app-%s-%s' % (storage_name, config.slug)
                script = self.app_script(storage_name, label)
                page_bytes = self.serve_and_measure(
                    config, storage_name, label, script, measurements,
                    commands)
            script = functools.partial(ceiling_script, page_bytes)
            self.serve_and_measure(config, CEILING, 'ceiling-' + config.slug,
                                   script, measurements, commands)
        return {'page_bytes': page_bytes, 'measurements': measurements,
                'server_commands': commands}

    def serve_and_measure(self, config, storage_name, label, script,
                          measurements, commands):
        """Serve, measure every load; return the page's size in bytes."""
        path = self.site.page_path
        self.log('  %s on %s' % (config.label, storage_name))
        with serving(config, self.workspace, label, script, path) as server:
            commands.setdefault(config.server, server.command_line())
            status, body = fetch(server.url(path))
            for load in self.plan.loads():
                runs, summary = measure(server, path, load, self.plan.repeats,
                                        self.plan.warmup, log=self.log)
                measurements.append(measurement_dict(
                    config, storage_name, load, runs, summary))
            if self.plan.wrk_repeats and WRK_CONNECTIONS in \
                    self.plan.concurrencies:
                measurements.append(self.measure_wrk(server, config,
                                                     storage_name))
        return len(body)

    def measure_wrk(self, server, config, storage_name):
        """wrk at -c 8 on a served configuration, verified exactly (its
        requests written and responses received against the server's
        count)."""
        load = wrk.WrkLoad(WRK_CONNECTIONS, self.plan.wrk_duration_s)
        runs, summary = wrk.measure(server, self.site.page_path,
                                    load.connections, load.duration_s,
                                    self.plan.wrk_repeats, log=self.log)
        data = measurement_dict(config, storage_name, load, runs, summary)
        data['tool'] = 'wrk'
        return wrk.record_accounting(data, runs)

    def measure_peers(self):
        return peercompare.PeersComparison(
            self.plan, self.workspace, self.peer_storage, self.log).run()

    def measure_paste(self):
        return peercompare.PeersComparison(
            self.plan, self.workspace, self.peer_storage, self.log,
            apps=self.plan.paste_apps,
            configs=self.plan.paste_configs).run()

    def measure_startup(self):
        return startup.measure(
            self.workspace,
            lambda label: self.app_script('sqlite', label + '-sqlite'),
            self.site.page_path, self.plan.startup_repeats, self.log)

    def measure_write(self):
        form = self.site.comments
        if form is None:
            return {'skipped': '%s declares no comments form (COMMENTS_FORM)'
                               % self.site.description}
        body_file = writepath.post_body_file(self.workspace, form)
        load = Load(self.plan.write_requests, 8)
        config = self.plan.write_config
        measurements = []
        for storage_name in self.plan.storages:
            label = 'write-%s-%s' % (storage_name, config.slug)
            script = self.app_script(storage_name, label)
            self.log('  %s on %s: POST %s' % (config.label, storage_name,
                                              form.path))
            with serving(config, self.workspace, label, script,
                         self.site.page_path) as server:
                runs, summary, retries = writepath.measure_writes(
                    server, form, load, self.plan.write_repeats,
                    min(self.plan.warmup, 100), body_file, self.log)
            data = measurement_dict(config, storage_name, load, runs,
                                    summary)
            data.update(retries)
            data['retries_per_1000'] = writepath.retries_per_thousand(
                retries['retries'], retries['completed'])
            measurements.append(data)
        return {'path': form.path, 'fields': form.fields,
                'measurements': measurements}

