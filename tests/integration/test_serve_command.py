"""`zope-pipeline serve` without a real server: what it checks, the
mod_wsgi-express command it becomes, the WSGI script it writes, what a
daemon process does with that script, and waitress."""

import logging
import math
import os
import pwd
import re
import signal
import sys
import types

import pytest
import webtest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import serve
from zope.pipeline.serving import modwsgi_express
from zope.pipeline.serving import ownership
from zope.pipeline.serving import startup

from tests.conftest import ROOT
from tests.conftest import need
from tests.integration import support

SITE_ZCML = os.path.join(ROOT, 'etc', 'site.zcml')

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %(site_zcml)s
open_root.zodb_config = %%(here)s/zodb.conf
open_root.populate = zope.pipeline.sample.content.populate
debug_headers.enabled = true

[server:main]
use = egg:waitress#main
host = 127.0.0.2
port = 9999
threads = %(threads)d
'''

ZCONFIG = '''\
%%import relstorage
<zodb main>
  pool-size %(pool_size)d
  <relstorage>
    keep-history false
    cache-local-dir $here/var/cache
    <sqlite3>
      data-dir $here/var/data
    </sqlite3>
  </relstorage>
</zodb>
'''


@pytest.fixture
def site_dir():
    with support.scratch_directory() as directory:
        os.mkdir(os.path.join(directory, 'var'))
        yield directory


def write_site(directory, threads=4, pool_size=8, loggers=''):
    ini = os.path.join(directory, 'site.ini')
    with open(ini, 'w') as stream:
        stream.write(INI % {'site_zcml': SITE_ZCML, 'threads': threads}
                     + loggers)
    with open(os.path.join(directory, 'zodb.conf'), 'w') as stream:
        stream.write(ZCONFIG % {'pool_size': pool_size})
    return ini


@pytest.fixture
def as_user(monkeypatch):
    """Pretend not to be root (no --user, nothing chowned)."""
    monkeypatch.setattr(os, 'geteuid', lambda: 1000)


# -- checks before anything starts


def test_more_threads_than_the_pool_size_refuses_to_start(
        clean_zope, site_dir):
    ini = write_site(site_dir, threads=9, pool_size=8)
    with pytest.raises(SystemExit) as raised:
        zope_pipeline(['serve', ini])
    message = str(raised.value)
    assert '9 threads per process' in message
    assert 'pool-size of %s/zodb.conf is 8' % site_dir in message


def test_threads_flag_is_checked_against_the_pool_too(
        clean_zope, site_dir, exec_calls):
    ini = write_site(site_dir, threads=4, pool_size=8)
    with pytest.raises(SystemExit, match='12 threads per process'):
        zope_pipeline(['serve', ini, '--mod-wsgi', '--threads', '12'])
    assert exec_calls == []


def test_in_memory_database_has_zodbs_default_pool_of_seven(clean_zope):
    from zope.pipeline.app import make_app
    publisher = make_app(SITE_ZCML)
    assert serve.storage_directories(publisher) == []
    startup.check_threads(publisher, 7, 'test')
    with pytest.raises(SystemExit, match='the database in memory is 7'):
        startup.check_threads(publisher, 8, 'test')


def test_reload_under_waitress_runs_the_command_in_a_hupper_worker(
        site_dir, monkeypatch):
    import hupper
    started = []
    monkeypatch.setattr(hupper, 'is_active', lambda: False)
    monkeypatch.setattr(hupper, 'start_reloader',
                        lambda path, **options: started.append(
                            (path, options)))
    ini = write_site(site_dir)
    with pytest.raises(SystemExit) as caught:
        zope_pipeline(['serve', ini, '--reload', '--port', '8126'])
    assert caught.value.code == 0
    assert started == [('zope.pipeline.cli.main', {'worker_kwargs': {
        'argv': ['serve', ini, '--reload', '--port', '8126']}})]


class Reloader:
    def __init__(self):
        self.watched = []

    def watch_files(self, files):
        self.watched.extend(files)


def test_the_reload_worker_watches_the_files_beside_the_ini(
        clean_zope, site_dir, monkeypatch, capsys, as_user):
    import hupper
    import waitress
    reloader = Reloader()
    monkeypatch.setattr(hupper, 'is_active', lambda: True)
    monkeypatch.setattr(hupper, 'get_reloader', lambda: reloader)
    monkeypatch.setattr(waitress, 'serve', lambda app, **options: None)
    monkeypatch.setattr(signal, 'signal', lambda *args: None)
    assert zope_pipeline(['serve', write_site(site_dir), '--reload']) == 0
    assert reloader.watched[:3] == [os.path.join(site_dir, pattern)
                                    for pattern in ('*.ini', '*.zcml',
                                                    '*.conf')]
    # and every ZCML file the site's configuration read
    assert SITE_ZCML in reloader.watched
    assert 'Serving on' in capsys.readouterr().out


TOKEN_INI = '''\
metrics_endpoint.require_token = true
'''


def test_a_metrics_endpoint_without_its_token_is_said_once_by_serve(
        clean_zope, site_dir, monkeypatch, caplog, as_user):
    import waitress
    monkeypatch.setattr(waitress, 'serve', lambda app, **options: None)
    monkeypatch.setattr(signal, 'signal', lambda *args: None)
    ini = write_site(site_dir)
    with open(ini) as stream:
        text = stream.read()
    with open(ini, 'w') as stream:
        stream.write(text.replace('[server:main]',
                                  TOKEN_INI + '\n[server:main]'))
    caplog.set_level(logging.INFO)
    # another command builds the same site without a word about it
    assert zope_pipeline(['show-pipeline', ini]) == 0
    assert not [record for record in caplog.records
                if record.levelno >= logging.INFO]
    import zope.testing.cleanup
    zope.testing.cleanup.cleanUp()
    assert zope_pipeline(['serve', ini]) == 0
    said = [record for record in caplog.records
            if 'no token is set' in record.getMessage()]
    assert [record.levelno for record in said] == [logging.WARNING]
    # nor does any command say the checker workaround at INFO
    assert not [record for record in caplog.records
                if 'leak workaround' in record.getMessage()
                and record.levelno >= logging.INFO]


def test_a_database_in_memory_is_named_at_the_start(
        clean_zope, tmp_path, monkeypatch, capsys, as_user):
    import waitress
    monkeypatch.setattr(waitress, 'serve', lambda app, **options: None)
    monkeypatch.setattr(signal, 'signal', lambda *args: None)
    ini = tmp_path / 'memory.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'site_zcml = %s\n' % SITE_ZCML)
    assert zope_pipeline(['serve', str(ini)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('The database (no open_root.zodb_config) is in '
                          'memory: what the site stores is lost when the '
                          'server stops')
    assert 'Serving on' in out


def test_a_database_on_disk_is_not_called_in_memory(
        clean_zope, site_dir, monkeypatch, capsys, as_user):
    import waitress
    monkeypatch.setattr(waitress, 'serve', lambda app, **options: None)
    monkeypatch.setattr(signal, 'signal', lambda *args: None)
    assert zope_pipeline(['serve', write_site(site_dir)]) == 0
    assert 'in memory' not in capsys.readouterr().out


def test_mod_wsgi_options_need_mod_wsgi(site_dir):
    with pytest.raises(SystemExit, match='needs --mod-wsgi'):
        zope_pipeline(['serve', write_site(site_dir),
                       '--express-option=--graceful-timeout=30'])


def test_missing_ini_is_named(tmp_path):
    with pytest.raises(SystemExit, match='does not exist'):
        zope_pipeline(['serve', str(tmp_path / 'nowhere.ini')])


def test_an_ini_without_a_publisher_is_refused(tmp_path):
    ini = tmp_path / 'other.ini'
    ini.write_text('[app:main]\nuse = call:tests.integration.'
                   'test_serve_command:plain_app\n')
    with pytest.raises(SystemExit, match='builds no zope.pipeline'):
        startup.load_application(str(ini))


def plain_app(global_conf, **settings):
    return lambda environ, start_response: []


def test_server_section_gives_defaults_and_is_optional(site_dir, tmp_path):
    assert serve.server_section(write_site(site_dir))['port'] == '9999'
    bare = tmp_path / 'bare.ini'
    bare.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    assert serve.server_section(str(bare)) == {}


# -- mod_wsgi


def test_mod_wsgi_becomes_mod_wsgi_express_in_daemon_mode(
        clean_zope, site_dir, exec_calls, as_user, capsys):
    ini = write_site(site_dir)
    root = os.path.join(site_dir, 'apache')
    assert zope_pipeline(['serve', ini, '--mod-wsgi', '--processes', '3',
                          '--threads', '2', '--port', '8123',
                          '--server-root', root, '--reload',
                          '--express-option=--graceful-timeout=30']) == 0
    [command] = exec_calls
    script = os.path.join(root, 'application.wsgi')
    assert command[:3] == ['/usr/bin/mod_wsgi-express', 'start-server',
                           script]
    options = dict(zip(command[3:15:2], command[4:15:2]))
    # Apache's proxy listens on the ini's address and reads request bodies
    # whole; mod_wsgi-express's own listener is on a loopback port.
    assert options['--host'] == '127.0.0.1'
    assert options['--port'] != '8123'
    buffering = os.path.join(root, 'body-buffering.conf')
    assert '--include-file=' + buffering in command
    assert '--process-group=127.0.0.2:8123' in command
    with open(buffering) as stream:
        conf = stream.read()
    assert 'Listen 127.0.0.2:8123\n' in conf
    assert '<VirtualHost *:8123>' in conf
    assert '[P,NE,E=buffered:1]' in conf
    assert 'http://127.0.0.1:%s%%1' % options['--port'] in conf
    assert '<VirtualHost 127.0.0.1:%s>' % options['--port'] in conf
    assert options['--processes'] == '3'
    assert options['--threads'] == '2'
    assert options['--locale'] == 'C.UTF-8'
    assert options['--server-root'] == root
    assert '--user' not in command
    assert '--reload-on-changes' in command
    assert command[-1] == '--graceful-timeout=30'
    with open(script) as stream:
        text = stream.read()
    assert repr(ini) in text
    assert 'load_site(' in text
    assert 'http://127.0.0.2:8123/' in capsys.readouterr().out


def serve_options(command):
    """{--name: value} of the --name=value options of a command line
    (the last value of a repeated one)."""
    return dict(option[2:].split('=', 1) for option in command
                if option.startswith('--') and '=' in option)


def include_files(command):
    return [option.split('=', 1)[1] for option in command
            if option.startswith('--include-file=')]


def test_without_body_buffering_mod_wsgi_express_listens_itself(
        clean_zope, site_dir, exec_calls, as_user):
    root = os.path.join(site_dir, 'apache')
    zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                   '--port', '8127', '--server-root', root,
                   '--no-buffer-bodies'])
    [command] = exec_calls
    assert command[command.index('--host') + 1] == '127.0.0.2'
    assert command[command.index('--port') + 1] == '8127'
    assert os.path.join(root, 'body-buffering.conf') not in \
        include_files(command)
    assert not any(option.startswith('--process-group')
                   for option in command)


@pytest.mark.parametrize('option, workers', [
    ([], modwsgi_express.APACHE_WORKERS), (['--apache-workers', '50'], 50)])
def test_apache_workers_and_read_timeouts_bound_slow_clients(
        clean_zope, site_dir, exec_calls, as_user, option, workers):
    root = os.path.join(site_dir, 'apache')
    zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                   '--server-root', root] + option)
    [command] = exec_calls
    default = serve_options(command)
    assert default['max-clients'] == str(workers)
    assert default['header-timeout'] == '10'
    assert default['header-max-timeout'] == '20'
    assert default['header-min-rate'] == '500'
    assert default['body-timeout'] == '15'
    assert default['body-min-rate'] == '500'


def test_admin_urls_get_their_own_daemon_group_by_default(
        clean_zope, site_dir, exec_calls, as_user, capsys):
    ini = write_site(site_dir)
    root = os.path.join(site_dir, 'apache')
    assert zope_pipeline(['serve', ini, '--mod-wsgi', '--port', '8126',
                          '--server-root', root]) == 0
    [command] = exec_calls
    include = os.path.join(root, 'admin.conf')
    options = serve_options(command)
    assert include in include_files(command)
    # The site's group: 4 threads, 60 s (its limit 60 x (1 + ln 4) = 143.2
    # s), Apache gives up 2 s after the limit rounded up.
    assert options['request-timeout'] == '60'
    assert options['interrupt-timeout'] == '5'
    assert options['socket-timeout'] == '146'
    # A restart lets a request run to that limit (issue 45): mod_wsgi's
    # graceful-timeout and shutdown-timeout add up to 143.2 rounded up
    # + 1 + 5 s.
    assert options['graceful-timeout'] == '65'
    assert options['shutdown-timeout'] == '85'
    with open(os.path.join(root, 'application.wsgi')) as stream:
        script = stream.read()
    assert 'watch_script(__file__, drain=1022)' in script
    # No memory bound, no periodic restart unless asked for.
    assert 'limit_memory' not in script
    assert 'restart-interval' not in options
    with open(include) as stream:
        conf = stream.read()
    assert 'WSGIDaemonProcess zope-pipeline-admin' in conf
    assert 'processes=1 ' in conf and 'threads=2 ' in conf
    # 600 x (1 + ln 2) = 1015.9 s
    assert 'request-timeout=600 ' in conf
    assert 'socket-timeout=1018 ' in conf
    assert 'graceful-timeout=605 ' in conf
    assert 'shutdown-timeout=417 ' in conf
    assert "WSGIImportScript '%s/handler.wsgi'" % root in conf
    assert '<LocationMatch "%s">' % serve.DEFAULT_ADMIN_URLS in conf
    assert conf.count('process-group=zope-pipeline-admin') == 2
    assert '@@edit' in capsys.readouterr().out


def test_admin_group_options(clean_zope, site_dir, exec_calls, as_user):
    root = os.path.join(site_dir, 'apache')
    zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                   '--server-root', root, '--threads', '1',
                   '--request-timeout', '2', '--admin-urls', '/@@slow$',
                   '--admin-processes', '3', '--admin-threads', '1',
                   '--admin-request-timeout', '7'])
    [command] = exec_calls
    assert serve_options(command)['socket-timeout'] == '4'
    with open(os.path.join(root, 'admin.conf')) as stream:
        conf = stream.read()
    assert '<LocationMatch "/@@slow$">' in conf
    assert 'processes=3 ' in conf and 'threads=1 ' in conf
    assert 'request-timeout=7 ' in conf and 'socket-timeout=9 ' in conf
    # The longest request: the admin group's, 7 x (1 + ln 1) + 1 + 5.
    with open(os.path.join(root, 'application.wsgi')) as stream:
        assert 'watch_script(__file__, drain=13)' in stream.read()


def test_admin_processes_0_serves_admin_urls_in_the_site_group(
        clean_zope, site_dir, exec_calls, as_user, capsys):
    root = os.path.join(site_dir, 'apache')
    zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                   '--server-root', root, '--admin-processes', '0'])
    [command] = exec_calls
    assert include_files(command) == [
        os.path.join(root, name)
        for name in ('security.conf', 'body-buffering.conf')]
    assert not os.path.exists(os.path.join(root, 'admin.conf'))
    assert '@@edit' not in capsys.readouterr().out


def test_admin_threads_are_checked_against_the_pool_too(
        clean_zope, site_dir, exec_calls):
    ini = write_site(site_dir, threads=4, pool_size=8)
    with pytest.raises(SystemExit, match=r'9 threads per process '
                                         r'\(--admin-threads\)'):
        zope_pipeline(['serve', ini, '--mod-wsgi', '--admin-threads', '9'])
    assert exec_calls == []


def test_the_timeouts_answer_504_before_apache_and_a_restart():
    for threads in (1, 2, 4, 8):
        for request_timeout in (1, 5, 60):
            values = modwsgi_express.timeouts(request_timeout, threads)
            limit = request_timeout * (1 + math.log(threads))
            # The daemon interrupts within a monitor period of the limit,
            # before Apache's socket-timeout; Apache answers before the
            # process would be restarted for a request that ignores it.
            assert limit + modwsgi_express.MONITOR_PERIOD < \
                values['socket-timeout']
            assert values['socket-timeout'] < \
                limit + values['interrupt-timeout']


def test_a_restart_lets_every_request_in_flight_finish_within_its_limit():
    """Issue 45: a rolling restart cut two 40 s requests (502 after
    25.8 s) while the group's limit was 143 s.  mod_wsgi 6.1 waits for a
    restarting process's requests until graceful-timeout, and only for
    those that have run less than request-timeout + interrupt-timeout;
    then its threads get shutdown-timeout more.  Together, they must
    cover the longest request: its limit, the monitor's look, and the
    interrupt-timeout to unwind."""
    for threads in (1, 2, 4, 8, 16):
        for request_timeout in (1, 5, 12, 60, 600):
            values = modwsgi_express.timeouts(request_timeout, threads)
            limit = request_timeout * (1 + math.log(threads))
            longest = limit + modwsgi_express.MONITOR_PERIOD + \
                values['interrupt-timeout']
            drain = modwsgi_express.drain_seconds(request_timeout, threads)
            assert longest <= drain < longest + 1
            stale = request_timeout + values['interrupt-timeout']
            # Waiting past the point mod_wsgi stops counting a request
            # gains nothing; from there, shutdown-timeout covers the rest.
            assert values['graceful-timeout'] == stale
            assert values['graceful-timeout'] + \
                values['shutdown-timeout'] >= drain
            assert stale + values['shutdown-timeout'] >= drain
            assert values['shutdown-timeout'] >= 5


def test_memory_limit_and_restart_interval_are_serve_options(
        clean_zope, site_dir, exec_calls, as_user):
    root = os.path.join(site_dir, 'apache')
    assert zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                          '--server-root', root, '--memory-limit', '512',
                          '--restart-interval', '86400']) == 0
    [limited] = exec_calls
    assert serve_options(limited)['restart-interval'] == '86400'
    with open(os.path.join(root, 'application.wsgi')) as stream:
        script = stream.read()
    assert 'limit_memory(512)' in script
    compile(script, 'application.wsgi', 'exec')


def test_limit_memory_sets_the_data_limit(monkeypatch):
    import resource
    calls = []
    monkeypatch.setattr(resource, 'setrlimit',
                        lambda *args: calls.append(args))
    modwsgi_express.limit_memory(3)
    assert calls == [(resource.RLIMIT_DATA, (3 << 20, 3 << 20))]
    assert modwsgi_express.memory_lines(None) == ''


def test_the_system_apache_groups_let_requests_finish_on_restart():
    """etc/apache/zope-pipeline.conf: each daemon process group has the
    timeouts `zope-pipeline serve --mod-wsgi` computes for its request
    timeout and threads (issue 45: it had graceful-timeout=15 and 60),
    and the rolling restart of etc/app.wsgi waits for the longest."""
    from zope.pipeline.serving import rolling
    with open(os.path.join(ROOT, 'etc', 'apache',
                           'zope-pipeline.conf')) as stream:
        text = stream.read().replace('\\\n', ' ')
    groups = re.findall(r'^WSGIDaemonProcess (\S+) (.*)$', text, re.M)
    assert [name for name, options in groups] == [
        'zope-pipeline', 'zope-pipeline-admin']
    drains = []
    for name, options in groups:
        options = dict(re.findall(r'([a-z-]+)=(\S+)', options))
        threads = int(options['threads'])
        expected = modwsgi_express.timeouts(
            int(options['request-timeout']), threads)
        for key, value in expected.items():
            assert int(options[key]) == value, (name, key)
        drains.append(modwsgi_express.drain_seconds(
            int(options['request-timeout']), threads))
    assert rolling.DRAIN == max(drains)


@pytest.mark.parametrize('option, message', [
    (['--admin-processes', '-1'], '--admin-processes must be 0'),
    (['--admin-urls', '/(@@edit'], 'is not a regular expression'),
    (['--admin-urls', '/"x"'], 'without double quotes'),
    (['--admin-urls', ''], 'non-empty'),
])
def test_bad_admin_group_options_are_refused(site_dir, exec_calls, option,
                                             message):
    with pytest.raises(SystemExit, match=message):
        zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi']
                      + option)
    assert exec_calls == []


def test_timeouts_and_thread_counts_must_be_positive(site_dir, capsys):
    for option in ('--request-timeout', '--admin-threads',
                   '--admin-request-timeout'):
        with pytest.raises(SystemExit):
            zope_pipeline(['serve', write_site(site_dir), '--mod-wsgi',
                           option, '0'])
        assert 'invalid positive value' in capsys.readouterr().err


def test_under_root_the_daemons_run_as_www_data_owning_the_storage(
        clean_zope, site_dir, exec_calls):
    need(os.geteuid() == 0, 'only root can give directories to www-data')
    ini = write_site(site_dir)
    data = os.path.join(site_dir, 'var', 'data')
    os.makedirs(data)
    old_file = os.path.join(data, 'main.sqlite3')
    open(old_file, 'w').close()
    zope_pipeline(['serve', ini, '--mod-wsgi', '--port', '8124',
                   '--server-root', os.path.join(site_dir, 'apache')])
    [command] = exec_calls
    assert command[command.index('--user') + 1] == 'www-data'
    assert command[command.index('--group') + 1] == 'www-data'
    www_data = pwd.getpwnam('www-data').pw_uid
    for path in (data, old_file, os.path.join(site_dir, 'var', 'cache')):
        assert os.stat(path).st_uid == www_data, path


def test_default_server_root_is_var_beside_the_etc_of_the_ini():
    assert modwsgi_express.default_server_root(
        '/srv/site/etc/deploy.ini', 8080) == '/srv/site/var/mod_wsgi-8080'


def test_unknown_daemon_user_is_named(monkeypatch):
    monkeypatch.setattr(os, 'geteuid', lambda: 0)
    with pytest.raises(SystemExit, match="'nobody-here' does not exist"):
        ownership.run_as('nobody-here')
    assert ownership.run_as('www-data', 'www-data') == ('www-data', 'www-data')


def test_not_root_runs_as_itself(as_user):
    assert ownership.run_as('www-data') == (None, None)


def test_a_project_www_data_cannot_read_is_refused(tmp_path):
    hidden = tmp_path / 'hidden'
    hidden.mkdir()
    ini = hidden / 'site.ini'
    ini.write_text('')
    os.chmod(hidden, 0o700)
    with pytest.raises(SystemExit) as raised:
        ownership.check_readable_by('www-data', 'www-data', [str(ini)])
    assert 'www-data cannot read %s' % ini in str(raised.value)


def test_permission_bits_decide_for_owner_group_and_others(site_dir):
    path = os.path.join(site_dir, 'file')
    open(path, 'w').close()
    os.chmod(path, 0o640)
    info = os.stat(path)
    assert ownership.allowed(info, info.st_uid, set(), 'r')
    assert ownership.allowed(info, info.st_uid + 1, {info.st_gid}, 'r')
    assert not ownership.allowed(info, info.st_uid + 1, set(), 'r')
    assert ownership.first_blocked(path, info.st_uid + 1, set()) == path
    os.chmod(path, 0o644)
    assert ownership.first_blocked(path, info.st_uid + 1, set()) is None


def test_the_project_is_readable_by_www_data():
    ownership.check_readable_by('www-data', 'www-data', [
        os.path.join(ROOT, 'etc', 'deploy.ini'), sys.prefix])


def test_mod_wsgi_express_is_found_beside_python_or_named(monkeypatch):
    assert os.path.basename(modwsgi_express.find_mod_wsgi_express()) == \
        'mod_wsgi-express'
    monkeypatch.setattr(sys, 'executable', '/nonexistent/python')
    monkeypatch.setattr(modwsgi_express.shutil, 'which', lambda name: None)
    with pytest.raises(SystemExit, match='mod_wsgi-express is not '
                                         'installed'):
        modwsgi_express.find_mod_wsgi_express()


# -- in a daemon process


@pytest.fixture
def mod_wsgi_module(monkeypatch):
    module = types.ModuleType('mod_wsgi')
    module.threads_per_process = 2
    module.shutdown_callbacks = []
    module.subscribe_shutdown = module.shutdown_callbacks.append
    monkeypatch.setitem(sys.modules, 'mod_wsgi', module)
    return module


def test_wsgi_script_loads_the_site_and_opens_its_database(
        clean_zope, site_dir, mod_wsgi_module):
    ini = write_site(site_dir)
    application = startup.load_site(ini)
    assert os.path.exists(os.path.join(site_dir, 'var', 'data',
                                       'main.sqlite3'))
    assert mod_wsgi_module.shutdown_callbacks
    response = webtest.TestApp(application, lint=True).get('/folder/page')
    assert response.headers['X-Pipeline-Pid'] == str(os.getpid())


def test_wsgi_script_refuses_more_daemon_threads_than_connections(
        clean_zope, site_dir, mod_wsgi_module, caplog):
    mod_wsgi_module.threads_per_process = 20
    application = startup.load_site(write_site(site_dir))
    response = webtest.TestApp(application).get('/folder/page', status=503)
    assert 'Site unavailable' in response.text
    assert 'mod_wsgi threads_per_process' in application.reason


def test_outside_mod_wsgi_a_wsgi_script_checks_no_threads(
        clean_zope, site_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, 'mod_wsgi', None)
    assert startup.mod_wsgi_threads() is None
    assert startup.load_site(write_site(site_dir, threads=99))


def test_exec_command_replaces_the_process():
    import subprocess
    result = subprocess.run(
        [sys.executable, '-c', 'from zope.pipeline.commands.serve import '
         "exec_command; print('before'); exec_command(['/bin/echo', "
         "'after'])"], capture_output=True, text=True, timeout=60)
    assert result.stdout == 'before\nafter\n'


def test_mod_wsgi_express_sets_up_the_server_without_its_summary(capfd):
    serve.set_up_server([sys.executable, '-c', 'import sys; print("Server '
                         'URL : http://127.0.0.1:1/", sys.argv[1:])'])
    assert capfd.readouterr() == ('', '')


def test_a_failed_mod_wsgi_express_setup_says_what_it_said():
    with pytest.raises(SystemExit, match=r"(?s)could not set up the server "
                       r"\(exit status 1\):\n.*no such option.*"
                       r"\['--setup-only'\]"):
        serve.set_up_server([sys.executable, '-c', 'import sys; sys.exit('
                             '"error: no such option %s" % sys.argv[1:])'])


def test_apache_becomes_the_process_when_not_at_a_terminal(monkeypatch):
    calls = []
    monkeypatch.setattr(serve, 'exec_command', calls.append)
    monkeypatch.setattr(sys, 'stdout', types.SimpleNamespace(
        isatty=lambda: False))
    serve.run_in_foreground(['apachectl', 'start'])
    assert calls == [['apachectl', 'start']]


#: At a terminal: Apache in a process group of its own, which gets the
#: signals the command gets (the child sends the command a SIGTERM and
#: exits 7 when it gets it back).
FOREGROUND_CHILD = """\
import os, signal, sys, time
assert os.getpgrp() == os.getpid()
signal.signal(signal.SIGTERM, lambda *args: sys.exit(7))
os.kill(os.getppid(), signal.SIGTERM)
time.sleep(60)
"""


def test_at_a_terminal_apache_gets_its_own_group_and_the_signals(
        monkeypatch):
    monkeypatch.setattr(sys, 'stdout', types.SimpleNamespace(
        isatty=lambda: True))
    before = signal.getsignal(signal.SIGTERM)
    assert serve.run_in_foreground([sys.executable, '-c',
                                    FOREGROUND_CHILD]) == 7
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_daemons_log_to_their_standard_error_untagged(capfd):
    import subprocess
    stream = modwsgi_express.untagged_stderr()
    stream.write('line\n')
    stream.close()
    assert capfd.readouterr().err == 'line\n'
    script = ('from zope.pipeline.serving.modwsgi_express '
              'import untagged_stderr\n'
              'import logging, sys\n'
              'sys.stderr = untagged_stderr()\n'
              'logging.basicConfig(format="%(levelname)s %(message)s", '
              'level=logging.INFO)\n'
              'logging.getLogger("x").info("r\u00e9ady")\n')
    done = subprocess.run([sys.executable, '-c', script],
                          capture_output=True, timeout=60)
    assert done.stderr == 'INFO r\u00e9ady\n'.encode()
    # The generated script sends them there before the ini's logging is
    # applied (its handlers take sys.stderr when they are made).
    text = modwsgi_express.WSGI_SCRIPT
    assert text.index('sys.stderr = untagged_stderr()') < text.index(
        'load_site(')


def test_logging_comes_from_the_ini_when_it_has_loggers(site_dir):
    import logging
    loggers = ('\n[loggers]\nkeys = root\n\n[handlers]\nkeys = null\n\n'
               '[formatters]\nkeys =\n\n[logger_root]\nlevel = ERROR\n'
               'handlers = null\n\n[handler_null]\nclass = NullHandler\n'
               'args = ()\n')
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    try:
        assert startup.configure_logging(write_site(site_dir, loggers=loggers))
        assert root.level == logging.ERROR
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
    assert not startup.configure_logging(write_site(site_dir))


# -- the root URL mapped into the site


def test_site_path_is_published_at_the_root_url(make_testapp):
    app = make_testapp(SITE_ZCML, {'open_root': {
        'populate': 'zope.pipeline.sample.content.populate'},
        'virtual_host': {'allowed_hosts': 'www.example.com example.com'}})
    mapped = webtest.TestApp(startup.SiteAtRoot(app.app, '/folder/'),
                             extra_environ={'REMOTE_ADDR': '127.0.0.1'},
                             lint=True)
    home = mapped.get('/', extra_environ={'HTTP_HOST': 'www.example.com'})
    assert '<h1>A folder of pages</h1>' in home.text
    assert 'href="http://www.example.com/page"' in home.text
    page = mapped.get('/page', extra_environ={
        'HTTP_HOST': 'example.com:8080', 'SCRIPT_NAME': '/site'})
    assert 'href="http://example.com:8080/site/page/item-01"' in page.text


def test_site_path_is_normalised():
    assert startup.SiteAtRoot(None, '/').site_path == ''
    assert startup.SiteAtRoot(None, 'folder/').site_path == '/folder'


# -- waitress


def test_waitress_serves_after_opening_the_database(
        clean_zope, site_dir, monkeypatch, capsys, as_user):
    import signal

    import waitress
    served = []
    monkeypatch.setattr(waitress, 'serve',
                        lambda app, **options: served.append(options))
    previous = signal.getsignal(signal.SIGTERM)
    try:
        assert zope_pipeline(['serve', write_site(site_dir),
                              '--port', '8125']) == 0
        assert signal.getsignal(signal.SIGTERM) is serve.exit_on_signal
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert served == [{'host': '127.0.0.2', 'port': 8125, 'threads': 4,
                       'max_request_body_size': 100 << 20,
                       'max_request_header_size': serve.MAX_REQUEST_HEAD,
                       'clear_untrusted_proxy_headers': False}]
    assert os.path.exists(os.path.join(site_dir, 'var', 'data',
                                       'main.sqlite3'))
    assert 'http://127.0.0.2:8125/ (waitress' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        serve.exit_on_signal(signal.SIGTERM, None)


def test_the_daemons_group_keeps_mod_wsgi_express_name_for_no_host(
        site_dir):
    import argparse
    host, port, options = serve.body_buffering(
        argparse.Namespace(buffer_bodies=True), site_dir, '', 8128)
    assert host == '127.0.0.1' and port != 8128
    assert '--process-group=localhost:8128' in options
    with open(os.path.join(site_dir, 'body-buffering.conf')) as stream:
        assert 'Listen 8128\n' in stream.read()
