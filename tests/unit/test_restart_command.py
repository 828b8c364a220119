"""zope.pipeline.stages.readiness and `zope-pipeline restart`, on fake daemon
processes: children of this test process named as mod_wsgi names its
daemon processes, and a thread playing Apache's parent, which starts a
successor when one ends and has it mark the site loaded.  (The real
thing, under load: tests/integration/test_restart_under_load.py.)"""

import os
import subprocess
import threading

import pytest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.serving import rolling
from zope.pipeline.serving import startup
from zope.pipeline.stages import readiness


class FakeApache:
    """Daemon processes of groups {name: count}; when one ends, a
    successor starts and (after ``mark``) writes its readiness marker
    with the state ``successor_state``."""

    def __init__(self, run_dir, groups, successor_state=readiness.SERVING,
                 mark=True):
        self.run_dir = run_dir
        self.successor_state = successor_state
        self.mark = mark
        self.lock = threading.Lock()
        self.processes = []
        self.threads = []
        for name, count in groups.items():
            for _ in range(count):
                self.start(name)

    def start(self, name):
        process = subprocess.Popen([name, '60'], executable='sleep')
        with self.lock:
            self.processes.append(process)
        thread = threading.Thread(target=self.watch, args=(name, process),
                                  daemon=True)
        self.threads.append(thread)
        thread.start()
        return process

    def watch(self, name, process):
        process.wait()
        if self.stopped:
            return
        successor = self.start(name)
        if self.mark:
            readiness.mark_loaded(startup.state_of(self.application()),
                                  self.run_dir, successor.pid)

    def application(self):
        if self.successor_state == readiness.UNAVAILABLE:
            return startup.Unavailable('broken')
        return object()

    stopped = False

    def stop(self):
        self.stopped = True
        with self.lock:
            processes = list(self.processes)
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait(10)
        for thread in self.threads:
            thread.join(10)


@pytest.fixture
def server(tmp_path):
    """A server root whose pid file names this process."""
    root = tmp_path / 'apache'
    root.mkdir()
    (root / 'httpd.pid').write_text('%d\n' % os.getpid())
    (root / 'run').mkdir(mode=0o700)
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    return {'ini': str(ini), 'root': str(root), 'run': str(root / 'run')}


@pytest.fixture
def apache(server):
    made = []

    def make(groups, **options):
        fake = FakeApache(server['run'], groups, **options)
        made.append(fake)
        return fake
    yield make
    for fake in made:
        fake.stop()


def restart_command(server, *options):
    return zope_pipeline(['restart', server['ini'], '--server-root',
                          server['root']] + list(options))


def test_each_daemon_process_is_replaced_one_at_a_time(
        server, apache, capsys):
    fake = apache({'(wsgi:site)': 2, '(wsgi:admin)': 1})
    before = [process.pid for process in fake.processes]
    assert rolling.daemon_processes(os.getpid()) == before
    assert restart_command(server, '--timeout', '20') == 0
    out = capsys.readouterr().out
    # In the order they started, each after its predecessor's successor.
    assert [int(line.split()[2]) for line in out.splitlines()] == before
    after = rolling.daemon_processes(os.getpid())
    assert len(after) == 3
    assert not set(before) & set(after)
    # The predecessors' markers are gone, the successors' say serving.
    markers = os.listdir(os.path.join(server['run'], 'ready'))
    assert sorted(markers) == sorted(str(pid) for pid in after)
    for pid in after:
        assert readiness.loaded_state(server['run'], pid) == 'serving'


def test_a_successor_that_cannot_serve_stops_the_restart(server, apache):
    fake = apache({'(wsgi:site)': 2},
                  successor_state=readiness.UNAVAILABLE)
    first, second = [process.pid for process in fake.processes]
    with pytest.raises(SystemExit, match=r'cannot serve \(unavailable\): '
                                         r'the restart stops here'):
        restart_command(server, '--timeout', '20')
    # The second process was not asked to restart.
    left = rolling.daemon_processes(os.getpid())
    assert second in left
    assert first not in left


def test_a_restart_leaving_rotation_is_out_of_it_throughout(
        server, apache, monkeypatch, capsys):
    apache({'(wsgi:site)': 2})
    asked = []
    ask = rolling.ask_to_restart

    def recording(pid):
        asked.append(readiness.is_out_of_rotation(server['run']))
        ask(pid)
    monkeypatch.setattr(rolling, 'ask_to_restart', recording)
    assert restart_command(server, '--timeout', '20',
                           '--leave-rotation', '0.01') == 0
    assert asked == [True, True]
    assert not readiness.is_out_of_rotation(server['run'])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'Out of rotation: waiting 0.01 s for the balancer.'
    assert out[-1] == 'Back in rotation: waiting 0.01 s for the balancer.'


def test_a_restart_that_stops_puts_the_server_back_in_rotation(server,
                                                               apache):
    apache({'(wsgi:site)': 1}, successor_state=readiness.UNAVAILABLE)
    with pytest.raises(SystemExit, match='the restart stops here'):
        restart_command(server, '--timeout', '20', '--leave-rotation',
                        '0.01')
    assert not readiness.is_out_of_rotation(server['run'])


def test_out_of_rotation_is_one_file_in_the_run_directory(tmp_path,
                                                          monkeypatch):
    monkeypatch.delenv(RUN_DIR_VARIABLE, raising=False)
    assert not readiness.is_out_of_rotation()
    assert not readiness.is_out_of_rotation(str(tmp_path))
    readiness.leave_rotation(str(tmp_path))
    assert os.listdir(tmp_path) == ['out-of-rotation']
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(tmp_path))
    assert readiness.is_out_of_rotation()
    readiness.join_rotation(str(tmp_path))
    assert not readiness.is_out_of_rotation()


def test_out_of_rotation_is_never_written_through_a_link(tmp_path):
    target = tmp_path / 'elsewhere'
    (tmp_path / 'out-of-rotation').symlink_to(target)
    with pytest.raises(OSError):
        readiness.leave_rotation(str(tmp_path))
    assert not target.exists()


def test_a_successor_that_never_loads_the_site_is_named(server, apache):
    apache({'(wsgi:site)': 1}, mark=False)
    with pytest.raises(SystemExit, match='did not load the site within '
                                         '0.5 s'):
        restart_command(server, '--timeout', '0.5')


def test_no_successor_is_named(server, apache):
    fake = apache({'(wsgi:site)': 1})
    fake.stopped = True    # Apache starts no successor
    with pytest.raises(SystemExit, match='Apache started no daemon process '
                                         'within 0.5 s'):
        restart_command(server, '--timeout', '0.5')


def test_a_process_that_does_not_end_is_named(server, apache, monkeypatch):
    apache({'(wsgi:site)': 1})
    monkeypatch.setattr(rolling, 'ask_to_restart', lambda pid: None)
    with pytest.raises(SystemExit, match='did not end within 0.2 s'):
        restart_command(server, '--timeout', '0.2', '--drain', '0')


def test_a_restarting_process_has_the_longest_request_to_end(
        server, apache, monkeypatch):
    """A process asked to restart finishes its requests in flight first
    (issue 45): the wait for its end is --drain (by default the longest
    request of the shipped administrative group) + --timeout."""
    from zope.pipeline.commands import serve
    from zope.pipeline.serving.modwsgi_express import drain_seconds
    assert rolling.DRAIN == drain_seconds(serve.DEFAULT_ADMIN_REQUEST_TIMEOUT,
                                          serve.DEFAULT_ADMIN_THREADS)
    apache({'(wsgi:site)': 1})
    monkeypatch.setattr(rolling, 'ask_to_restart', lambda pid: None)
    waits = []
    monkeypatch.setattr(rolling, 'wait_for', fail_waiting(waits))
    with pytest.raises(SystemExit):
        restart_command(server, '--timeout', '3')
    assert waits == [rolling.DRAIN + 3]
    waits.clear()
    with pytest.raises(SystemExit):
        restart_command(server, '--timeout', '3', '--drain', '150')
    assert waits == [153]


def fail_waiting(waits):
    def wait_for(value, timeout, message):
        waits.append(timeout)
        raise rolling.RestartError(message)
    return wait_for


def test_a_server_without_daemon_processes_is_refused(server):
    with pytest.raises(SystemExit, match='has no mod_wsgi daemon processes'):
        restart_command(server)


def test_a_missing_or_stale_pid_file_is_refused(server, tmp_path):
    with pytest.raises(SystemExit, match='Cannot read the pid'):
        restart_command(server, '--pid-file', str(tmp_path / 'none.pid'))
    ended = subprocess.Popen(['true'])
    ended.wait()
    stale = tmp_path / 'stale.pid'
    stale.write_text('%d\n' % ended.pid)
    with pytest.raises(SystemExit, match='is not running'):
        restart_command(server, '--pid-file', str(stale))


def test_the_default_server_root_comes_from_the_ini_port(tmp_path):
    etc = tmp_path / 'etc'
    etc.mkdir()
    ini = etc / 'site.ini'
    ini.write_text('[server:main]\nport = 8765\n')
    with pytest.raises(SystemExit) as raised:
        zope_pipeline(['restart', str(ini)])
    assert str(tmp_path / 'var' / 'mod_wsgi-8765' / 'httpd.pid') in str(
        raised.value)


# -- readiness markers


def test_a_marker_holds_the_state_and_the_process_start(tmp_path):
    run_dir = str(tmp_path / 'run')
    path = readiness.mark_loaded(readiness.SERVING, run_dir)
    assert path == readiness.marker_path(run_dir, os.getpid())
    assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == '0o700'
    assert readiness.loaded_state(run_dir, os.getpid()) == 'serving'
    readiness.forget(run_dir, os.getpid())
    readiness.forget(run_dir, os.getpid())
    assert readiness.loaded_state(run_dir, os.getpid()) is None


def test_the_states_of_what_load_site_returns():
    assert startup.state_of(startup.Unavailable('x')) == 'unavailable'
    opening = startup.OpeningDatabases(object(), [], str)
    assert startup.state_of(opening) == 'database-closed'
    assert startup.state_of(object()) == 'serving'


def test_a_former_process_marker_is_not_taken_for_this_one(tmp_path):
    run_dir = str(tmp_path / 'run')
    path = readiness.mark_loaded(readiness.SERVING, run_dir)
    with open(path, 'w') as stream:
        stream.write('serving 1\n')
    assert readiness.loaded_state(run_dir, os.getpid()) is None
    assert readiness.process_start_time(2 ** 22 + 1) is None


def test_without_a_run_directory_nothing_is_marked(monkeypatch):
    monkeypatch.delenv(RUN_DIR_VARIABLE, raising=False)
    assert readiness.mark_loaded(readiness.SERVING) is None


def test_load_site_marks_the_process(tmp_path, monkeypatch, clean_zope):
    run_dir = tmp_path / 'run'
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(run_dir))
    ini = tmp_path / 'broken.ini'
    ini.write_text('[app:main]\nuse = egg:no.such.egg#main\n')
    startup._sites.clear()
    try:
        startup.load_site(str(ini))
    finally:
        startup._sites.clear()
    assert readiness.loaded_state(str(run_dir), os.getpid()) == \
        'unavailable'


def test_a_marker_that_cannot_be_written_is_logged(tmp_path, caplog):
    blocked = tmp_path / 'run'
    blocked.write_text('a file, not a directory')
    assert readiness.mark_loaded(readiness.SERVING, str(blocked)) is None
    assert 'Cannot write the readiness marker' in caplog.text



# -- a touch of the WSGI script: zope.pipeline.serving.rolling


def test_a_roll_restarts_the_older_processes_then_its_own(server, apache):
    fake = apache({'(wsgi:site)': 3})
    me, first, second = [process.pid for process in fake.processes]
    restarted = rolling.roll(server['run'], 1.0, pid=me,
                             parent=os.getpid(), timeout=20, drain=0)
    assert restarted == [first, second, me]
    # "me" ends on its SIGUSR1 and is replaced too.
    rolling.wait_for(lambda: me not in rolling.daemon_processes(os.getpid())
                     and len(rolling.daemon_processes(os.getpid())) == 3,
                     10, 'no successor of %d' % me)
    left = rolling.daemon_processes(os.getpid())
    assert first not in left and second not in left
    assert len(rolling._locks) == 1    # held until this process ends
    rolling._locks.pop().close()


def test_a_roll_that_failed_is_not_tried_again_for_the_same_touch(
        server, apache, caplog):
    fake = apache({'(wsgi:site)': 3},
                  successor_state=readiness.UNAVAILABLE)
    me, first, second = [process.pid for process in fake.processes]
    assert rolling.roll(server['run'], 1.0, pid=me, parent=os.getpid(),
                        timeout=20) == []
    assert 'Rolling restart stopped' in caplog.text
    # Another process noticing the same touch does nothing.
    assert rolling.roll(server['run'], 1.0, pid=second,
                        parent=os.getpid(), timeout=20) == []
    assert second in rolling.daemon_processes(os.getpid())
    assert me in rolling.daemon_processes(os.getpid())


class Rolled(Exception):
    pass


def test_the_watcher_rolls_when_the_script_changes(tmp_path, monkeypatch):
    script = tmp_path / 'app.wsgi'
    script.write_text('')
    rolls = []

    def roll(run_dir, touched, drain):
        rolls.append((run_dir, touched, drain))
        raise Rolled
    monkeypatch.setattr(rolling, 'roll', roll)
    baseline = rolling.modification_time(str(script))
    os.utime(script, (1, 1))
    with pytest.raises(Rolled):
        rolling.watch(str(script), baseline, 'run', interval=0.01,
                      drain=150)
    assert rolls == [('run', 1.0, 150)]
    assert rolling.modification_time(str(tmp_path / 'none')) is None
    assert rolling.read_text(str(tmp_path / 'none')) is None


def test_the_watcher_runs_only_in_a_mod_wsgi_daemon(tmp_path, monkeypatch):
    import sys
    import types
    script = tmp_path / 'app.wsgi'
    script.write_text('')
    monkeypatch.setitem(sys.modules, 'mod_wsgi', None)
    assert rolling.watch_script(str(script), str(tmp_path)) is None
    monkeypatch.delenv(RUN_DIR_VARIABLE, raising=False)
    module = types.ModuleType('mod_wsgi')
    module.request_metrics = lambda: {}
    monkeypatch.setitem(sys.modules, 'mod_wsgi', module)
    assert rolling.watch_script(str(script)) is None
    watched = []
    monkeypatch.setattr(rolling, 'watch', lambda *args: watched.append(
        args))
    thread = rolling.watch_script(str(script), str(tmp_path))
    thread.join(10)
    assert watched == [(str(script), rolling.modification_time(
        str(script)), str(tmp_path), rolling.WATCH_INTERVAL, rolling.DRAIN)]


def test_a_run_directory_that_is_not_there_is_named(server, apache,
                                                    tmp_path):
    apache({'(wsgi:site)': 1})
    with pytest.raises(SystemExit, match="Cannot take the rolling "
                                         "restarts' lock in"):
        restart_command(server, '--run-dir', str(tmp_path / 'nowhere'))


def test_the_lock_file_belongs_to_the_run_directory_owner(server):
    lock = rolling.take_turn(server['run'])
    lock.close()
    path = os.path.join(server['run'], rolling.LOCK_NAME)
    assert os.stat(path).st_uid == os.stat(server['run']).st_uid
    assert oct(os.stat(path).st_mode & 0o777) == '0o600'


@pytest.mark.parametrize('error', [
    PermissionError('no lock for you'),
    rolling.UnsafePathError('no lock for you')])
def test_a_roll_that_cannot_start_is_logged_and_watched_again(
        tmp_path, monkeypatch, caplog, error):
    script = tmp_path / 'app.wsgi'
    script.write_text('')
    attempts = []

    def roll(run_dir, touched, drain):
        attempts.append(touched)
        if len(attempts) == 1:
            raise error
        raise Rolled
    monkeypatch.setattr(rolling, 'roll', roll)
    baseline = rolling.modification_time(str(script))
    os.utime(script, (1, 1))

    def touch_again():
        import time
        time.sleep(0.2)
        os.utime(script, (2, 2))
    threading.Thread(target=touch_again).start()
    with pytest.raises(Rolled):
        rolling.watch(str(script), baseline, 'run', interval=0.01)
    assert attempts == [1.0, 2.0]
    assert 'Rolling restart impossible: no lock for you' in caplog.text


def test_a_lock_that_is_a_hard_link_stops_the_restart_with_its_reason(
        tmp_path):
    from zope.pipeline.commands import restart
    run_dir = tmp_path / 'run'
    run_dir.mkdir(mode=0o700)
    (tmp_path / 'other').write_text('')
    os.link(tmp_path / 'other', run_dir / rolling.LOCK_NAME)
    with pytest.raises(rolling.RestartError, match='not a file of its own'):
        restart.take_turn_in(str(run_dir))

