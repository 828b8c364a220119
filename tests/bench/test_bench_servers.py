"""Starting, loading and stopping the benchmarked servers; ab runs against
them, verified by the servers' own counts."""

import os
import signal
import socket
import time

import pytest

from benchmarks import loadgen
from benchmarks import servers
from benchmarks import serverside
from benchmarks.scripts import ceiling_script
from benchmarks.workspace import Workspace

WAITRESS = servers.ServerConfig('waitress', 1, 2)


def ceiling(size=200):
    return lambda count_dir, log_dir: ceiling_script(size, count_dir,
                                                      log_dir)


def broken(count_dir, log_dir):
    return 'raise ImportError("no such application")\n'


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def workspace():
    with Workspace() as workspace:
        yield workspace


def test_configurations_are_read_as_server_processes_x_threads():
    config = servers.parse_config('mod_wsgi:2x4')
    assert (config.server, config.processes, config.threads) == (
        'mod_wsgi', 2, 4)
    assert config.label == 'mod_wsgi 2x4'
    assert config.slug == 'mod_wsgi-2x4'
    assert servers.parse_config('paste:1x10') == servers.ServerConfig(
        'paste', 1, 10)
    for wrong in ('gunicorn:1x4', 'mod_wsgi:2', 'waitress:2x4',
                  'paste:2x10'):
        with pytest.raises(ValueError):
            servers.parse_config(wrong)


def test_waitress_serves_the_script_until_stopped(workspace):
    with servers.serving(WAITRESS, workspace, 'w', ceiling(), '/') as server:
        status, body = servers.fetch(server.url('/any'))
        pid = server.process.pid
        assert (status, len(body)) == (200, 200)
        assert list(server.ready_processes()) == [pid]
        assert 'benchmarks.waitress_server' in server.command_line()
    assert server.process.returncode is not None
    assert gone(pid)


def test_paste_serves_the_script_counted_until_stopped(workspace):
    """paste.httpserver's thread pool: every ab response counted by the
    server (the body is closed after the client has it), then SIGINT
    stops it."""
    config = servers.ServerConfig('paste', 1, 10)
    with servers.serving(config, workspace, 'p', ceiling(), '/') as server:
        pid = server.process.pid
        assert 'benchmarks.paste_server' in server.command_line()
        assert server.command()[-2:] == ['--threads', '10']
        runs, summary = loadgen.measure(server, '/', loadgen.Load(40, 8),
                                        repeats=2, warmup=10, log=repr)
    assert [run.served.total for run in runs] == [40, 40]
    assert summary.verified
    assert server.process.returncode == 0
    assert gone(pid)


def test_paste_stops_on_sigint_while_a_client_holds_a_connection_open(
        workspace):
    """A worker thread blocked reading a request a client began and never
    finished (Paste sets no socket timeout) does not keep the server from
    exiting on the harness's SIGINT: it exits by itself (0), not by the
    SIGKILL that follows 15 s later (-9)."""
    config = servers.ServerConfig('paste', 1, 2)
    with socket.socket() as client:
        with servers.serving(config, workspace, 'p', ceiling(), '/') as server:
            client.connect(('127.0.0.1', server.port))
            client.sendall(b'GET / HTTP/1.0\r\nHost: x\r\n')
            time.sleep(0.5)  # a worker has taken the connection
    assert server.process.returncode == 0


def test_a_server_that_cannot_load_its_script_fails_with_its_log(workspace):
    with pytest.raises(servers.ServerFailed, match='no such application'):
        with servers.serving(WAITRESS, workspace, 'b', broken, '/'):
            pass  # pragma: no cover - never reached


def test_a_server_answering_an_error_is_not_ready(workspace):
    def not_found(count_dir, log_dir):
        return ceiling_script(10, count_dir, log_dir) + (
            'application = serverside.CountingMiddleware(\n'
            '    lambda e, s: (s("404 Not Found", []), [b""])[1], %r)\n'
            % count_dir)

    with pytest.raises(servers.ServerFailed, match='answered 404'):
        with servers.serving(WAITRESS, workspace, 'n', not_found, '/'):
            pass  # pragma: no cover - never reached


def test_a_server_that_never_gets_ready_times_out_and_is_stopped(workspace):
    def hanging(count_dir, log_dir):
        return 'import time\ntime.sleep(60)\n'

    server = servers.make_server(WAITRESS, workspace, 'h', hanging)
    server.start()
    try:
        with pytest.raises(servers.ServerFailed, match='not ready within'):
            server.wait_ready('/', timeout=0.3)
    finally:
        server.stop(timeout=5)
    assert gone(server.process.pid)


def test_a_measurement_is_warmed_up_repeated_and_verified(workspace):
    with servers.serving(WAITRESS, workspace, 'm', ceiling(), '/') as server:
        lines = []
        runs, summary = loadgen.measure(server, '/', loadgen.Load(30, 2),
                                        repeats=2, warmup=10,
                                        log=lines.append)
        assert serverside.total_counts(server.count_dir).total == 71
    assert [run.verification.valid for run in runs] == [True, True]
    assert [run.served.total for run in runs] == [30, 30]
    assert summary.verified and summary.runs == 2
    assert runs[0].command.startswith('ab -n 30 -c 2 -r http://127.0.0.1:')
    assert len(lines) == 2 and lines[0].endswith('verified')


def test_requests_that_never_reach_the_application_are_caught(workspace):
    """A second server answers on another port: ab's requests all complete,
    but the counted server saw none, so the run is invalid."""
    with servers.serving(WAITRESS, workspace, 'a', ceiling(), '/') as first:
        with servers.serving(WAITRESS, workspace, 'o', ceiling(),
                             '/') as other:
            first.port, other_port = other.port, first.port
            run = loadgen.measure_once(first, '/', loadgen.Load(10, 2))
            first.port = other_port
    assert run.result.complete == 10
    assert not run.verification.valid
    assert run.verification.problems == [
        'the server counted 0 responses, ab 10']


def test_an_ab_run_against_nothing_is_invalid(workspace):
    server = servers.make_server(WAITRESS, workspace, 'x', ceiling())
    run = loadgen.measure_once(server, '/', loadgen.Load(5, 1))
    assert not run.verification.valid


def test_ab_commands_for_keep_alive_posts_and_variable_lengths():
    command = loadgen.ab_command('http://h/p', loadgen.Load(10, 8, True),
                                 '/tmp/p.csv', loadgen.Post('/tmp/b'), True)
    assert command == ['ab', '-n', '10', '-c', '8', '-r', '-k', '-e',
                       '/tmp/p.csv', '-p', '/tmp/b', '-T',
                       'application/x-www-form-urlencoded', '-l',
                       'http://h/p']
    assert loadgen.shown(command) == (
        'ab -n 10 -c 8 -r -k -p /tmp/b -T application/x-www-form-urlencoded '
        '-l http://h/p')
    assert loadgen.Load(10, 8, True).label == '-c 8 -k'


def test_no_warm_up_sends_nothing():
    assert loadgen.warm_up(None, '/', 0, 8) is None


def test_warm_up_returns_once_the_server_counted_every_response(workspace):
    # Otherwise the last warm-up responses, counted just after ab has
    # them, would land in the first measured run and spoil its count.
    with servers.serving(WAITRESS, workspace, 'w', ceiling(), '/') as server:
        before = serverside.total_counts(server.count_dir)
        result = loadgen.warm_up(server, '/', 200, 8)
        counted = serverside.total_counts(server.count_dir) - before
        run = loadgen.measure_once(server, '/', loadgen.Load(100, 8))
    assert result.complete == 200
    assert counted.total == 200
    assert run.verification.valid


def test_a_server_ignoring_its_stop_signal_is_killed(workspace):
    def stubborn(count_dir, log_dir):
        return ('import signal\nsignal.signal(signal.SIGINT, '
                'signal.SIG_IGN)\n' + ceiling_script(10, count_dir, log_dir))

    with servers.serving(WAITRESS, workspace, 's', stubborn, '/') as server:
        server.stop(timeout=0.5)
        assert server.process.returncode == -9
    assert gone(server.process.pid)


def test_processes_a_server_left_behind_are_killed_with_it(workspace):
    def spawning(count_dir, log_dir):
        return ('import os, subprocess\n'
                'child = subprocess.Popen(["sleep", "60"])\n'
                'open(os.path.join(%r, "child"), "w").write(str(child.pid))\n'
                % count_dir) + ceiling_script(10, count_dir, log_dir)

    with servers.serving(WAITRESS, workspace, 'c', spawning, '/') as server:
        with open(os.path.join(server.count_dir, 'child')) as child_file:
            child = int(child_file.read())
        assert not gone(child)
    for _ in range(100):
        if gone(child):
            break
        __import__('time').sleep(0.05)
    assert gone(child)


def test_a_server_kind_must_say_how_it_starts(workspace):
    server = servers.Server(WAITRESS, 'app.wsgi', workspace.path,
                            workspace.path, workspace.path, port=1)
    with pytest.raises(NotImplementedError):
        server.command()
    server.stop()  # never started: nothing to stop


def test_mod_wsgi_is_started_as_apaches_user_with_the_app_preloaded(
        workspace):
    config = servers.ServerConfig('mod_wsgi', 2, 3)
    server = servers.make_server(config, workspace, 'm', ceiling())
    command = server.command()
    assert command[:3] == [servers.MOD_WSGI_EXPRESS, 'start-server',
                           server.script]
    assert command[command.index('--processes') + 1] == '2'
    assert command[command.index('--threads') + 1] == '3'
    assert '--locale' in command and 'C.UTF-8' in command
    if workspace.user is None:
        assert '--user' not in command
    else:
        assert command[command.index('--user') + 1] == workspace.user[0]


def test_an_ab_run_that_prints_no_summary_is_invalid_with_its_output():
    class Nowhere:
        count_dir = None
        config = WAITRESS

        def url(self, path):
            return 'http://127.0.0.1:1'  # no path: ab refuses the URL

    with Workspace() as workspace:
        Nowhere.count_dir = workspace.directory('counts')
        run = loadgen.measure_once(Nowhere(), '/', loadgen.Load(5, 1))
    assert run.result is None
    assert not run.verification.valid
    assert 'invalid URL' in run.verification.problems[-1]


@pytest.mark.parametrize('kind', ['paste', 'waitress'])
def test_threaded_server_started_with_sigint_ignored_stops_on_sigint(
        workspace, kind):
    """A background job of a non-interactive shell (CI's) starts with
    SIGINT ignored, and its children inherit that: the server still
    stops on the harness's SIGINT by itself (0), not by SIGKILL (-9)."""
    config = servers.ServerConfig(kind, 1, 2)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with servers.serving(config, workspace, kind[0], ceiling(), '/') \
                as server:
            pass
    finally:
        signal.signal(signal.SIGINT, previous)
    assert server.process.returncode == 0
