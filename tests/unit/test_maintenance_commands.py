"""``zope-pipeline pack`` and ``zope-pipeline check``: the database an ini
names, packed keeping --days of history, and checked object by object.

The storages are real: ZODB's FileStorage (whose records a test can write
by hand: a dangling reference, a class that is gone, a record that is not
a pickle) and RelStorage on SQLite with the sample site."""

import os
import sys
import types

import pytest
import transaction
import ZODB
from persistent import Persistent
from persistent.mapping import PersistentMapping
from ZODB.Connection import TransactionMetaData
from ZODB.FileStorage import FileStorage
from ZODB.utils import p64
from ZODB.utils import z64

from zope.pipeline.cli import main
from zope.pipeline.commands import pack as pack_command
from zope.pipeline.zodb import maintenance
from zope.pipeline.zodb import storage

from tests.conftest import ROOT

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
open_root.zodb_config = %%(here)s/zodb.conf
''' % os.path.join(ROOT, 'etc', 'site.zcml')

FILESTORAGE = '''\
<zodb main>
  <filestorage>
    path %s
  </filestorage>
</zodb>
'''

SQLITE = '''\
%%import relstorage
<zodb main>
  <relstorage>
    keep-history false
    <sqlite3>
      data-dir %s
    </sqlite3>
  </relstorage>
</zodb>
'''


def site(tmp_path, zconfig):
    (tmp_path / 'zodb.conf').write_text(zconfig)
    ini = tmp_path / 'site.ini'
    ini.write_text(INI)
    return str(ini)


@pytest.fixture
def filestorage_site(tmp_path):
    path = str(tmp_path / 'Data.fs')
    db = ZODB.DB(FileStorage(path))
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    manager.begin()
    connection.root()['kept'] = PersistentMapping({'x': 1})
    connection.root()['dropped'] = PersistentMapping({'y': 2})
    manager.commit()
    manager.begin()
    del connection.root()['dropped']        # unreachable from now on
    manager.commit()
    connection.close()
    db.close()
    return site(tmp_path, FILESTORAGE % path), path


def run(capsys, *args):
    status = main(list(args))
    return status, capsys.readouterr().out


def test_check_of_a_sound_database_says_ok(filestorage_site, capsys):
    ini, path = filestorage_site
    status, out = run(capsys, 'check', ini)
    assert status == 0
    assert out.endswith(
        '): 2 objects reachable from the root, 3 stored (1 unreachable, '
        'removed by a pack); 0 dangling references, 0 objects of missing '
        'classes, 0 unreadable records: OK.\n')
    assert out.startswith('Database main (%s' % os.path.dirname(ini))


def test_pack_removes_the_unreachable_object_then_check_finds_none(
        filestorage_site, capsys):
    ini, path = filestorage_site
    status, out = run(capsys, 'pack', ini)
    assert status == 0
    assert ', keeping 0 days of history: 3 objects before, 2 after, in ' in \
        out
    assert run(capsys, 'check', ini)[1].split(': ', 1)[1].startswith(
        '2 objects reachable from the root, 2 stored (0 unreachable')


def test_pack_keeps_the_days_asked_for(filestorage_site, capsys):
    ini, path = filestorage_site
    status, out = run(capsys, 'pack', ini, '--days', '1')
    assert status == 0
    # the object became unreachable less than a day ago: kept
    assert 'keeping 1 days of history: 3 objects before, 3 after' in out


def test_days_must_not_be_negative():
    with pytest.raises(ValueError):
        pack_command.non_negative('-1')
    with pytest.raises(SystemExit):
        main(['pack', 'x.ini', '--days', '-1'])


def write_record(path, oid, data):
    """Store ``data`` as the record of ``oid``, by hand."""
    file_storage = FileStorage(path)
    try:
        txn = TransactionMetaData()
        try:
            serial = file_storage.load(oid)[1]
        except KeyError:
            serial = z64
        file_storage.tpc_begin(txn)
        file_storage.store(oid, serial, data, '', txn)
        file_storage.tpc_vote(txn)
        file_storage.tpc_finish(txn)
    finally:
        file_storage.close()


def root_data(path):
    file_storage = FileStorage(path, read_only=True)
    try:
        return file_storage.load(z64)[0]
    finally:
        file_storage.close()


def test_check_finds_a_dangling_reference(filestorage_site, capsys):
    ini, path = filestorage_site
    kept = p64(1)
    missing = p64(0x63)
    data = root_data(path)
    assert data.count(kept) == 1
    write_record(path, z64, data.replace(kept, missing))
    status, out = run(capsys, 'check', ini)
    assert status == 1
    assert out.startswith('  reference to a missing object: 0x63 (from '
                          '0x00)\n')
    assert '1 dangling references' in out and out.endswith(': PROBLEMS.\n')


class Gone(Persistent):
    """A class whose module is removed before the check."""


def test_check_finds_objects_whose_class_is_gone(filestorage_site, capsys,
                                                 monkeypatch):
    ini, path = filestorage_site
    module = types.ModuleType('zope_pipeline_test_gone')
    module.Gone = Gone
    Gone.__module__ = module.__name__
    monkeypatch.setitem(sys.modules, module.__name__, module)
    db = ZODB.DB(FileStorage(path))
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    manager.begin()
    connection.root()['gone'] = Gone()
    manager.commit()
    connection.close()
    db.close()
    monkeypatch.delitem(sys.modules, module.__name__)
    status, out = run(capsys, 'check', ini)
    assert status == 1
    assert '  class not importable: object 0x03 is a ' \
        'zope_pipeline_test_gone.Gone\n' in out


def test_check_finds_a_record_that_is_not_a_pickle(filestorage_site,
                                                   capsys):
    ini, path = filestorage_site
    write_record(path, p64(1), b'not a pickle')
    status, out = run(capsys, 'check', ini)
    assert status == 1
    assert '  unreadable record: object 0x01: ' in out


def test_check_lists_20_problems_of_a_kind_and_counts_the_rest(
        filestorage_site, capsys):
    ini, path = filestorage_site
    # a root referencing 25 objects that do not exist
    db = ZODB.DB(FileStorage(path))
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    manager.begin()
    for number in range(25):
        connection.root()['item%d' % number] = PersistentMapping()
    manager.commit()
    connection.close()
    db.close()
    data = root_data(path)
    for number in range(25):
        oid = p64(number + 3)
        assert data.count(oid) == 1
        data = data.replace(oid, p64(0x1000 + number))
    write_record(path, z64, data)
    status, out = run(capsys, 'check', ini)
    assert status == 1
    assert out.count('reference to a missing object') == 20
    assert '  ... and 5 more\n' in out
    assert '25 dangling references' in out


def test_pack_and_check_of_relstorage_on_sqlite(tmp_path, capsys):
    config = SQLITE % (tmp_path / 'var')
    ini = site(tmp_path, config)
    db = storage.open_database(str(tmp_path / 'zodb.conf'))
    storage.bootstrap(db, 'Application', storage.create_root_folder)
    db.close()
    status, out = run(capsys, 'check', ini)
    assert status == 0 and out.endswith(': OK.\n')
    reachable = int(out.split('): ')[1].split()[0])
    status, out = run(capsys, 'pack', ini, '--days', '0.5')
    assert status == 0
    assert 'keeping 0.5 days of history: %d objects before, %d after' % (
        reachable, reachable) in out


def test_an_ini_without_a_database_file_is_refused(tmp_path):
    ini = tmp_path / 'memory.ini'
    ini.write_text(INI.replace('open_root.zodb_config = %(here)s/zodb.conf',
                               ''))
    with pytest.raises(SystemExit, match='sets no open_root.zodb_config'):
        main(['check', str(ini)])
    with pytest.raises(SystemExit, match='does not exist'):
        main(['pack', str(tmp_path / 'missing.ini')])
    ini.write_text(INI)
    with pytest.raises(SystemExit, match=r'zodb.conf \(open_root.zodb_'
                                         r'config in .*\) does not exist'):
        main(['check', str(ini)])


def test_classes_are_looked_up_once():
    imports = maintenance.ClassImports()
    assert imports('persistent.mapping', 'PersistentMapping')
    assert not imports('persistent.mapping', 'Nothing')
    assert not imports('no_such_module_here', 'X')
    imports.known[('persistent.mapping', 'PersistentMapping')] = 'cached'
    assert imports('persistent.mapping', 'PersistentMapping') == 'cached'
