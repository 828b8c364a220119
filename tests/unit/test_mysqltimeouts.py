"""The <mysql-with-timeouts> ZConfig section: RelStorage's <mysql> keys
plus read_timeout and write_timeout, given to mysqlclient's connect()."""

import io
import os

import pytest
import ZConfig
import ZODB.config
from relstorage.adapters.mysql.connmanager import MySQLdbConnectionManager
from relstorage.options import Options

from zope.pipeline.http.errors import ReplicaBehind
from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.zodb import mysqltimeouts
from zope.pipeline.zodb.storage import load_database_config

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


# -- replica_catch_up: a replica failed over to catches up first


class ReplicaCursor:
    """A cursor of a server whose ``SHOW SLAVE STATUS`` is ``status`` (a
    dict, None on a primary) and whose ``MASTER_GTID_WAIT`` answers
    ``waited``."""

    def __init__(self, status, waited=0):
        self.status = status
        self.waited = waited
        self.executed = []
        self.result = None
        self.description = None

    def execute(self, statement, arguments=None):
        self.executed.append((statement, arguments))
        if statement == 'SHOW SLAVE STATUS':
            status = self.status or {}
            self.description = [(name,) for name in status]
            self.result = tuple(status.values()) if self.status else None
        else:
            self.result = (self.waited,)

    def fetchone(self):
        return self.result


def installed_hooks(monkeypatch):
    hooks = []
    add = MySQLdbConnectionManager.add_on_load_opened

    def recording(self, hook):
        hooks.append(hook)
        return add(self, hook)
    monkeypatch.setattr(MySQLdbConnectionManager, 'add_on_load_opened',
                        recording)
    return hooks


def test_replica_catch_up_is_off_by_default(monkeypatch):
    hooks = installed_hooks(monkeypatch)
    created(parse())
    assert not [hook for hook in hooks
                if isinstance(hook, mysqltimeouts.ReplicaCatchUp)]


def test_replica_catch_up_hooks_the_load_connections_not_mysqlclient(
        monkeypatch):
    hooks = installed_hooks(monkeypatch)
    adapter = created(parse('      replica_catch_up 2'))
    [hook] = [hook for hook in hooks
              if isinstance(hook, mysqltimeouts.ReplicaCatchUp)]
    assert hook.seconds == 2
    assert 'replica_catch_up' not in adapter._params


def test_a_catch_up_the_read_timeout_would_cut_off_is_refused():
    with pytest.raises(ZConfig.ConfigurationError,
                       match='replica_catch_up 3 of the <mysql-with-'
                             'timeouts> section must be shorter than its '
                             'read_timeout 3'):
        created(parse('      replica_catch_up 3'))


def test_on_a_primary_nothing_waits():
    cursor = ReplicaCursor(None)
    mysqltimeouts.ReplicaCatchUp(2)(cursor)
    assert cursor.executed == [('SHOW SLAVE STATUS', None)]


def test_a_replica_is_used_once_it_applied_what_it_received():
    cursor = ReplicaCursor({'Slave_IO_State': '', 'Gtid_IO_Pos': '0-1-42'})
    mysqltimeouts.ReplicaCatchUp(2)(cursor)
    assert cursor.executed[-1] == ('SELECT MASTER_GTID_WAIT(%s, %s)',
                                   ('0-1-42', 2))


def test_a_replica_that_received_nothing_is_used_at_once():
    cursor = ReplicaCursor({'Gtid_IO_Pos': ''})
    mysqltimeouts.ReplicaCatchUp(2)(cursor)
    assert len(cursor.executed) == 1


def test_a_replica_behind_is_not_used_and_the_request_gets_503():
    cursor = ReplicaCursor({'Gtid_IO_Pos': '0-1-42'}, waited=-1)
    with pytest.raises(ReplicaBehind, match=r'not applied within 2 s .* '
                                            r'\(up to 0-1-42\)') as raised:
        mysqltimeouts.ReplicaCatchUp(2)(cursor)
    assert is_unavailable(raised.value)
    assert not is_transient(raised.value)


def test_each_transaction_on_a_replica_waits_for_it_to_catch_up():
    # Once the primary is back, other processes commit there while this
    # one still reads from the replica (until replica-timeout).
    catch_up = mysqltimeouts.ReplicaCatchUp(2)
    cursor = ReplicaCursor({'Gtid_IO_Pos': '0-1-42'})
    catch_up(cursor)
    cursor.status['Gtid_IO_Pos'] = '0-1-43'
    catch_up(cursor, restart=True)
    assert cursor.executed[-1] == ('SELECT MASTER_GTID_WAIT(%s, %s)',
                                   ('0-1-43', 2))
    assert len(cursor.executed) == 4


def test_a_new_transaction_on_the_primary_asks_nothing():
    catch_up = mysqltimeouts.ReplicaCatchUp(2)
    cursor = ReplicaCursor(None)
    catch_up(cursor)
    catch_up(cursor, restart=True)
    assert cursor.executed == [('SHOW SLAVE STATUS', None)]
    # A connection the hook has not seen open is not asked either.
    unseen = ReplicaCursor({'Gtid_IO_Pos': '0-1-42'})
    catch_up(unseen, restart=True)
    assert unseen.executed == []
