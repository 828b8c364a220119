"""zope-pipeline shell and run: the site of an ini loaded, its database
open, root, app, publisher, registry, db, connection and
transaction_manager at hand; only what is committed is kept."""

import code
import os
import subprocess
import sys

import pytest
import zope.testing.cleanup
from zope.component import getGlobalSiteManager
from zope.component.hooks import getSite

from zope.pipeline.cli import main
from zope.pipeline.commands import console
from zope.pipeline.zodb import storage

from tests.conftest import ROOT

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
open_root.zodb_config = %%(here)s/zodb.conf
open_root.populate = zope.pipeline.sample.content.populate
'''

ZCONFIG = '''\
%import relstorage
<zodb main>
  <relstorage>
    keep-history false
    <sqlite3>
      data-dir $here/var
    </sqlite3>
  </relstorage>
</zodb>
'''


@pytest.fixture
def ini(tmp_path):
    (tmp_path / 'zodb.conf').write_text(ZCONFIG)
    path = tmp_path / 'site.ini'
    path.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    return str(path)


def as_a_new_process():
    """What a second command in a new process would start from: no
    component registered, no database open."""
    storage.close_all()
    zope.testing.cleanup.cleanUp()


def write_script(tmp_path, text):
    script = tmp_path / 'script.py'
    script.write_text(text)
    return str(script)


def test_the_shell_offers_the_site_and_aborts_what_was_not_committed(
        clean_zope, ini, monkeypatch):
    sessions = []

    def interact(banner, local, exitmsg):
        root = local['root']
        sessions.append({
            'banner': banner, 'names': set(local),
            'site is root': getSite() is root, 'items': sorted(root),
            'registry': local['registry'],
            'request types': list(
                local['publisher'].describe()['request_types']),
            'manager': local['connection'].transaction_manager is (
                local['transaction_manager'])})
        root['scratch'] = root['folder']['page']

    monkeypatch.setattr(code, 'interact', interact)
    assert main(['shell', ini]) == 0
    as_a_new_process()
    assert main(['shell', ini]) == 0
    first, second = sessions
    assert first['names'] == {name for name, _what in console.NAMES}
    assert first['banner'].startswith(
        'zope.pipeline shell for %s.  At hand:\n  root ' % ini)
    assert 'transaction_manager.commit()' in first['banner']
    assert first['site is root'] and first['manager']
    assert first['items'] == second['items'] == ['counter', 'folder']
    assert second['registry'] is getGlobalSiteManager()
    assert first['request types'] == ['browser', 'xmlrpc', 'http']
    assert getSite() is None


def test_a_script_runs_with_the_site_and_keeps_what_it_commits(
        clean_zope, ini, tmp_path, capsys):
    write = write_script(tmp_path, (
        'import sys\n'
        'root["folder"].title = sys.argv[1]\n'
        'root["folder"]["page"].title = "not committed"\n'
        'transaction_manager.commit()\n'
        'root["folder"]["page"].title = "aborted"\n'))
    assert main(['run', ini, write, 'Renamed']) == 0
    as_a_new_process()
    read = write_script(tmp_path, (
        'print(root["folder"].title, "/", root["folder"]["page"].title,'
        ' "/", __name__)\n'))
    assert main(['run', ini, read]) == 0
    assert capsys.readouterr().out == (
        'Renamed / not committed / __main__\n')


def test_a_failing_script_leaves_nothing(clean_zope, ini, tmp_path, capsys):
    fail = write_script(tmp_path, 'root["folder"].title = "half"\n'
                                  'raise RuntimeError("stop")\n')
    with pytest.raises(RuntimeError, match='stop'):
        main(['run', ini, fail])
    as_a_new_process()
    read = write_script(tmp_path, 'print(root["folder"].title)\n')
    assert main(['run', ini, read]) == 0
    assert capsys.readouterr().out == 'A folder of pages\n'
    assert getSite() is None


def test_a_missing_script_or_ini_is_named(clean_zope, ini, tmp_path):
    with pytest.raises(SystemExit, match='The script .*nothing.py does not '
                       'exist'):
        main(['run', ini, str(tmp_path / 'nothing.py')])
    script = write_script(tmp_path, 'pass\n')
    with pytest.raises(SystemExit, match='The ini file .*none.ini does not '
                       'exist'):
        main(['run', str(tmp_path / 'none.ini'), script])


def test_a_site_without_a_database_is_refused(clean_zope, tmp_path):
    ini = tmp_path / 'plain.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'site_zcml = %s\n' % os.path.join(
                       ROOT, 'tests', 'engine', 'base.zcml'))
    script = write_script(tmp_path, 'pass\n')
    with pytest.raises(SystemExit, match='opens no database'):
        main(['run', str(ini), script])


def test_the_shell_reads_commands_from_its_input(ini):
    script = os.path.join(os.path.dirname(sys.executable), 'zope-pipeline')
    done = subprocess.run([script, 'shell', ini], input=(
        'print(sorted(root))\n'), capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stderr
    assert "['counter', 'folder']" in done.stdout
