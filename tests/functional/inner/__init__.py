"""Fixtures of the inner-stage functional tests (open_root, handle_error,
transaction, site_events, authenticate, concurrency): content, views and
ZCML (site.zcml, beside this file), plus helpers to build sites from them.

``seen`` collects what views and subscribers observed, one dict per call;
``reset`` empties it.
"""

import base64
import os

import transaction

from zope.pipeline.zodb import storage

#: Where the MariaDB of these machines listens.
MARIADB_SOCKET = '/run/mysqld/mysqld.sock'

#: What the views and subscribers observed, in order.
seen = []

#: ZCML registering zope.error's global error reporting utility.
ERROR_REPORTING_ZCML = (
    '<utility component="zope.error.error.globalErrorReportingUtility"\n'
    '         provides="zope.error.interfaces.IErrorReportingUtility" />')

#: ZCML registering an error reporting utility that fails.
BROKEN_ERROR_REPORTING_ZCML = (
    '<utility factory="%s.views.BrokenErrorReporting"\n'
    '         provides="zope.error.interfaces.IErrorReportingUtility" />'
    % __name__)


def reset():
    del seen[:]


def site_zcml(directory, *extra):
    """Write a site ZCML that includes this package's site.zcml (and the
    ``extra`` ZCML snippets); return its path.

    Including by package keeps the dotted names in site.zcml relative, so
    they work whatever name pytest gives this package.
    """
    path = os.path.join(str(directory), 'inner-site.zcml')
    with open(path, 'w') as handle:
        handle.write('<configure xmlns="http://namespaces.zope.org/zope">\n'
                     '  <include package="%s" file="site.zcml" />\n%s\n'
                     '</configure>\n' % (__name__, '\n'.join(extra)))
    return path


def settings(**values):
    """Stage settings from ``stage__key=value`` keywords, over the defaults
    of these tests (no retry backoff; the content of ``content.populate``)."""
    result = {'retry': {'backoff': '0'},
              'open_root': {'populate': __name__ + '.content.populate'}}
    for name, value in values.items():
        stage, _, key = name.partition('__')
        result.setdefault(stage, {})[key] = value
    return result


def database(config='', root_name='Application'):
    """The ZODB.DB the open_root stage of these settings uses."""
    return storage.database_for(config, root_name).get()



def basic_auth(login, password):
    """The Authorization header of HTTP basic auth."""
    token = base64.b64encode(('%s:%s' % (login, password)).encode('utf-8'))
    return {'Authorization': 'Basic ' + token.decode('ascii')}


def sqlite_config(directory):
    """Write a ZConfig file for RelStorage on SQLite in ``directory``;
    return its path."""
    path = os.path.join(str(directory), 'zodb-sqlite.conf')
    with open(path, 'w') as handle:
        handle.write('%%import relstorage\n'
                     '<zodb main>\n'
                     '  <relstorage>\n'
                     '    keep-history false\n'
                     '    <sqlite3>\n'
                     '      data-dir %s\n'
                     '    </sqlite3>\n'
                     '  </relstorage>\n'
                     '</zodb>\n' % os.path.join(str(directory), 'data'))
    return path


def mysql_config(directory, database_name, cache_local_dir=None):
    """Write a ZConfig file for RelStorage on the local MariaDB (root over
    its socket), with a persistent local cache in ``cache_local_dir`` if
    given; return its path."""
    path = os.path.join(str(directory), 'zodb-mysql.conf')
    cache = ('    cache-local-dir %s\n' % cache_local_dir
             if cache_local_dir else '')
    with open(path, 'w') as handle:
        handle.write('%%import relstorage\n'
                     '<zodb main>\n'
                     '  <relstorage>\n'
                     '    keep-history false\n'
                     '%s'
                     '    <mysql>\n'
                     '      db %s\n'
                     '      user root\n'
                     '      unix_socket %s\n'
                     '    </mysql>\n'
                     '  </relstorage>\n'
                     '</zodb>\n' % (cache, database_name, MARIADB_SOCKET))
    return path


def commit_root(db, name, value):
    """Set ``name`` of ``db``'s root mapping to ``value`` and commit, as
    another process on the same storage would."""
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    try:
        manager.begin()
        connection.root()[name] = value
        manager.commit()
    finally:
        connection.close()


def root_oid(db):
    """The oid of ``db``'s root mapping."""
    connection = db.open()
    try:
        return connection.root()._p_oid
    finally:
        connection.close()


def build(make_testapp, directory, *extra_zcml, **settings_values):
    """The full pipeline of these fixtures in WebTest; empties ``seen``."""
    reset()
    return make_testapp(site_zcml(directory, *extra_zcml),
                        settings(**settings_values))


def in_pool(db, connection):
    """Whether ``connection`` is back among the DB pool's available ones."""
    return any(pooled is connection for _, pooled in db.pool.available)


def event_records(name):
    """The records of one kind of event in ``seen``."""
    return [record for record in seen if record.get('event') == name]


def view_records(name):
    """The records one view made in ``seen``."""
    return [record for record in seen if record.get('view') == name]


def read(getter, config='', root_name='Application'):
    """Return ``getter(root application)`` read in a connection of its own
    (so it sees what requests committed, nothing else)."""
    manager = transaction.TransactionManager(explicit=True)
    connection = database(config, root_name).open(transaction_manager=manager)
    try:
        manager.begin()
        return getter(connection.root()[root_name])
    finally:
        manager.abort()
        connection.close()


def last_transaction(config='', root_name='Application'):
    """The newest transaction record of the database's storage."""
    records = list(database(config, root_name).storage.iterator())
    return records[-1]
