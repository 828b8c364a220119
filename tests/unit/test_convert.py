"""zope-pipeline convert: RelStorage's zodbconvert, from the same
configuration file, after zope.pipeline's fixes for RelStorage (the
MariaDB dialect: tests/integration/test_sqlite_to_mysql.py converts into
MariaDB, which plain zodbconvert cannot).  Here between two RelStorages
on SQLite, each keeping its blobs in its database."""

import pytest
import transaction
import ZODB
import ZODB.config
from ZODB.blob import Blob

from zope.pipeline.cli import main
from zope.pipeline.zodb import compat

STORAGE = '''\
<relstorage %(name)s>
  keep-history false
  blob-dir %(directory)s/%(name)s-blobs
  shared-blob-dir false
  <sqlite3>
    data-dir %(directory)s/%(name)s
  </sqlite3>
</relstorage>
'''


def section(directory, name):
    return STORAGE % {'directory': directory, 'name': name}


def open_db(directory, name):
    return ZODB.DB(ZODB.config.storageFromString(
        '%import relstorage\n' + section(directory, name)))


def store(directory, name, value):
    db = open_db(directory, name)
    try:
        with db.transaction() as connection:
            connection.root()['value'] = value
            blob = Blob()
            with blob.open('w') as stream:
                stream.write(value.encode() * 1000)
            connection.root()['blob'] = blob
    finally:
        db.close()


def read(directory, name):
    """The value and blob stored, or None in an empty storage."""
    db = open_db(directory, name)
    try:
        connection = db.open()
        root = connection.root()
        if 'value' not in root:
            connection.close()
            return None
        with root['blob'].open() as stream:
            stored = root['value'], stream.read()
        transaction.abort()
        connection.close()
        return stored
    finally:
        db.close()


@pytest.fixture
def conf(tmp_path):
    store(tmp_path, 'source', 'opening hours')
    path = tmp_path / 'zodbconvert.conf'
    path.write_text('%import relstorage\n' + section(tmp_path, 'source')
                    + section(tmp_path, 'destination'))
    return path


def test_convert_copies_objects_and_blobs(conf, tmp_path):
    assert main(['convert', str(conf)]) == 0
    assert read(tmp_path, 'destination') == (
        'opening hours', b'opening hours' * 1000)


def test_convert_refuses_a_destination_holding_data_unless_cleared(
        conf, tmp_path):
    store(tmp_path, 'destination', 'older')
    with pytest.raises(SystemExit, match='Try --clear'):
        main(['convert', str(conf)])
    assert read(tmp_path, 'destination')[0] == 'older'
    assert main(['convert', str(conf), '--clear']) == 0
    assert read(tmp_path, 'destination')[0] == 'opening hours'


def test_convert_dry_run_copies_nothing(conf, tmp_path):
    assert main(['convert', str(conf), '--dry-run']) == 0
    assert read(tmp_path, 'destination') is None


def test_convert_applies_the_relstorage_fixes_first(conf, monkeypatch):
    applied = []
    monkeypatch.setattr(compat, 'apply', lambda: applied.append(True))
    assert main(['convert', str(conf), '--dry-run']) == 0
    assert applied == [True]
