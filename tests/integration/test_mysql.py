"""RelStorage on MySQL (MariaDB here): `zope-pipeline init-db` prepares a
scratch database that the site then uses, and two app servers sharing one
database see each other's writes on the next request."""

import os

import pytest

from zope.pipeline.zodb import storage

from tests.integration import support

pytestmark = pytest.mark.integration


@pytest.fixture
def mysql_site():
    support.need_mysql()
    with support.scratch_directory() as directory, \
            support.mysql_database() as database:
        yield support.mysql_site(directory, database), database


def databases():
    admin = support.mysql_admin()
    try:
        cursor = admin.cursor()
        cursor.execute('SHOW DATABASES')
        return {row[0] for row in cursor.fetchall()}
    finally:
        admin.close()


def read_comments(config_path):
    db = storage.open_database(config_path)
    try:
        connection = db.open()
        page = connection.root()['Application']['folder']['page']
        comments = [comment['text'] for comment in page.recent_comments()]
        connection.close()
        return comments
    finally:
        db.close()


def add_comment(config_path, text):
    import transaction
    db = storage.open_database(config_path)
    try:
        manager = transaction.TransactionManager(explicit=True)
        connection = db.open(transaction_manager=manager)
        manager.begin()
        connection.root()['Application']['folder']['page'].add_comment(
            'test', text)
        manager.commit()
        connection.close()
    finally:
        db.close()


def test_init_db_prepares_a_database_that_keeps_writes_and_drop_removes_it(
        mysql_site):
    # init-db runs as a process of its own: root, it opens the database as
    # www-data, who can read the option file it writes.
    site, database = mysql_site
    result = support.init_db(site, database)
    assert result.returncode == 0, result.stderr
    assert database['db'] in databases()
    # The tables and the root application with the sample content exist.
    assert read_comments(site.zconfig) == []
    add_comment(site.zconfig, 'kept')
    assert read_comments(site.zconfig) == ['kept']
    # Again: nothing lost, the password set again.
    result = support.init_db(site, database)
    assert result.returncode == 0, result.stderr
    assert read_comments(site.zconfig) == ['kept']
    assert database['password'] not in result.stdout + result.stderr
    assert "IDENTIFIED BY '***'" in result.stdout
    assert 'Traceback' not in result.stderr
    result = support.init_db(site, database, '--drop')
    assert result.returncode == 0, result.stderr
    assert database['db'] not in databases()


def test_two_servers_on_one_database_see_each_others_writes(mysql_site):
    support.need_mod_wsgi()
    site, database = mysql_site
    result = support.init_db(site, database)
    assert result.returncode == 0, result.stderr
    first = support.ModWsgiServer(site, processes=1, threads=2)
    second = support.ModWsgiServer(site, processes=1, threads=2)
    with support.running(first, second):
        # Both have the page in their caches before the write.
        for server in (first, second):
            assert support.request(server.port, support.PAGE)[0] == 200
        status, headers, body = support.request(
            first.port, support.PAGE + '/@@add-comment', 'POST',
            b'author=Ann&text=written+through+the+first',
            headers={'Content-Type': 'application/x-www-form-urlencoded'})
        assert status == 303
        status, headers, page = support.request(second.port, support.PAGE)
        assert 'written through the first' in page
        assert support.request(second.port, '/counter/@@increment',
                               'POST', b'')[2] == '1'
        assert support.request(first.port, '/counter')[2] == '1'
        assert headers['X-Pipeline-Pid'] not in support.request(
            first.port, support.PAGE)[1]['X-Pipeline-Pid']
    # Each process closed its database at shutdown: RelStorage wrote its
    # local cache to cache-local-dir.
    cache = os.path.join(site.var, 'relstorage-cache')
    assert os.listdir(cache), first.log() + second.log()


def test_mysql_cnf_sets_only_variables_the_server_knows():
    """etc/mysql/zope-pipeline.cnf: a typo would stop the server."""
    import configparser
    support.need_mysql()
    parser = configparser.ConfigParser()
    parser.read(os.path.join(support.ROOT, 'etc', 'mysql',
                             'zope-pipeline.cnf'))
    settings = dict(parser.items('mysqld'))
    assert 'max_connections' in settings
    admin = support.mysql_admin()
    try:
        cursor = admin.cursor()
        for name in settings:
            cursor.execute('SHOW GLOBAL VARIABLES LIKE %s', (name,))
            assert cursor.fetchall(), name
    finally:
        admin.close()
