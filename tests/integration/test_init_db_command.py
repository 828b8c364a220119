"""`zope-pipeline init-db` without a server: which database, user and
hosts it reads from an ini's ZConfig, the SQL it sends, where it connects
as administrator, and its refusals."""

import argparse
import os

import pytest

from tests.conftest import ROOT
from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import init_db

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
            'port': None, 'unix_socket': None}
    base.update(values)
    return base


def options(**values):
    base = {'admin_user': 'root', 'admin_password': '', 'host': None,
            'port': None, 'socket': None}
    base.update(values)
    return argparse.Namespace(**base)


def write_zconfig(tmp_path, lines):
    path = tmp_path / 'zodb.conf'
    path.write_text(MYSQL_ZCONFIG % '\n      '.join(lines))
    return str(path)


def test_the_mysql_ini_names_database_user_and_password():
    path = init_db.zodb_config_of(MYSQL_INI)
    assert init_db.mysql_target(path) == {
        'db': 'zope_pipeline', 'user': 'zope_pipeline',
        'passwd': 'zope-pipeline-sample', 'host': '127.0.0.1',
        'port': 3306, 'unix_socket': None}


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
    assert init_db.client_hosts(target(host='127.0.0.1')) == [
        'localhost', '127.0.0.1']
    assert init_db.client_hosts(target(unix_socket='/run/x.sock')) == [
        'localhost', '127.0.0.1']
    assert init_db.client_hosts(target(host='db.example')) == ['%']


def test_create_statements_pass_the_password_as_a_parameter():
    statements = init_db.create_statements(target(), ['%'])
    assert statements[0] == (
        'CREATE DATABASE IF NOT EXISTS `zp` CHARACTER SET utf8mb4', ())
    assert statements[1] == (
        "CREATE USER IF NOT EXISTS 'zp'@'%%' IDENTIFIED BY %s", ('secret',))
    assert statements[2] == ("ALTER USER 'zp'@'%%' IDENTIFIED BY %s",
                             ('secret',))
    assert statements[3] == ("GRANT ALL PRIVILEGES ON `zp`.* TO 'zp'@'%'",
                             ())
    assert all('secret' not in sql for sql, parameters in statements)


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

    def __init__(self):
        self.executed = []
        self.closed = False

    def cursor(self):
        return self

    def execute(self, sql, parameters=None):
        self.executed.append((sql, parameters))

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
                    init_db.create_statements(target(), ['%']))
    output = capsys.readouterr().out
    assert "CREATE USER IF NOT EXISTS 'zp'@'%' IDENTIFIED BY '***'" in output
    assert 'secret' not in output


def test_an_unreachable_server_is_named():
    with pytest.raises(SystemExit, match='Cannot connect to MySQL at '
                                         '/nonexistent.sock as root'):
        init_db.connect_admin(options(socket='/nonexistent.sock'), target())
