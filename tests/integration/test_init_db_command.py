"""`zope-pipeline init-db` without a server: which database, user and
hosts it reads from an ini's ZConfig, the SQL it sends, where it connects
as administrator, and its refusals."""

import argparse
import os

import pytest

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import init_db

from tests.conftest import ROOT

MYSQL_INI = os.path.join(ROOT, 'etc', 'deploy-mysql.ini')
SQLITE_INI = os.path.join(ROOT, 'etc', 'deploy.ini')

MYSQL_ZCONFIG = '''\
%%import relstorage
<zodb main>
  <relstorage>
    <mysql>
      %s
    </mysql>
  </relstorage>
</zodb>
'''


def target(**values):
    base = {'db': 'zp', 'user': 'zp', 'passwd': 'secret', 'host': None,
            'port': None, 'unix_socket': None, 'read_default_file': None,
            'config': 'zodb.conf'}
    base.update(values)
    return base


def options(**values):
    base = {'admin_user': 'root', 'admin_password_file': None, 'host': None,
            'port': None, 'socket': None, 'client_host': None,
            'db_password_file': None, 'db_password_prompt': False,
            'group': None}
    base.update(values)
    return argparse.Namespace(**base)


def write_zconfig(tmp_path, lines):
    path = tmp_path / 'zodb.conf'
    path.write_text(MYSQL_ZCONFIG % '\n      '.join(lines))
    return str(path)


def test_the_mysql_ini_names_database_user_and_password_file():
    path = init_db.zodb_config_of(MYSQL_INI)
    assert init_db.mysql_target(path) == {
        'db': 'zope_pipeline', 'user': 'zope_pipeline',
        'passwd': None, 'host': '127.0.0.1',
        'port': 3306, 'unix_socket': None,
        'read_default_file': os.path.join(ROOT, 'etc', '..', 'var',
                                          'mysql-client.cnf'),
        'config': path}


def test_an_sqlite_storage_has_no_database_to_create():
    with pytest.raises(SystemExit, match='does not describe RelStorage on '
                                         'MySQL'):
        init_db.mysql_target(init_db.zodb_config_of(SQLITE_INI))


def test_an_ini_without_a_storage_or_a_missing_one_is_refused(tmp_path):
    ini = tmp_path / 'bare.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    with pytest.raises(SystemExit, match='sets no open_root.zodb_config'):
        init_db.zodb_config_of(str(ini))
    with pytest.raises(SystemExit, match='does not exist'):
        init_db.zodb_config_of(str(tmp_path / 'missing.ini'))
    with pytest.raises(SystemExit, match='does not exist'):
        init_db.mysql_target(str(tmp_path / 'missing.conf'))


@pytest.mark.parametrize('lines', [
    ['user zp'],
    ['db zp; DROP DATABASE mysql', 'user zp'],
    ['db zp', "user zp'@'%"],
])
def test_database_and_user_names_must_be_plain(tmp_path, lines):
    with pytest.raises(SystemExit, match='must be set and made of'):
        init_db.mysql_target(write_zconfig(tmp_path, lines))


def test_a_local_server_gets_users_for_localhost_and_127_0_0_1():
    assert init_db.client_hosts(options(), target(host='127.0.0.1')) == [
        'localhost', '127.0.0.1']
    assert init_db.client_hosts(
        options(), target(unix_socket='/run/x.sock')) == [
        'localhost', '127.0.0.1']


def test_a_remote_server_gets_a_user_for_the_host_it_sees_us_from():
    connection = FakeConnection(user='root@app1.example')
    assert init_db.client_hosts(options(), target(host='db.example'),
                                connection) == ['app1.example']
    assert connection.executed == [('SELECT USER()', None)]
    assert init_db.client_hosts(
        options(client_host=['app2.example']),
        target(host='db.example')) == ['app2.example']
    with pytest.raises(SystemExit, match='--client-host'):
        init_db.client_hosts(options(), target(host='db.example'),
                             FakeConnection(user='root@localhost'))


def test_create_statements_pass_the_password_as_a_parameter():
    statements = init_db.create_statements(target(), ['app.example'])
    assert statements[0] == (
        'CREATE DATABASE IF NOT EXISTS `zp` CHARACTER SET utf8mb4', ())
    assert statements[1] == (
        "CREATE USER IF NOT EXISTS 'zp'@'app.example' IDENTIFIED BY %s",
        ('secret',))
    assert statements[2] == ("ALTER USER 'zp'@'app.example' IDENTIFIED BY "
                             "%s", ('secret',))
    assert statements[3] == ("GRANT ALL PRIVILEGES ON `zp`.* TO "
                             "'zp'@'app.example'", ())
    assert all('secret' not in sql for sql, parameters in statements)
    assert init_db.create_statements(target(), ['h'], 'other')[1][1] == (
        'other',)


def test_drop_statements_remove_database_and_users():
    assert init_db.drop_statements(target(), ['localhost', '127.0.0.1']) == [
        ('DROP DATABASE IF EXISTS `zp`', ()),
        ("DROP USER IF EXISTS 'zp'@'localhost'", ()),
        ("DROP USER IF EXISTS 'zp'@'127.0.0.1'", ())]


def test_a_bad_client_host_is_refused():
    with pytest.raises(SystemExit, match='Bad client host'):
        init_db.create_statements(target(), ["x' OR '1"])


def test_administrator_connects_where_told_else_to_the_local_socket():
    assert init_db.admin_connection_options(options(), target(
        host='127.0.0.1')) == {'user': 'root', 'passwd': '',
                               'unix_socket': init_db.DEFAULT_SOCKET}
    assert init_db.admin_connection_options(
        options(socket='/s.sock'), target())['unix_socket'] == '/s.sock'
    assert init_db.admin_connection_options(
        options(host='db', port=3307), target()) == {
        'user': 'root', 'passwd': '', 'host': 'db', 'port': 3307}
    assert init_db.admin_connection_options(
        options(), target(host='db.example', port=3308)) == {
        'user': 'root', 'passwd': '', 'host': 'db.example', 'port': 3308}
    assert 'port' not in init_db.admin_connection_options(
        options(host='db'), target())
    assert 'port' not in init_db.admin_connection_options(
        options(), target(host='db.example'))


class FakeConnection:

    def __init__(self, user='root@localhost'):
        self.executed = []
        self.closed = False
        self.user = user

    def cursor(self):
        return self

    def execute(self, sql, parameters=None):
        self.executed.append((sql, parameters))

    def fetchone(self):
        return (self.user,)

    def close(self):
        self.closed = True


def test_drop_runs_its_statements_and_prints_them_without_the_password(
        monkeypatch, capsys):
    connection = FakeConnection()
    monkeypatch.setattr(init_db, 'connect_admin',
                        lambda args, target: connection)
    assert zope_pipeline(['init-db', MYSQL_INI, '--drop',
                          '--client-host', 'app.example']) == 0
    assert connection.executed == [
        ('DROP DATABASE IF EXISTS `zope_pipeline`', None),
        ("DROP USER IF EXISTS 'zope_pipeline'@'app.example'", None),
        ('FLUSH PRIVILEGES', None)]
    assert connection.closed
    output = capsys.readouterr().out
    assert 'Dropped: database zope_pipeline' in output


def test_printed_statements_hide_the_password(capsys):
    init_db.execute(FakeConnection(),
                    init_db.create_statements(target(), ['app.example']))
    output = capsys.readouterr().out
    assert ("CREATE USER IF NOT EXISTS 'zp'@'app.example' IDENTIFIED BY "
            "'***'") in output
    assert 'secret' not in output


def test_an_unreachable_server_is_named():
    with pytest.raises(SystemExit, match='Cannot connect to MySQL at '
                                         '/nonexistent.sock as root'):
        init_db.connect_admin(options(socket='/nonexistent.sock'), target())


# -- the database user's password


def test_the_password_from_the_environment_goes_to_the_option_file(
        tmp_path, monkeypatch):
    from zope.pipeline.security.credentials import option_file_password
    option_file = str(tmp_path / 'var' / 'mysql-client.cnf')
    monkeypatch.setenv('ZOPE_PIPELINE_DB_PASSWORD', 'a-long-password')
    assert init_db.database_password(options(), target(
        passwd=None, read_default_file=option_file)) == 'a-long-password'
    assert option_file_password(option_file) == 'a-long-password'
    # as serve run as root leaves it: root's, the daemons' group reads it
    info = os.stat(option_file)
    if os.geteuid() == 0:
        import pwd
        assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (
            0, pwd.getpwnam('www-data').pw_gid, 0o640)
    else:
        assert info.st_mode & 0o777 == 0o600


def test_without_a_new_password_the_one_in_the_file_stays_or_one_is_made(
        tmp_path, monkeypatch):
    monkeypatch.delenv('ZOPE_PIPELINE_DB_PASSWORD', raising=False)
    option_file = str(tmp_path / 'mysql-client.cnf')
    made = init_db.database_password(options(), target(
        passwd=None, read_default_file=option_file))
    assert len(made) >= 24
    assert init_db.database_password(options(), target(
        passwd=None, read_default_file=option_file)) == made
    password_file = tmp_path / 'password'
    password_file.write_text('from-a-file-123\n')
    assert init_db.database_password(
        options(db_password_file=str(password_file)),
        target(passwd=None, read_default_file=option_file)) == \
        'from-a-file-123'


@pytest.mark.parametrize('password', ['zope-pipeline-sample', 'short',
                                      'with"quote-long'])
def test_known_short_or_unquotable_passwords_are_refused(
        tmp_path, monkeypatch, password):
    monkeypatch.setenv('ZOPE_PIPELINE_DB_PASSWORD', password)
    with pytest.raises(SystemExit):
        init_db.database_password(options(), target(
            passwd=None, read_default_file=str(tmp_path / 'c.cnf')))


def test_a_known_passwd_in_the_zconfig_is_refused(monkeypatch):
    monkeypatch.delenv('ZOPE_PIPELINE_DB_PASSWORD', raising=False)
    with pytest.raises(SystemExit, match='sets a known password'):
        init_db.database_password(options(), target(
            passwd='zope-pipeline-sample'))
    with pytest.raises(SystemExit, match='neither read_default_file'):
        init_db.database_password(options(), target(passwd=None))
    assert init_db.database_password(options(), target(
        passwd='own-long-password')) == 'own-long-password'


def test_the_administrator_password_comes_from_a_file_or_mysql_pwd(
        tmp_path, monkeypatch):
    monkeypatch.setenv('MYSQL_PWD', 'from-env')
    assert init_db.admin_connection_options(
        options(), target())['passwd'] == 'from-env'
    secret = tmp_path / 'admin'
    secret.write_text('from-file\n')
    assert init_db.admin_connection_options(
        options(admin_password_file=str(secret)), target())['passwd'] == \
        'from-file'


def test_an_option_file_that_is_a_link_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_DB_PASSWORD', 'a-long-password')
    link = tmp_path / 'mysql-client.cnf'
    os.symlink(str(tmp_path / 'elsewhere'), str(link))
    with pytest.raises(SystemExit, match='symbolic link'):
        init_db.database_password(options(), target(
            passwd=None, read_default_file=str(link)))
    assert not os.path.exists(tmp_path / 'elsewhere')
