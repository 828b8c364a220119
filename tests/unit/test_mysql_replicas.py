"""MySQL replicas through the project's ZConfig: RelStorage's own
``replica-conf``, ``ro-replica-conf``, ``replica-timeout`` and
``revert_when_stale`` keys in the ``<relstorage>`` section, with the
``<mysql-with-timeouts>`` adapter of etc/zodb-mysql.conf.

A replica file lists one ``host`` or ``host:port`` a line (``#``
comments and blank lines skipped), the first the preferred one; nothing
here opens a connection."""

import io

import pytest
import ZConfig
import ZODB.config
from relstorage.options import Options

TEMPLATE = '''\
%%import relstorage
%%import zope.pipeline
<zodb main>
  <relstorage>
    keep-history false
    commit-lock-timeout 1
%(relstorage)s
    <mysql-with-timeouts>
      driver MySQLdb
      host 10.44.0.1
      port 3306
      db zp
      user zp
      connect_timeout 2
      read_timeout 3
      write_timeout 3
    </mysql-with-timeouts>
  </relstorage>
</zodb>
'''


def parse(relstorage_keys):
    text = TEMPLATE % {'relstorage': relstorage_keys}
    config, _ = ZConfig.loadConfigFile(ZODB.config.getDbSchema(),
                                       io.StringIO(text))
    return config


def opened_adapter(config):
    """The options and MySQLAdapter ``RelStorageFactory.open`` makes from
    the section (as it does, without opening a storage or a connection)."""
    section = config.database[0].config.storage.config
    options = Options.copy_valid_options(section)
    options.adapter = section.adapter
    return options, section.adapter.create(options)


@pytest.fixture
def replica_files(tmp_path):
    fail_over = tmp_path / 'replicas.conf'
    fail_over.write_text('# the primary first, then its replica\n'
                         '10.44.0.1:3306\n\n10.44.0.2:3307\n')
    loads = tmp_path / 'ro-replicas.conf'
    loads.write_text('10.44.0.2:3307\n10.44.0.1:3306\n')
    return fail_over, loads


def test_replica_keys_reach_relstorages_options_and_adapter(replica_files):
    fail_over, loads = replica_files
    options, adapter = opened_adapter(parse(
        '    replica-conf %s\n    ro-replica-conf %s\n'
        '    replica-timeout 5\n    revert_when_stale false\n'
        % (fail_over, loads)))
    assert options.replica_conf == str(fail_over)
    assert options.ro_replica_conf == str(loads)
    assert options.replica_timeout == 5.0
    assert options.revert_when_stale is False
    manager = adapter.connmanager
    # Writes (and loads without ro-replica-conf) go to the first line.
    assert manager.replica_selector.current() == '10.44.0.1:3306'
    # Read-only loads go to the first line of ro-replica-conf.
    assert manager.ro_replica_selector.current() == '10.44.0.2:3307'
    # The poller refuses a state older than one it polled (a stale
    # replica): StaleConnectionError, a conflict the retry stage retries.
    assert adapter.poller.revert_when_stale is False


def test_a_replica_connection_keeps_the_sections_timeouts(replica_files):
    fail_over, loads = replica_files
    _, adapter = opened_adapter(parse('    replica-conf %s\n' % fail_over))
    manager = adapter.connmanager
    # The second line (the one RelStorage fails over to): host and port
    # replaced, mysql-with-timeouts' read/write timeouts kept.
    params = manager._alter_params(manager.replica_selector.next())
    assert (params['host'], params['port']) == ('10.44.0.2', 3307)
    assert (params['read_timeout'], params['write_timeout'],
            params['connect_timeout']) == (3, 3, 2)
    # Without ro-replica-conf, loads use the same list.
    assert manager.ro_replica_selector is manager.replica_selector


def test_revert_when_stale_is_spelt_with_underscores():
    # RelStorage's component.xml names this one key with underscores,
    # unlike its others: the hyphenated spelling of its documentation is
    # refused by ZConfig, naming it.
    options, adapter = opened_adapter(parse('    revert_when_stale true\n'))
    assert options.revert_when_stale is True
    assert adapter.poller.revert_when_stale is True
    with pytest.raises(ZConfig.ConfigurationError,
                       match="'revert-when-stale' is not a known key"):
        parse('    revert-when-stale true\n')


def test_without_replica_keys_there_is_no_selector():
    _, adapter = opened_adapter(parse(''))
    assert adapter.connmanager.replica_selector is None
    assert adapter.connmanager.ro_replica_selector is None


def test_an_empty_replica_file_is_refused(tmp_path):
    empty = tmp_path / 'replicas.conf'
    empty.write_text('# nothing\n')
    with pytest.raises(IndexError, match='No replicas specified'):
        opened_adapter(parse('    replica-conf %s\n' % empty))
