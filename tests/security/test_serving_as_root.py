"""`zope-pipeline serve` started by root (as `make serve` does): the daemon
user (www-data) gets its own data directories and nothing root reads or
runs; waitress becomes that user once it has bound its socket; var/ and
the database files are private.

Run as root (CI is root): each attack is replayed as www-data, in a child
process that has dropped to it.
"""

import contextlib
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import time

import pytest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import serve

from tests.conftest import ROOT
from tests.conftest import need
from tests.integration import support

PORT = 8931


@pytest.fixture
def www_data():
    need(os.geteuid() == 0, 'serving as root needs root')
    return pwd.getpwnam('www-data')


@pytest.fixture
def project():
    """A checkout: etc/ as shipped and the empty var/ git keeps, in a
    directory every user may pass through."""
    with support.scratch_directory() as directory:
        shutil.copytree(os.path.join(ROOT, 'etc'),
                        os.path.join(directory, 'etc'))
        os.mkdir(os.path.join(directory, 'var'))
        yield directory


def serve_mod_wsgi(project):
    """serve etc/deploy.ini --mod-wsgi as root; then the files
    mod_wsgi-express writes in the server root (as root) at its start."""
    ini = os.path.join(project, 'etc', 'deploy.ini')
    assert zope_pipeline(['serve', ini, '--mod-wsgi', '--port',
                          str(PORT)]) == 0
    server_root = os.path.join(project, 'var', 'mod_wsgi-%d' % PORT)
    for name in ('apachectl', 'envvars', 'httpd.conf'):
        with open(os.path.join(server_root, name), 'a'):
            pass
    return server_root


def as_www_data(attempts):
    """Run each ``(name, function)`` of ``attempts`` as www-data in a
    child process; the names of those that succeeded."""
    entry = pwd.getpwnam('www-data')
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(reader)
        succeeded = []
        try:
            os.setgroups([entry.pw_gid])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
            for name, attempt in attempts:
                try:
                    attempt()
                except OSError:
                    continue
                succeeded.append(name)
        finally:
            os.write(writer, json.dumps(succeeded).encode())
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as stream:
        text = stream.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def plant_attempts(server_root):
    """What www-data would do to make root run its code: write the
    envvars that apachectl sources, or put a server root of its own in
    place of root's."""
    envvars = os.path.join(server_root, 'envvars')
    var = os.path.dirname(server_root)

    def write_envvars():
        with open(envvars, 'a') as stream:
            stream.write('touch /tmp/pwned-by-www-data\n')

    def replace_envvars():
        os.rename(envvars, envvars + '.old')

    def replace_server_root():
        os.rename(server_root, os.path.join(var, 'moved-away'))

    def add_to_var():
        os.mkdir(os.path.join(var, 'planted'))

    return [('write envvars', write_envvars),
            ('replace envvars', replace_envvars),
            ('replace the server root', replace_server_root),
            ('add to var/', add_to_var)]


def test_daemon_user_cannot_plant_envvars_run_by_root(
        clean_zope, www_data, project, exec_calls):
    server_root = serve_mod_wsgi(project)
    [command] = exec_calls
    assert command[command.index('--user') + 1] == 'www-data'
    assert as_www_data(plant_attempts(server_root)) == []
    # What is www-data's: the database directory, the daemons' run/.
    assert os.stat(os.path.join(project, 'var', 'data')).st_uid == \
        www_data.pw_uid
    assert os.stat(os.path.join(server_root, 'run')).st_uid == \
        www_data.pw_uid
    assert os.stat(os.path.join(project, 'var')).st_uid == 0


def give_tree(path, entry):
    for parent, _directories, files in os.walk(path):
        os.chown(parent, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(parent, name), entry.pw_uid, entry.pw_gid)


def test_a_var_an_older_serve_gave_to_www_data_is_taken_back(
        clean_zope, www_data, project, exec_calls, capsys):
    server_root = os.path.join(project, 'var', 'mod_wsgi-%d' % PORT)
    os.mkdir(server_root)
    with open(os.path.join(server_root, 'envvars'), 'w') as stream:
        stream.write('touch /tmp/pwned-by-www-data\n')
    give_tree(os.path.join(project, 'var'), www_data)
    serve_mod_wsgi(project)
    output = capsys.readouterr().out
    assert 'taken back by root' in output
    assert 'made again' in output
    with open(os.path.join(server_root, 'envvars')) as stream:
        assert 'pwned' not in stream.read()
    assert as_www_data(plant_attempts(server_root)) == []


def test_a_database_left_in_var_by_an_older_layout_is_named(
        clean_zope, project, exec_calls, monkeypatch):
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    open(os.path.join(project, 'var', 'main.sqlite3'), 'w').close()
    with pytest.raises(SystemExit) as raised:
        serve_mod_wsgi(project)
    assert 'mkdir -m 0700 %s/var/data && mv %s/var/*.sqlite3*' % (
        project, project) in str(raised.value)
    assert exec_calls == []


def test_a_storage_holding_what_root_runs_is_refused(
        clean_zope, www_data, project, exec_calls):
    """A ZConfig that still keeps SQLite in var/ itself: giving var/ to
    www-data would give it the server root."""
    zconfig = os.path.join(project, 'etc', 'zodb-sqlite.conf')
    with open(zconfig) as stream:
        text = stream.read()
    with open(zconfig, 'w') as stream:
        stream.write(text.replace('$here/../var/data', '$here/../var'))
    with pytest.raises(SystemExit) as raised:
        serve_mod_wsgi(project)
    assert 'The storage directory %s/var is given to www-data, but root ' \
        'reads or runs' % project in str(raised.value)
    assert exec_calls == []
    assert os.stat(os.path.join(project, 'var')).st_uid == 0


# -- waitress run as root


def proc_ids(pid, field):
    """The real, effective, saved and file-system ids of a process."""
    with open('/proc/%d/status' % pid) as stream:
        for line in stream:
            if line.startswith(field + ':'):
                return [int(value) for value in line.split()[1:]]
    raise AssertionError('no %s in /proc/%d/status' % (field, pid))


@pytest.fixture(scope='module')
def waitress_as_root():
    """etc/deploy.ini served by waitress, started by root, in a project
    whose var/ and database an older version left open (0755, 0644); the
    server's process, stopped at the end."""
    need(os.geteuid() == 0, 'serving as root needs root')
    with support.scratch_directory() as directory:
        shutil.copytree(os.path.join(ROOT, 'etc'),
                        os.path.join(directory, 'etc'))
        data = os.path.join(directory, 'var', 'data')
        os.makedirs(data)
        os.chmod(os.path.join(directory, 'var'), 0o755)
        open(os.path.join(data, 'main.sqlite3'), 'w').close()
        os.chmod(os.path.join(data, 'main.sqlite3'), 0o644)
        port = support.free_port()
        with running([support.ZOPE_PIPELINE, 'serve',
                      os.path.join(directory, 'etc', 'deploy.ini'),
                      '--port', str(port)], port) as process:
            yield directory, process


@contextlib.contextmanager
def running(command, port, timeout=60):
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               start_new_session=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert process.poll() is None, process.stdout.read()
            assert time.monotonic() < deadline, 'the server did not start'
            try:
                if support.request(port, support.PAGE)[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        process.stdout.close()


def test_waitress_as_root_drops_privileges(waitress_as_root):
    _directory, process = waitress_as_root
    www_data = pwd.getpwnam('www-data')
    assert proc_ids(process.pid, 'Uid') == [www_data.pw_uid] * 4
    assert proc_ids(process.pid, 'Gid') == [www_data.pw_gid] * 4
    with open('/proc/%d/status' % process.pid) as stream:
        groups = [line for line in stream if line.startswith('Groups:')]
    assert groups == ['Groups:\t%d \n' % www_data.pw_gid]


def test_var_and_database_files_are_private(waitress_as_root):
    directory, _process = waitress_as_root
    var = os.path.join(directory, 'var')
    info = os.stat(var)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o750)
    data = os.path.join(var, 'data')
    assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
    names = sorted(os.listdir(data))
    assert 'main.sqlite3' in names and 'oids.sqlite3' in names
    modes = {name: stat.S_IMODE(os.stat(os.path.join(data, name)).st_mode)
             for name in names}
    assert modes == dict.fromkeys(names, 0o600)
