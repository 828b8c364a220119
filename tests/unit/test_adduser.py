"""`zope-pipeline adduser`: the administrator of a production site, with
its password from a file, the environment or a prompt, stored hashed in
the principals file the ini names, readable by its owner only."""

import base64
import os
import stat

import pytest
import webtest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import adduser

from tests.conftest import ROOT

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
principals_zcml = var/principals.zcml
open_root.populate = zope.pipeline.sample.content.populate
'''
PASSWORD = 'correct horse battery'


@pytest.fixture
def ini(tmp_path):
    path = tmp_path / 'site.ini'
    path.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    return str(path)


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


def load(ini):
    from zope.pipeline.commands import load_publisher
    return webtest.TestApp(load_publisher(ini),
                           extra_environ={'REMOTE_ADDR': '127.0.0.1'})


def test_the_administrator_logs_in_with_the_password_from_the_environment(
        clean_zope, ini, tmp_path, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    assert zope_pipeline(['adduser', ini, '--login', 'boss']) == 0
    path = tmp_path / 'var' / 'principals.zcml'
    text = path.read_text()
    assert PASSWORD not in text and '{BCRYPT}$2b$12$' in text
    assert 'password_manager="BCRYPT"' in text
    # root shares it with the servers' group (see below), others keep it
    assert stat.S_IMODE(os.stat(path).st_mode) == (
        0o640 if os.geteuid() == 0 else 0o600)
    app = load(ini)
    app.get('/folder/page/@@edit', extra_environ=basic('boss', PASSWORD))
    app.get('/folder/page/@@edit', extra_environ=basic('boss', 'wrong'),
            status=401)
    app.get('/folder/page/@@edit', extra_environ=basic('admin', 'admin'),
            status=401)


def test_a_password_file_and_a_second_principal_keep_the_first(
        clean_zope, ini, tmp_path, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    zope_pipeline(['adduser', ini, '--login', 'boss'])
    secret = tmp_path / 'secret'
    secret.write_text('another long password\n')
    assert zope_pipeline(['adduser', ini, '--login', 'editor',
                          '--password-file', str(secret),
                          '--title', 'The "editor" <2>']) == 0
    principals = adduser.read_principals(str(tmp_path / 'var' /
                                             'principals.zcml'))
    assert sorted(principals) == ['boss', 'editor']
    assert principals['editor']['title'] == 'The "editor" <2>'
    assert principals['editor']['permissions'] == [
        'zope.ManageContent', 'zope.pipeline.ViewMetrics']
    app = load(ini)
    app.get('/folder/page/@@edit',
            extra_environ=basic('editor', 'another long password'))
    app.get('/folder/page/@@edit', extra_environ=basic('boss', PASSWORD))
    # the administrator reads the metrics page, anybody else is asked to
    # log in
    app.get('/@@metrics.html', extra_environ=basic('boss', PASSWORD))
    app.get('/@@metrics.html', status=401)


@pytest.mark.parametrize('password, message', [
    ('short', 'at least 10 characters'),
    ('zope-pipeline-sample', 'known to everyone'),
    ('administrator', 'known to everyone'),
])
def test_short_and_known_passwords_are_refused(ini, monkeypatch, password,
                                               message):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', password)
    with pytest.raises(SystemExit, match=message):
        zope_pipeline(['adduser', ini, '--login', 'administrator'])


def test_without_a_terminal_or_a_password_it_says_where_to_give_one(
        ini, monkeypatch):
    monkeypatch.delenv('ZOPE_PIPELINE_PASSWORD', raising=False)
    monkeypatch.setattr('sys.stdin.isatty', lambda: False)
    with pytest.raises(SystemExit, match='ZOPE_PIPELINE_PASSWORD'):
        zope_pipeline(['adduser', ini, '--login', 'boss'])


def test_an_ini_without_a_principals_file_is_refused(tmp_path):
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    with pytest.raises(SystemExit, match='names no principals file'):
        zope_pipeline(['adduser', str(ini), '--login', 'boss'])


def test_a_bad_login_is_refused(ini):
    with pytest.raises(SystemExit, match='--login'):
        zope_pipeline(['adduser', ini, '--login', 'a"b'])


def test_on_a_terminal_the_password_is_asked_twice(ini, tmp_path,
                                                   monkeypatch):
    answers = iter(['typed password 1', 'typed password 1'])
    monkeypatch.delenv('ZOPE_PIPELINE_PASSWORD', raising=False)
    monkeypatch.setattr('sys.stdin.isatty', lambda: True)
    monkeypatch.setattr('getpass.getpass', lambda prompt: next(answers))
    assert zope_pipeline(['adduser', ini, '--login', 'boss']) == 0
    assert 'boss' in adduser.read_principals(
        str(tmp_path / 'var' / 'principals.zcml'))
    answers = iter(['typed password 1', 'typed password 2'])
    with pytest.raises(SystemExit, match='differ'):
        zope_pipeline(['adduser', ini, '--login', 'boss'])


def read_as(user, path):
    """Whether ``user`` can read ``path`` (in a child process)."""
    import pwd
    entry = pwd.getpwnam(user)
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.setgroups(os.getgrouplist(user, entry.pw_gid))
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
            with open(path) as stream:
                stream.read()
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


@pytest.fixture
def open_ini():
    """The ini of a project in a directory www-data may pass through."""
    import shutil
    import tempfile
    directory = tempfile.mkdtemp(prefix='zp-adduser-', dir='/tmp')
    os.chmod(directory, 0o755)
    path = os.path.join(directory, 'site.ini')
    with open(path, 'w') as stream:
        stream.write(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    yield path
    shutil.rmtree(directory)


def test_root_writes_the_principals_file_the_servers_read(
        clean_zope, open_ini, monkeypatch):
    """adduser as root, then a rolling restart (daemon processes as
    www-data read the file) or serve (which refuses a file the daemon
    user can change) accepts it: root's, www-data's group, 0640."""
    import grp
    import pwd

    from zope.pipeline.serving.layout import check_before_loading
    from zope.pipeline.serving.layout import daemon_of
    from zope.pipeline.serving.ownership import check_readable_by
    if os.geteuid() != 0:
        pytest.skip('the servers read it as another user when run as root')
    ini = open_ini
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    assert zope_pipeline(['adduser', ini, '--login', 'boss']) == 0
    path = os.path.join(os.path.dirname(ini), 'var', 'principals.zcml')
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (
        0, pwd.getpwnam('www-data').pw_gid, 0o640)
    assert read_as('www-data', path)
    daemon = daemon_of('www-data', 'www-data')
    check_before_loading(ini, 'main', daemon)
    check_readable_by('www-data', 'www-data', [path])
    # --group names another daemon group; the next run keeps it
    assert zope_pipeline(['adduser', ini, '--login', 'boss',
                          '--group', 'nogroup']) == 0
    assert zope_pipeline(['adduser', ini, '--login', 'editor']) == 0
    info = os.stat(path)
    assert (info.st_uid, info.st_gid) == (0, grp.getgrnam('nogroup').gr_gid)
    assert not read_as('www-data', path)
    with pytest.raises(SystemExit, match='no such group'):
        zope_pipeline(['adduser', ini, '--login', 'boss',
                       '--group', 'no-such-group-here'])


def test_the_owner_option_is_gone(ini, monkeypatch, capsys):
    """--owner www-data made a file serve refuses (www-data could change
    what root reads): --group replaces it."""
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    with pytest.raises(SystemExit):
        zope_pipeline(['adduser', ini, '--login', 'boss',
                       '--owner', 'www-data'])
    assert 'unrecognized arguments: --owner' in capsys.readouterr().err


def test_a_file_that_is_not_a_principals_file_is_left_alone(
        ini, tmp_path, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    path = tmp_path / 'var' / 'principals.zcml'
    path.parent.mkdir()
    path.write_text('not xml <')
    with pytest.raises(SystemExit, match='is not a principals file'):
        zope_pipeline(['adduser', ini, '--login', 'boss'])
    assert path.read_text() == 'not xml <'


def test_a_principals_file_that_is_a_link_is_refused(ini, tmp_path,
                                                     monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    (tmp_path / 'var').mkdir()
    os.symlink(str(tmp_path / 'elsewhere'),
               str(tmp_path / 'var' / 'principals.zcml'))
    with pytest.raises(SystemExit, match='symbolic link'):
        zope_pipeline(['adduser', ini, '--login', 'boss'])
    assert not os.path.exists(tmp_path / 'elsewhere')
