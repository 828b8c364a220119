"""www-data -> root through the commands root runs on a served site: the
database is www-data's (the daemon processes write it), so www-data can
store any pickle in it; a command that unpickles it as root runs
www-data's code as root.

Each test runs a command as root, in a subprocess, on a site whose
var/data is www-data's and whose root folder holds a planted object whose
unpickling records the uid that unpickled it (tests/security/planted.py).
The payload must never run as root: the commands that open the database
become www-data first (and then the payload runs as www-data, which
shows the test reaches it), or refuse; ``check``, ``pack`` and
``show-pipeline`` never unpickle it at all.
"""

import os
import pwd
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.conftest import need
from tests.integration import support
from tests.security.planted import recorded_uids

PLANT = '''\
import sys
from tests.security.planted import Payload
root.planted = Payload(sys.argv[1])
connection.root()['planted'] = Payload(sys.argv[1])
transaction_manager.commit()
'''

READ = '''\
print('root folder', sorted(root.keys())[:1])
'''


@pytest.fixture(scope='module')
def served_site():
    """etc/ as shipped in a project every user may pass through; the
    payload planted in the database's root folder and in its root
    mapping (which every opening of the database reads), then var/data given to
    www-data as `serve` run by root does; (project, markers)."""
    need(os.geteuid() == 0, 'running commands as root needs root')
    www_data = pwd.getpwnam('www-data')
    with support.scratch_directory() as project:
        shutil.copytree(os.path.join(ROOT, 'etc'),
                        os.path.join(project, 'etc'))
        os.mkdir(os.path.join(project, 'var'))
        markers = os.path.join(project, 'markers')
        os.mkdir(markers)
        os.chmod(markers, 0o1777)
        for name, text in (('plant.py', PLANT), ('read.py', READ)):
            with open(os.path.join(project, name), 'w') as stream:
                stream.write(text)
        done = command(project, 'run', 'plant.py', markers)
        assert done.returncode == 0, done.stderr
        assert recorded_uids(markers) == set()
        for parent, directories, files in os.walk(
                os.path.join(project, 'var', 'data')):
            for name in [parent] + [os.path.join(parent, entry)
                                    for entry in directories + files]:
                os.chown(name, www_data.pw_uid, www_data.pw_gid)
        yield project, markers


@pytest.fixture
def site(served_site):
    project, markers = served_site
    for name in os.listdir(markers):
        os.unlink(os.path.join(markers, name))
    return served_site


def command(project, name, *args, stdin=None, ini='etc/deploy.ini'):
    """``zope-pipeline NAME INI ARGS`` run by root in the project."""
    environment = support.command_environment()
    return subprocess.run(
        [support.ZOPE_PIPELINE, name, ini] + list(args), cwd=project,
        input=stdin, capture_output=True, text=True, timeout=120,
        env=environment)


def www_data_uid():
    return pwd.getpwnam('www-data').pw_uid


def test_planted_pickle_does_not_run_as_root_through_explain(site):
    project, markers = site
    done = command(project, 'explain', '/')
    assert 0 not in recorded_uids(markers)
    assert done.returncode == 0, done.stderr
    assert 'running as www-data' in done.stderr
    assert 'Traversal' in done.stdout or 'traversal' in done.stdout
    # The payload was reached, by www-data.
    assert recorded_uids(markers) == {www_data_uid()}


def test_planted_pickle_does_not_run_as_root_through_run(site):
    project, markers = site
    done = command(project, 'run', 'read.py')
    assert 0 not in recorded_uids(markers)
    assert done.returncode == 0, done.stderr
    assert 'root folder' in done.stdout
    assert recorded_uids(markers) == {www_data_uid()}


def test_planted_pickle_does_not_run_as_root_through_shell(site):
    project, markers = site
    done = command(project, 'shell', stdin='import os\n'
                   'print("uid", os.getuid(), root.planted)\n')
    assert 0 not in recorded_uids(markers)
    assert done.returncode == 0, done.stderr
    assert 'uid %d None' % www_data_uid() in done.stdout
    assert recorded_uids(markers) == {www_data_uid()}


def test_planted_pickle_does_not_run_as_root_through_init_db(site):
    """init-db's last step opens the database as the application will
    (its MySQL part needs a server; this step is the same for SQLite)."""
    project, markers = site
    done = subprocess.run(
        [sys.executable, '-c', 'import sys; from zope.pipeline.commands.'
         'init_db import prepare_database; prepare_database(sys.argv[1])',
         os.path.join(project, 'etc', 'deploy.ini')],
        capture_output=True, text=True, timeout=120,
        env=support.command_environment())
    assert 0 not in recorded_uids(markers)
    assert done.returncode == 0, done.stderr
    assert recorded_uids(markers) == {www_data_uid()}


@pytest.mark.parametrize('name', ['check', 'pack', 'show-pipeline'])
def test_planted_pickle_is_never_unpickled_by_check_pack_show_pipeline(
        site, name):
    project, markers = site
    done = command(project, name)
    assert done.returncode == 0, done.stderr
    assert recorded_uids(markers) == set()
    # check and pack open the storage's files: as www-data, whose they
    # are; show-pipeline never opens the database.
    assert ('running as www-data' in done.stderr) == (name != 'show-pipeline')


def test_planted_pickle_does_not_run_as_root_when_www_data_cannot_read(
        site, tmp_path):
    """The ini is in a directory closed to www-data: the command cannot
    run as www-data, and refuses, saying how to run it."""
    project, markers = site
    closed = tmp_path / 'closed'
    closed.mkdir(mode=0o700)
    ini = closed / 'deploy.ini'
    with open(os.path.join(project, 'etc', 'deploy.ini')) as stream:
        ini.write_text(stream.read().replace(
            '%(here)s', os.path.join(project, 'etc')).replace(
            'site_zcml = ', 'site_zcml = %s/' % os.path.join(project,
                                                            'etc')))
    done = command(project, 'explain', '/', ini=str(ini))
    assert recorded_uids(markers) == set()
    assert done.returncode == 1
    assert 'www-data cannot read %s' % ini in done.stderr
    assert 'runuser -u www-data -- zope-pipeline explain' in done.stderr
