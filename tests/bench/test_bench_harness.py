"""A whole (tiny) benchmark run, the start-up measurements, and the
commands that drive them."""

import dataclasses
import json
import os
import subprocess

import pytest
from conftest import need

from benchmarks import cli
from benchmarks import harness
from benchmarks import sites
from benchmarks import startup
from benchmarks.servers import ServerConfig
from benchmarks.workspace import Workspace
from benchmarks.workspace import server_user
from tests.conftest import ROOT

TINY = dataclasses.replace(
    harness.QUICK, mode='test', configs=[ServerConfig('waitress', 1, 2)],
    storages=['sqlite'], requests=20, repeats=2, warmup=5,
    inprocess_iterations=1, inprocess_batches=1, startup_repeats=1,
    write_config=ServerConfig('waitress', 1, 2), write_requests=20,
    write_repeats=1, parts=('imports', 'inprocess', 'http', 'write'),
    wrk_repeats=1, wrk_duration_s=1)


def script_for(workspace, site):
    """Script-text factories of the site on SQLite, as the harness makes."""
    tiny = harness.Harness(TINY, site, workspace.path)
    tiny.workspace = workspace
    return lambda label: tiny.app_script('sqlite', label)


@pytest.mark.integration
def test_a_tiny_run_measures_verifies_and_compares_with_the_ceiling(
        tmp_path):
    site = sites.minimal_site()
    lines = []
    results = harness.Harness(TINY, site, str(tmp_path),
                              log=lines.append).run()
    http = results['http']
    assert [(m['config'], m['storage'], m['load'])
            for m in http['measurements']] == [
        ('waitress 1x2', 'sqlite', '-c 8'),
        ('waitress 1x2', 'sqlite', 'wrk -c 8'),
        ('waitress 1x2', 'ceiling', '-c 8'),
        ('waitress 1x2', 'ceiling', 'wrk -c 8')]
    assert all(m['summary']['verified'] for m in http['measurements']), [
        m['summary']['problems'] for m in http['measurements']]
    assert http['page_bytes'] > 400
    assert set(http['server_commands']) == {'waitress'}
    write = results['write']['measurements'][0]
    assert write['summary']['verified']
    assert write['completed'] == 20
    assert write['retries_per_1000'] == write['retries'] * 50.0
    assert results['inprocess']['profile'] == os.path.relpath(
        str(tmp_path / 'profile.txt'), ROOT)
    assert results['imports']['modules'] > 100
    assert results['site']['name'] == 'minimal'
    assert '== http' in lines


def test_a_site_without_comments_form_skips_the_write_path(tmp_path):
    site = dataclasses.replace(sites.minimal_site(), comments=None)
    plan = dataclasses.replace(TINY, parts=('write',))
    results = harness.Harness(plan, site, str(tmp_path),
                              log=lambda line: None).run()
    assert results['write'] == {
        'skipped': '%s declares no comments form (COMMENTS_FORM)'
                   % site.description}


def test_a_failing_in_process_benchmark_stops_the_run(tmp_path):
    site = dataclasses.replace(sites.minimal_site(), page_path='/nowhere')
    plan = dataclasses.replace(TINY, parts=('inprocess',))
    with pytest.raises(RuntimeError, match='answered 404'):
        harness.Harness(plan, site, str(tmp_path), log=lambda line: None).run()


def test_the_plans_loads_and_description():
    assert [load.label for load in harness.FULL.loads()] == [
        '-c 1', '-c 1 -k', '-c 8', '-c 8 -k']
    described = harness.FULL.describe()
    assert described['configs'] == ['waitress 1x4', 'mod_wsgi 1x4',
                                    'mod_wsgi 2x1', 'mod_wsgi 4x1',
                                    'mod_wsgi 2x2', 'paste 1x10']
    assert described['write_config'] == 'mod_wsgi 2x2'


def test_a_waitress_process_is_timed_from_start_to_first_response():
    site = sites.minimal_site()
    with Workspace() as workspace:
        start = startup.waitress_start(
            workspace, 'start', script_for(workspace, site)('start'),
            site.page_path)
    assert 0 < start['load_s'] <= start['first_response_s']
    assert start['server_start_s'] > 0


def mod_wsgi_usable():
    try:
        cli.check_mod_wsgi()
    except SystemExit:
        return False
    return True


@pytest.mark.integration
def test_mod_wsgi_daemon_restarts_are_timed_to_their_first_response():
    need(mod_wsgi_usable(), 'mod_wsgi-express cannot serve here')
    site = sites.minimal_site()
    with Workspace() as workspace:
        result = startup.measure(workspace, script_for(workspace, site),
                                 site.page_path, repeats=1,
                                 log=lambda line: None)
    for daemon in (result['mod_wsgi'], result['mod_wsgi_compiling']):
        assert 0 < daemon['load_s'] <= daemon['first_response_s']
    assert result['waitress']['first_response_s'] > 0
    assert result['repeats'] == 1


def test_a_restart_without_the_compiled_templates_removes_only_them(
        tmp_path):
    server = type('Server', (), {'root': str(tmp_path)})()
    startup.forget_compiled_templates(server)  # no run directory yet
    compiled = tmp_path / 'run' / 'templates-33'
    compiled.mkdir(parents=True)
    (compiled / 'page.py').write_text('')
    (tmp_path / 'run' / 'zope.pipeline-metrics-33-abc').mkdir()
    startup.forget_compiled_templates(server)
    assert [path.name for path in (tmp_path / 'run').iterdir()] == [
        'zope.pipeline-metrics-33-abc']


def test_an_unknown_server_answer_during_start_up_is_an_error():
    class Answering:
        config = ServerConfig('waitress', 1, 1)

        def check_alive(self):
            pass

        def url(self, path):
            return 'http://127.0.0.1:9/'

        def log_tail(self):
            return 'the log'

    with pytest.raises(TimeoutError, match='did not answer'):
        startup.first_ok(Answering(), '/', timeout=0.05)


# -- the command


parse = cli.parse_args


def test_options_change_the_plan():
    plan = cli.make_plan(parse('--quick', '--configs', 'mod_wsgi:4x1',
                               '--storages', 'sqlite', '--concurrency', '1,8',
                               '--keep-alive', 'both', '--requests', '50',
                               '--only', 'http,write'))
    assert plan.mode == 'quick'
    assert plan.configs == [ServerConfig('mod_wsgi', 4, 1)]
    assert plan.storages == ['sqlite']
    assert [load.label for load in plan.loads()] == [
        '-c 1', '-c 1 -k', '-c 8', '-c 8 -k']
    assert plan.requests == 50
    assert plan.parts == ('http', 'write')
    assert cli.make_plan(parse()).mode == 'full'


def test_unknown_parts_are_refused():
    with pytest.raises(SystemExit, match='Unknown parts nap'):
        cli.make_plan(parse('--only', 'http,nap'))


def test_quick_and_full_runs_write_to_their_own_places():
    assert cli.output_paths(parse('--quick')) == (
        os.path.join(cli.RESULTS_DIR, 'quick'),
        os.path.join(cli.RESULTS_DIR, 'quick', 'RESULTS.md'))
    assert cli.output_paths(parse()) == (cli.RESULTS_DIR, cli.RESULTS_MD)
    assert cli.output_paths(parse('--output-dir', '/o', '--results-md',
                                  '/r.md')) == ('/o', '/r.md')


def saved_results():
    from .test_bench_report import results
    return results()


def test_a_saved_run_is_rendered_again_with_its_charts(tmp_path):
    need(_matplotlib(), 'matplotlib (the bench extra) is not installed')
    saved = tmp_path / 'saved.json'
    saved.write_text(json.dumps(saved_results()))
    lines = []
    assert cli.run(parse('--render', str(saved), '--output-dir',
                         str(tmp_path / 'out')), log=lines.append) == 0
    markdown = (tmp_path / 'out' / 'RESULTS.md').read_text()
    assert '![Requests per second](requests-per-second.png)' in markdown
    assert '![Latency percentiles](latency.png)' in markdown
    for name in ('requests-per-second.png', 'latency.png'):
        assert (tmp_path / 'out' / name).read_bytes()[:4] == b'\x89PNG'
    assert json.loads((tmp_path / 'out' / 'results.json').read_text())[
        'mode'] == 'quick'
    assert lines[0].startswith('== Requests per second and latency')


def _matplotlib():
    try:
        import matplotlib  # noqa: F401 - whether it imports
    except ImportError:
        return False
    return True


def test_charts_are_skipped_for_loads_that_were_not_measured(tmp_path):
    need(_matplotlib(), 'matplotlib (the bench extra) is not installed')
    from benchmarks import charts
    data = saved_results()
    assert charts.requests_chart(data['http']['measurements'], str(tmp_path),
                                 load='-c 1') is None
    assert charts.latency_chart(data['http']['measurements'], str(tmp_path),
                                load='-c 1') is None
    del data['http']
    assert charts.draw(data, str(tmp_path)) == []


def test_a_measuring_run_records_its_command(tmp_path, monkeypatch):
    def fake_run(self):
        return {'mode': self.plan.mode, 'plan': self.plan.describe()}

    monkeypatch.setattr(harness.Harness, 'run', fake_run)
    monkeypatch.setattr(cli, 'write_outputs', lambda *args: [])
    monkeypatch.setattr(cli.report, 'render_console', lambda results: '')
    argv = ['--quick', '--only', 'imports', '--output-dir', str(tmp_path)]
    assert cli.run(parse(*argv), argv, log=lambda line: None) == 0
    assert cli.command_line(argv) == (
        'python -m benchmarks --quick --only imports --output-dir %s'
        % tmp_path)


def test_the_machine_checks_pass_here_or_say_what_is_missing(monkeypatch):
    cli.check_ab()
    monkeypatch.setattr(cli.shutil, 'which', lambda name: None)
    with pytest.raises(SystemExit, match='apache2-utils'):
        cli.check_ab()


def test_a_missing_mod_wsgi_express_is_reported(monkeypatch):
    monkeypatch.setattr(cli, 'MOD_WSGI_EXPRESS', '/nonexistent/mod_wsgi')
    with pytest.raises(SystemExit, match='mod_wsgi-express is not installed'):
        cli.check_mod_wsgi()


def test_a_server_user_who_cannot_run_python_is_reported(monkeypatch):
    monkeypatch.setattr(cli, 'server_user', lambda: ('nobody', 'nogroup'))
    monkeypatch.setattr(cli.subprocess, 'run', lambda *a, **k: (
        subprocess.CompletedProcess(a, 1, '', 'Permission denied')))
    with pytest.raises(SystemExit, match='chmod o\\+x /root'):
        cli.check_mod_wsgi()


def test_an_unreachable_mysql_is_reported(monkeypatch):
    from benchmarks import environment
    monkeypatch.setattr(environment, 'mariadb_version', lambda: None)
    with pytest.raises(SystemExit, match='--storages sqlite'):
        cli.check_mysql()


def test_the_checks_follow_the_plan(monkeypatch):
    called = []
    for name in ('check_ab', 'check_mod_wsgi', 'check_mysql'):
        monkeypatch.setattr(cli, name,
                            lambda name=name: called.append(name))
    cli.check_machine(dataclasses.replace(TINY, parts=('imports',)))
    assert called == []
    cli.check_machine(harness.QUICK)
    assert called == ['check_ab', 'check_mod_wsgi', 'check_mysql']


def test_the_server_user_is_apaches_when_running_as_root():
    user = server_user()
    if os.geteuid() == 0:
        assert user[0] == 'www-data'
    else:
        assert user is None


def test_the_machine_and_versions_are_described():
    from benchmarks import environment
    machine = environment.machine()
    assert machine['cpus'] == os.cpu_count()
    versions = environment.versions()
    assert versions['zope.pipeline']
    assert environment.distribution_version('no-such-dist') is None
    assert environment.first_line(['/nonexistent/tool']) is None
    assert environment.version_in('Server version: Apache/2.4.1 (Debian)',
                                  r'Apache/(\S+)') == '2.4.1'
    assert environment.version_in('odd', r'Apache/(\S+)') == 'odd'


class FakeServer:
    config = ServerConfig('mod_wsgi', 1, 1)

    def __init__(self, count_dir, status=None):
        self.count_dir = count_dir
        self.status = status

    def check_alive(self):
        pass

    def url(self, path):
        return self.status

    def log_tail(self):
        return 'the log'


def test_no_new_process_within_the_timeout_is_an_error(tmp_path):
    with pytest.raises(TimeoutError, match='loaded no new process'):
        startup.wait_for_new_process(FakeServer(str(tmp_path)), (),
                                     timeout=0.02)


def test_an_error_answer_during_start_up_stops_the_measure(monkeypatch,
                                                          tmp_path):
    monkeypatch.setattr(startup, 'fetch', lambda url, timeout: (404, b''))
    with pytest.raises(RuntimeError, match='answered 404 for /p'):
        startup.first_ok(FakeServer(str(tmp_path)), '/p')


def test_a_process_that_does_not_exit_is_an_error():
    with pytest.raises(TimeoutError, match='did not exit'):
        startup.wait_until_gone(os.getpid(), timeout=0.02)


def test_without_server_user_mod_wsgi_needs_no_permission_check(
        monkeypatch):
    monkeypatch.setattr(cli, 'server_user', lambda: None)
    monkeypatch.setattr(cli.subprocess, 'run', None)  # must not be called
    cli.check_mod_wsgi()


def test_the_command_line_entry_renders_a_saved_run(tmp_path, capsys):
    need(_matplotlib(), 'matplotlib (the bench extra) is not installed')
    saved = tmp_path / 'saved.json'
    saved.write_text(json.dumps(saved_results()))
    assert cli.main(['--render', str(saved), '--output-dir',
                     str(tmp_path)]) == 0
    assert 'Wrote %s' % (tmp_path / 'RESULTS.md') in capsys.readouterr().out


def test_storages_must_be_known_and_given():
    for wrong in ('oracle', 'sqlite,oracle', ','):
        with pytest.raises(SystemExit, match='--storages takes one or more'):
            cli.make_plan(parse('--storages', wrong))
