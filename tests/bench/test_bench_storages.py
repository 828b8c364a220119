"""The benchmark's storages: ZConfig files from the site's templates, and
the scratch MySQL database."""

import os

import pytest
import ZODB.config
from conftest import need

from benchmarks import storages
from benchmarks.sites import minimal_site
from benchmarks.workspace import Workspace
from tests.conftest import ROOT

ETC = os.path.join(ROOT, 'etc')

TEMPLATE = '''\
%import relstorage
<zodb main>
  cache-size 5000
  <relstorage>
    keep-history false
    cache-local-dir $here/../var/cache
    <mysql>
      host db.example.com
      db production
      # unix_socket /run/mysqld/mysqld.sock
      unix_socket /run/mysqld/mysqld.sock
      read_default_file $here/../var/mysql-client.cnf
      connect_timeout 10
    </mysql>
  </relstorage>
</zodb>
'''


def test_a_template_keeps_its_tuning_and_gets_the_scratch_places():
    text = storages.rewrite_zconfig(TEMPLATE, 'mysql', {
        'db': 'scratch', 'host': '127.0.0.1', 'user': 'bench'})
    lines = [line.strip() for line in text.splitlines()]
    assert 'cache-size 5000' in lines
    assert 'connect_timeout 10' in lines
    assert lines.count('db scratch') == 1
    assert 'db production' not in lines
    assert 'host 127.0.0.1' in lines
    assert 'user bench' in lines
    assert 'unix_socket /run/mysqld/mysqld.sock' not in lines
    assert not any('$here' in line for line in lines)  # Pyramid's loader
    assert not any(line.startswith('cache-local-dir') for line in lines)
    assert '      db scratch' in text.splitlines()  # indented in <mysql>


def test_a_template_without_the_adapter_section_is_refused():
    with pytest.raises(ValueError, match='no <sqlite3> section'):
        storages.rewrite_zconfig(TEMPLATE, 'sqlite3', {'data-dir': '/x'})


def test_the_projects_sqlite_template_opens_a_scratch_database(tmp_path):
    need(os.path.exists(os.path.join(ETC, 'zodb-sqlite.conf')),
         'etc/zodb-sqlite.conf is missing')
    text = storages.zconfig('sqlite3', {'data-dir': str(tmp_path / 'data')},
                            os.path.join(ETC, 'zodb-sqlite.conf'))
    assert 'pool-size 8' in text
    db = ZODB.config.databaseFromString(text)
    try:
        assert os.path.isdir(tmp_path / 'data')
    finally:
        db.close()


def test_the_default_zconfig_opens_a_sqlite_database(tmp_path):
    text = storages.default_zconfig('sqlite3',
                                    {'data-dir': str(tmp_path / 'd')})
    db = ZODB.config.databaseFromString(text)
    db.close()
    assert os.listdir(tmp_path / 'd')


def test_each_sqlite_setup_writes_a_config_for_a_fresh_directory():
    with Workspace() as workspace:
        storage = storages.make_storage('sqlite', minimal_site())
        first = storage.setup(workspace, 'one')
        second = storage.setup(workspace, 'two')
        storage.teardown()
        with open(first) as config:
            assert os.path.join(workspace.path, 'var', 'one') in config.read()
        assert first != second
    assert not os.path.exists(workspace.path)
    assert 'fresh data directory' in storage.describe()


class FakeConnection:

    def __init__(self, log):
        self.log = log

    def cursor(self):
        return self

    def execute(self, statement):
        self.log.append(statement)

    def commit(self):
        self.log.append('COMMIT')

    def close(self):
        self.log.append('CLOSE')


def fake_mysql():
    log = []
    storage = storages.MysqlStorage(
        connect=lambda **admin: FakeConnection(log))
    return storage, log


def test_the_scratch_database_and_user_are_created_once_and_dropped():
    storage, log = fake_mysql()
    with Workspace() as workspace:
        path = storage.setup(workspace, 'a')
        storage.setup(workspace, 'b')
        with open(path) as config:
            text = config.read()
    creates = [line for line in log if line.startswith('CREATE DATABASE')]
    assert creates == ['CREATE DATABASE `%s`' % storage.database]
    assert "GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1'" % (
        storage.database, storage.user) in log
    assert 'db %s' % storage.database in text
    assert 'passwd %s' % storage.password in text
    storage.teardown()
    storage.teardown()
    drops = [line for line in log if line.startswith('DROP')]
    assert drops == ['DROP DATABASE IF EXISTS `%s`' % storage.database,
                     "DROP USER IF EXISTS '%s'@'127.0.0.1'" % storage.user,
                     "DROP USER IF EXISTS '%s'@'localhost'" % storage.user]
    assert storage.database in storage.describe()


def test_an_unknown_storage_is_refused():
    with pytest.raises(ValueError, match="Unknown storage 'oracle'"):
        storages.make_storage('oracle', minimal_site())


def mysql_available():
    from benchmarks.environment import mariadb_version
    return mariadb_version() is not None


@pytest.mark.integration
def test_a_scratch_mysql_database_stores_objects_and_is_dropped():
    need(mysql_available(), 'MySQL/MariaDB is not running')
    import MySQLdb
    import transaction

    from zope.pipeline.zodb.storage import open_database
    storage = storages.MysqlStorage(os.path.join(ETC, 'zodb-mysql.conf'))
    try:
        with Workspace() as workspace:
            db = open_database(storage.setup(workspace, 'mysql'))
            try:
                manager = transaction.TransactionManager()
                connection = db.open(transaction_manager=manager)
                connection.root()['answer'] = 42
                manager.commit()
                connection.close()
            finally:
                db.close()
    finally:
        storage.teardown()
    admin = MySQLdb.connect(**storages.MYSQL_ADMIN)
    try:
        cursor = admin.cursor()
        cursor.execute('SHOW DATABASES LIKE %s', (storage.database,))
        assert cursor.fetchall() == ()
    finally:
        admin.close()


def test_mysql_storage_uses_the_sites_template_and_creates_nothing_yet():
    site = minimal_site()
    site.zodb_templates['mysql'] = '/etc/zodb-mysql.conf'
    storage = storages.make_storage('mysql', site)
    assert isinstance(storage, storages.MysqlStorage)
    assert storage.template == '/etc/zodb-mysql.conf'
    assert not storage.created
    storage.teardown()  # nothing was created: nothing to drop
