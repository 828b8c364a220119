"""Common mistakes get one sentence that says what to change, never a
traceback: a port already in use (waitress, --reload, --mod-wsgi), an
application name the ini has no section for, an application the `use`
line names that is not installed, a missing principals file."""

import os
import select
import signal
import socket
import subprocess
import sys
import time

import pytest

from zope.pipeline.cli import main

from tests.conftest import ROOT

DEPLOY_INI = os.path.join(ROOT, 'etc', 'deploy.ini')


@pytest.fixture
def busy_port():
    """A port a server already listens on."""
    with socket.socket() as listener:
        listener.bind(('127.0.0.1', 0))
        listener.listen()
        yield listener.getsockname()[1]


@pytest.mark.parametrize('options', [[], ['--mod-wsgi']])
def test_a_port_in_use_is_one_sentence(clean_zope, busy_port, options,
                                      monkeypatch):
    from zope.pipeline.commands import serve

    def no_server(command):
        raise AssertionError('mod_wsgi-express started: %s' % command)
    monkeypatch.setattr(serve, 'exec_command', no_server)
    with pytest.raises(SystemExit) as raised:
        main(['serve', DEPLOY_INI, '--port', str(busy_port)] + options)
    assert str(raised.value) == (
        'Port %d on 127.0.0.1 is already in use (another server, or this '
        'one still running): stop it, or serve on another port with --port '
        '(or port in the [server:main] of %s).' % (busy_port, DEPLOY_INI))


def test_a_port_in_use_under_reload_is_one_sentence(busy_port):
    command = [sys.executable, '-m', 'zope.pipeline.cli', 'serve',
               DEPLOY_INI, '--port', str(busy_port), '--reload']
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # the monitor waits for a change: read what is there
            if not select.select([process.stdout], [], [], 1)[0]:
                continue
            line = process.stdout.readline()
            lines.append(line)
            if 'Waiting for a file to change' in line or not line:
                break
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
        process.stdout.close()
    output = ''.join(lines)
    assert 'Port %d on 127.0.0.1 is already in use' % busy_port in output
    assert 'Traceback' not in output


def test_an_address_that_is_not_this_machines_is_one_sentence(clean_zope):
    with pytest.raises(SystemExit, match='Cannot listen on 192.0.2.1 port '
                       '8999: .*Choose another address'):
        main(['serve', DEPLOY_INI, '--host', '192.0.2.1', '--port', '8999'])


def test_an_unknown_host_name_is_one_sentence(clean_zope):
    with pytest.raises(SystemExit, match='Cannot listen on no-such-host'
                       r'\.invalid: .*--host'):
        main(['serve', DEPLOY_INI, '--host', 'no-such-host.invalid'])


@pytest.mark.parametrize('command', [
    ['serve', DEPLOY_INI, '--name', 'nope'],
    ['explain', DEPLOY_INI, '/', '--name', 'nope'],
    ['show-pipeline', DEPLOY_INI, '--name', 'nope'],
])
def test_an_unknown_application_name_is_one_line(clean_zope, capsys,
                                                 command):
    assert main(command) == 1
    error = capsys.readouterr().err
    assert error.startswith('zope-pipeline %s: No section \'nope\''
                            % command[0])
    assert 'Name an [app:NAME] section of the ini with --name' in error
    assert len(error.strip().splitlines()) == 1


def test_an_application_that_is_not_installed_is_one_line(
        clean_zope, capsys, tmp_path):
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#nope\n')
    assert main(['show-pipeline', str(ini)]) == 1
    error = capsys.readouterr().err
    assert "Entry point 'nope' not found" in error
    assert len(error.strip().splitlines()) == 1


def test_a_missing_principals_file_is_one_warning(clean_zope, caplog,
                                                  tmp_path, capsys):
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'principals_zcml = var/principals.zcml\n')
    assert main(['show-pipeline', str(ini)]) == 0
    warnings = [record.getMessage() for record in caplog.records
                if record.levelname == 'WARNING']
    assert warnings == [
        'The principals file %s (principals_zcml in the application section '
        'of %s) does not exist: the site has no administrator.  Create one '
        'with `zope-pipeline adduser INI --login LOGIN`.'
        % (tmp_path / 'var' / 'principals.zcml', ini)]


def test_a_lookup_error_of_the_code_is_not_hidden(monkeypatch):
    """A KeyError is a bug to see, not a missing ini section."""
    from zope.pipeline.commands import show_pipeline

    def broken(args):
        raise KeyError('bug')
    monkeypatch.setattr(show_pipeline, 'run', broken)
    with pytest.raises(KeyError):
        main(['show-pipeline', DEPLOY_INI])
