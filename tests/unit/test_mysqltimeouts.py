"""The <mysql-with-timeouts> ZConfig section: RelStorage's <mysql> keys
plus read_timeout and write_timeout, given to mysqlclient's connect()."""

import io
import os

import pytest
import ZConfig
import ZODB.config
from relstorage.options import Options

from zope.pipeline import mysqltimeouts
from zope.pipeline.storage import load_database_config

from tests.conftest import ROOT

SECTION = '''\
%%import relstorage
%%import zope.pipeline
<zodb main>
  <relstorage>
    commit-lock-timeout %(commit_lock_timeout)s
    <mysql-with-timeouts>
      driver MySQLdb
      host 127.0.0.1
      db zp
      user zp
      connect_timeout 2
%(extra)s
    </mysql-with-timeouts>
  </relstorage>
</zodb>
'''


def parse(extra='', commit_lock_timeout=1):
    text = SECTION % {'extra': extra,
                      'commit_lock_timeout': commit_lock_timeout}
    config, _ = ZConfig.loadConfigFile(ZODB.config.getDbSchema(),
                                       io.StringIO(text))
    return config


def storage_factory(config):
    return config.database[0].config.storage


def adapter_factory(config):
    return storage_factory(config).config.adapter


def created(config, commit_lock_timeout=1):
    """The MySQLAdapter the section makes (no connection is opened)."""
    return adapter_factory(config).create(
        Options(commit_lock_timeout=commit_lock_timeout))


def test_the_timeouts_reach_mysqlclients_connect_with_the_other_keys():
    adapter = created(parse('      read_timeout 5\n      write_timeout 6'))
    assert adapter._params == {'host': '127.0.0.1', 'db': 'zp', 'user': 'zp',
                               'connect_timeout': 2, 'read_timeout': 5,
                               'write_timeout': 6}


def test_the_defaults_are_3_seconds():
    params = created(parse())._params
    assert (params['read_timeout'], params['write_timeout']) == (3, 3)


def test_zero_means_no_timeout():
    params = created(parse('      read_timeout 0\n      write_timeout 0'),
                     commit_lock_timeout=30)._params
    assert 'read_timeout' not in params and 'write_timeout' not in params


def test_a_negative_timeout_is_refused_naming_it():
    with pytest.raises(ZConfig.DataConversionError,
                       match='a timeout is 0 .none. or a number of seconds'):
        parse('      read_timeout -1')


def test_a_read_timeout_a_commit_could_wait_for_the_lock_is_refused():
    config = parse(commit_lock_timeout=30)
    with pytest.raises(ZConfig.ConfigurationError) as raised:
        created(config, commit_lock_timeout=30)
    assert str(raised.value) == (
        'read_timeout 3 of the <mysql-with-timeouts> section must be longer '
        'than commit-lock-timeout 30 of the <relstorage> section (the '
        "longest a commit waits for the lock; RelStorage's default is 30): "
        'lower commit-lock-timeout (e.g. 2) or raise read_timeout')
    with pytest.raises(ZConfig.ConfigurationError):
        created(config, commit_lock_timeout=3)     # equal is too short too


def test_without_timeouts_turns_them_off_for_one_open():
    config = parse('      read_timeout 5')
    assert mysqltimeouts.without_timeouts(config) == 1
    params = created(config, commit_lock_timeout=30)._params
    assert 'read_timeout' not in params and 'write_timeout' not in params
    assert params['connect_timeout'] == 2
    # a new parse has them again
    assert created(parse('      read_timeout 5'))._params['read_timeout'] == 5


def test_without_timeouts_finds_nothing_in_other_storages(tmp_path):
    config = load_database_config(os.path.join(ROOT, 'etc',
                                               'zodb-sqlite.conf'))
    assert mysqltimeouts.without_timeouts(config) == 0


def test_the_shipped_mysql_configuration_uses_the_section():
    config = load_database_config(os.path.join(ROOT, 'etc',
                                               'zodb-mysql.conf'))
    adapter = adapter_factory(config)
    assert isinstance(adapter, mysqltimeouts.MySQLAdapterWithTimeouts)
    assert mysqltimeouts.is_mysql_adapter(adapter)
    assert (adapter.config.read_timeout, adapter.config.write_timeout) == \
        (3, 3)
    options = Options.copy_valid_options(storage_factory(config).config)
    assert options.commit_lock_timeout < adapter.config.read_timeout
    params = adapter.create(options)._params
    assert params['read_timeout'] == 3 and params['connect_timeout'] == 2


def test_relstorages_own_section_is_a_mysql_adapter_too():
    text = SECTION.replace('mysql-with-timeouts', 'mysql').replace(
        '%%import zope.pipeline\n', '')
    config, _ = ZConfig.loadConfigFile(
        ZODB.config.getDbSchema(), io.StringIO(
            text % {'extra': '', 'commit_lock_timeout': 30}))
    assert mysqltimeouts.is_mysql_adapter(adapter_factory(config))
    assert mysqltimeouts.without_timeouts(config) == 0
    assert not mysqltimeouts.is_mysql_adapter(object())


def test_section_factories_stops_at_its_depth():
    assert list(mysqltimeouts.section_factories(parse(), depth=0)) == []
    assert list(mysqltimeouts.section_factories(object())) == []
