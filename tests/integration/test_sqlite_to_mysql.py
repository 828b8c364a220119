"""A site moves from SQLite to MySQL, and is backed up and restored there,
with the recipes of docs/deployment.md: RelStorage's ``zodbconvert`` with
the etc/zodbconvert.conf the docs show, then ``mysqldump
--single-transaction --routines`` restored into a new database.  The
site is a project ``zope-pipeline create`` wrote, with a document added
and a blob stored through ZODB (its storages keep blobs in the database,
``shared-blob-dir false``, as the docs say a site storing blobs does);
after each step the MySQL site serves the same pages and holds the same
blob."""

import hashlib
import json
import os
import pwd
import re
import shutil
import subprocess
import textwrap

import pytest

from zope.pipeline.serving import layout
from zope.pipeline.serving import ownership

from tests.conftest import ROOT
from tests.integration import support

pytestmark = pytest.mark.integration

PAGES = ('/', '/welcome', '/opening-hours')
BLOB = b'a file of the site\n' * 5000

ADD_CONTENT = '''
from ZODB.blob import Blob
from %(package)s.content import Document
root['opening-hours'] = Document('Opening hours', 'Every day.')
blob = Blob()
with blob.open('w') as stream:
    stream.write(%(blob)r)
connection.root()['blob'] = blob
transaction_manager.commit()
'''

READ_BLOB = '''
import hashlib
with connection.root()['blob'].open() as stream:
    print(hashlib.sha256(stream.read()).hexdigest())
'''


def zodbconvert_conf(package):
    """etc/zodbconvert.conf as docs/deployment.md shows it, for the
    database of ``package``."""
    with open(os.path.join(ROOT, 'docs', 'deployment.md')) as stream:
        text = stream.read()
    block = re.search(r'\n( *)```\n *# etc/zodbconvert\.conf.*?\n *```\n',
                      text, re.DOTALL).group(0)
    lines = block.strip('\n').splitlines()[1:-1]
    conf = textwrap.dedent('\n'.join(lines)) + '\n'
    assert 'db mysite\n' in conf and 'user mysite\n' in conf
    return conf.replace(' mysite\n', ' %s\n' % package)


def with_blobs(path, blob_dir):
    """The storage of a ZConfig file keeping blobs in its database."""
    with open(path) as stream:
        text = stream.read()
    text = text.replace(
        '    keep-history false\n',
        '    keep-history false\n    blob-dir %s\n    shared-blob-dir false\n'
        % blob_dir, 1)
    assert 'blob-dir' in text
    with open(path, 'w') as stream:
        stream.write(text)


class Project:

    def __init__(self, directory, package, password):
        self.directory = directory
        self.package = package
        self.password = password

    def env(self):
        return support.command_environment({
            'PYTHONPATH': os.path.join(self.directory, 'src'),
            'ZOPE_PIPELINE_DB_PASSWORD': self.password})

    def run(self, command, timeout=120, cwd=None):
        done = subprocess.run(command, cwd=cwd or self.directory,
                              env=self.env(),
                              capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        return done.stdout

    def zope_pipeline(self, *args):
        return self.run([support.ZOPE_PIPELINE] + list(args))

    def script(self, ini, text):
        path = os.path.join(self.directory, 'script.py')
        with open(path, 'w') as stream:
            stream.write(text)
        return self.zope_pipeline('run', ini, path)

    def pages(self, ini):
        return {path: self.zope_pipeline('request', ini, path)
                for path in PAGES}

    def blob_digest(self, ini):
        return self.script(ini, READ_BLOB).strip()


def mysql_rows(sql):
    admin = support.mysql_admin()
    try:
        cursor = admin.cursor()
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        admin.close()


@pytest.fixture(scope='module')
def converted():
    """The project served from SQLite (its pages and blob read then),
    then converted to MySQL with the docs' recipe."""
    support.need_mysql()
    with support.scratch_directory() as scratch, \
            support.mysql_database() as database:
        directory = os.path.join(scratch, 'mysite')
        package = database['db']
        project = Project(directory, package, database['password'])
        project.run([support.ZOPE_PIPELINE, 'create', directory,
                     '--package', package], cwd=scratch)
        etc = os.path.join(directory, 'etc')
        var = os.path.join(directory, 'var')
        with_blobs(os.path.join(etc, 'zodb-sqlite.conf'),
                   '$here/../var/blobs')
        with_blobs(os.path.join(etc, 'zodb-mysql.conf'),
                   '$here/../var/blob-cache')
        if os.geteuid() == 0:
            # The storage directories, the server's user's, as `serve`
            # run by root lays them out; commands run by root then open
            # the database as that user.
            for name in ('data', 'blobs', 'blob-cache', 'relstorage-cache'):
                layout.make_private_tree(
                    os.path.join(var, name),
                    layout.daemon_of(*ownership.run_as()))
        project.script('etc/deploy.ini', ADD_CONTENT % {
            'package': package, 'blob': BLOB})
        project.sqlite_pages = project.pages('etc/deploy.ini')
        project.sqlite_blob = project.blob_digest('etc/deploy.ini')
        project.zope_pipeline('init-db', 'etc/deploy-mysql.ini')
        with open(os.path.join(etc, 'zodbconvert.conf'), 'w') as stream:
            stream.write(zodbconvert_conf(package))
        project.run([support.ZOPE_PIPELINE, 'convert', '--clear',
                     'etc/zodbconvert.conf'], timeout=300)
        project.data_owners = owners(os.path.join(var, 'data'))
        for name in ('zodbconvert', 'relstorage-cache'):
            shutil.rmtree(os.path.join(var, name))
        yield project


def owners(directory):
    """The owners (uids) of a directory and of the files it holds."""
    return {os.stat(os.path.join(path, name)).st_uid
            for path, _directories, names in os.walk(directory)
            for name in names + ['.']}


def test_the_sqlite_site_had_its_pages_and_blob(converted):
    assert 'Opening hours' in converted.sqlite_pages['/']
    assert 'Every day.' in converted.sqlite_pages['/opening-hours']
    assert converted.sqlite_blob == hashlib.sha256(BLOB).hexdigest()


def test_zodbconvert_run_by_root_leaves_the_sqlite_files_to_their_owner(
        converted):
    # root opened them for the copy: none became root's, so the SQLite
    # site still serves if it has to.
    expected = {pwd.getpwnam(ownership.run_as()[0]).pw_uid} \
        if os.geteuid() == 0 else {os.geteuid()}
    assert converted.data_owners == expected


def test_the_site_converted_to_mysql_serves_the_same_pages(converted):
    assert converted.pages('etc/deploy-mysql.ini') == converted.sqlite_pages


def test_the_converted_blob_is_in_mysql_and_reads_the_same(converted):
    (chunks,), = mysql_rows('SELECT COUNT(*) FROM `%s`.blob_chunk'
                            % converted.package)
    assert chunks >= 1
    assert converted.blob_digest('etc/deploy-mysql.ini') == \
        converted.sqlite_blob


def test_a_mysqldump_restored_into_a_new_database_serves_the_site(
        converted):
    directory = converted.directory
    with support.mysql_database() as restored:
        name = restored['db']
        dump = os.path.join(directory, 'var', 'site.sql')
        with open(dump, 'w') as stream:
            done = subprocess.run(
                ['mysqldump', '--single-transaction', '--routines',
                 converted.package], stdout=stream, stderr=subprocess.PIPE,
                text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        mysql_rows('CREATE DATABASE `%s`' % name)
        with open(dump) as stream:
            done = subprocess.run(['mysql', name], stdin=stream,
                                  capture_output=True, text=True,
                                  timeout=120)
        assert done.returncode == 0, done.stderr
        mysql_rows("GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'localhost', "
                   "'%s'@'127.0.0.1'" % (name, converted.package,
                                         converted.package))
        etc = os.path.join(directory, 'etc')
        with open(os.path.join(etc, 'zodb-mysql.conf')) as stream:
            conf = stream.read()
        assert '      db %s\n' % converted.package in conf
        with open(os.path.join(etc, 'zodb-restored.conf'), 'w') as stream:
            stream.write(conf.replace('      db %s\n' % converted.package,
                                      '      db %s\n' % name))
        with open(os.path.join(etc, 'deploy-mysql.ini')) as stream:
            ini = stream.read()
        with open(os.path.join(etc, 'deploy-restored.ini'), 'w') as stream:
            stream.write(ini.replace('zodb-mysql.conf', 'zodb-restored.conf'))
        assert converted.pages('etc/deploy-restored.ini') == \
            converted.sqlite_pages
        assert converted.blob_digest('etc/deploy-restored.ini') == \
            converted.sqlite_blob
        summary = json.dumps(mysql_rows(
            'SELECT COUNT(*) FROM `%s`.blob_chunk' % name))
        assert summary != '[[0]]'
