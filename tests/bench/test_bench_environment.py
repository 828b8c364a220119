"""The machine description, the scratch workspace, the waitress runner and
``python -m benchmarks``."""

import os
import runpy
import sys

import pytest

from benchmarks import environment  # noqa: E402
from benchmarks import waitress_server  # noqa: E402
from benchmarks import workspace as workspace_module  # noqa: E402
from conftest import need  # noqa: E402


def _matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_cpu_memory_and_os_are_read_from_their_files(tmp_path):
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text('processor : 0\nmodel name\t: Fast CPU 3000\n')
    meminfo = tmp_path / 'meminfo'
    meminfo.write_text('MemFree: 1 kB\nMemTotal:       2097152 kB\n')
    release = tmp_path / 'os-release'
    release.write_text('NAME=x\nPRETTY_NAME="Debian GNU/Linux 12"\n')
    assert environment.cpu_model(str(cpuinfo)) == 'Fast CPU 3000'
    assert environment.memory_gib(str(meminfo)) == 2.0
    assert environment.operating_system(str(release)) == 'Debian GNU/Linux 12'


def test_missing_fields_fall_back_to_what_python_knows(tmp_path):
    empty = tmp_path / 'empty'
    empty.write_text('')
    assert environment.cpu_model(str(empty))
    assert environment.memory_gib(str(empty)) is None
    assert environment.operating_system(str(empty)) == (
        environment.platform.system())
    assert environment.operating_system(str(tmp_path / 'missing')) == (
        environment.platform.system())


def test_an_unreachable_database_has_no_version(monkeypatch):
    from benchmarks import storages
    monkeypatch.setattr(storages, 'MYSQL_ADMIN',
                        {'user': 'root', 'unix_socket': '/nonexistent.sock'})
    assert environment.mariadb_version() is None
    monkeypatch.setitem(sys.modules, 'MySQLdb', None)
    assert environment.mariadb_version() is None


def test_the_workspace_is_removed_unless_kept():
    with workspace_module.Workspace() as workspace:
        path = workspace.write('a.txt', 'text')
        assert os.stat(path).st_mode & 0o777 == 0o644
    assert not os.path.exists(workspace.path)
    kept = workspace_module.Workspace(keep=True)
    kept.remove()
    assert os.path.isdir(kept.path)
    os.rmdir(kept.path)


def test_a_workspace_belongs_to_apaches_user_only_under_root(monkeypatch):
    monkeypatch.setattr(workspace_module.os, 'geteuid', lambda: 1000)
    assert workspace_module.server_user() is None
    with workspace_module.Workspace() as workspace:
        assert workspace.user is None
        workspace.give(workspace.directory('var'))  # nothing to hand over


def test_root_without_apaches_user_cannot_run_mod_wsgi(monkeypatch):
    monkeypatch.setattr(workspace_module.os, 'geteuid', lambda: 0)
    monkeypatch.setattr(workspace_module, 'SERVER_USER', 'no-such-user-x')
    with pytest.raises(SystemExit, match="needs the 'no-such-user-x' user"):
        workspace_module.server_user()


def test_the_waitress_runner_serves_the_scripts_application(monkeypatch,
                                                            tmp_path):
    script = tmp_path / 'app.wsgi'
    script.write_text('application = "the app"\n')
    served = {}

    def serve(application, **options):
        served.update(options, application=application)
        raise KeyboardInterrupt  # how the harness stops it

    monkeypatch.setattr(waitress_server.waitress, 'serve', serve)
    assert waitress_server.main([str(script), '--port', '8123',
                                 '--threads', '3']) == 0
    assert served == {'application': 'the app', 'host': '127.0.0.1',
                      'port': 8123, 'threads': 3}


def test_python_m_benchmarks_runs_the_command(monkeypatch, tmp_path):
    import json

    from .test_bench_report import results
    need(_matplotlib(), 'matplotlib (the bench extra) is not installed')
    saved = tmp_path / 'saved.json'
    saved.write_text(json.dumps(results()))
    monkeypatch.setattr(sys, 'argv', ['benchmarks', '--render', str(saved),
                                      '--output-dir', str(tmp_path)])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module('benchmarks', run_name='__main__')
    assert exit_info.value.code == 0
    assert (tmp_path / 'RESULTS.md').exists()
