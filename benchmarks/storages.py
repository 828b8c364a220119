"""The databases the benchmarked servers use: RelStorage on SQLite in a
scratch directory, or on MySQL in a scratch database dropped afterwards.

When the site ships a ZConfig file for the storage (``etc/zodb-*.conf``)
it is the template: its tuning is kept and only where the data lives
(directory, database, user, host) is replaced.  Otherwise a history-free
RelStorage configuration is written.
"""

import re
import secrets

#: Where the scratch MySQL database is reached from the servers.
MYSQL_HOST = '127.0.0.1'
MYSQL_PORT = 3306
#: How the harness connects as administrator to create and drop it.
MYSQL_ADMIN = {'user': 'root', 'unix_socket': '/run/mysqld/mysqld.sock'}

_DEFAULT = '''\
%%import relstorage
<zodb main>
  pool-size 8
  cache-size 20000
  <relstorage>
    keep-history false
    cache-local-mb 64
    <%(adapter)s>
%(options)s
    </%(adapter)s>
  </relstorage>
</zodb>
'''

#: Keys whose value names where data lives, per adapter section.
_PLACES = {'sqlite3': ('data-dir',),
           'mysql': ('db', 'user', 'passwd', 'host', 'port')}
#: Keys dropped from a template: the scratch storage replaces them (its
#: credentials are given as options, not read from the deployment's option
#: file, whose ``$here`` only zope.pipeline's loader defines).
_DROPPED = ('unix_socket', 'cache-local-dir', 'blob-dir', 'cache-servers',
            'read_default_file')


def default_zconfig(adapter, options):
    lines = '\n'.join('      %s %s' % item for item in options.items())
    return _DEFAULT % {'adapter': adapter, 'options': lines}


def rewrite_zconfig(template, adapter, options):
    """Set ``options`` in the ``<adapter>`` section of a ZConfig text
    (``adapter``: a section type's name, or a tuple of the names it may
    have: ``('mysql', 'mysql-with-timeouts')``).

    Lines of those keys are replaced (or added after the opening tag), and
    keys naming other places (sockets, cache and blob directories, cache
    servers) are dropped.
    """
    names = (adapter,) if isinstance(adapter, str) else tuple(adapter)
    tag = r'\s*<(?:%s)(\s[^>]*)?>\s*$' % '|'.join(map(re.escape, names))
    lines = []
    pending = dict(options)
    for line in template.splitlines():
        key = line.split()[0] if line.split() else ''
        if key in _DROPPED or key in options:
            continue
        lines.append(line)
        if re.match(tag, line):
            indent = re.match(r'\s*', line).group(0) + '  '
            lines.extend('%s%s %s' % (indent, name, value)
                         for name, value in pending.items())
            pending = {}
    if pending:
        raise ValueError('The ZConfig template has no <%s> section.'
                         % names[0])
    return '\n'.join(lines) + '\n'


def zconfig(adapter, options, template_path=None):
    if template_path is None:
        return default_zconfig(
            adapter if isinstance(adapter, str) else adapter[0], options)
    with open(template_path) as template:
        return rewrite_zconfig(template.read(), adapter, options)


class SqliteStorage:
    """RelStorage on SQLite, in ``<workspace>/var/<label>``."""

    name = 'sqlite'

    def __init__(self, template=None):
        self.template = template

    def setup(self, workspace, label='sqlite'):
        """Write a ZConfig file for a fresh data directory; return its
        path."""
        data_dir = workspace.directory('var', label)
        text = zconfig('sqlite3', {'data-dir': data_dir}, self.template)
        return workspace.write('zodb-%s.conf' % label, text)

    def teardown(self):
        """Nothing to drop: the workspace directory goes away."""

    def describe(self):
        return 'RelStorage on SQLite (a fresh data directory per server)'


class MysqlStorage:
    """RelStorage on MySQL/MariaDB, in a scratch database and user."""

    name = 'mysql'

    def __init__(self, template=None, admin=None, connect=None):
        self.template = template
        self.admin = dict(admin or MYSQL_ADMIN)
        self.connect = connect
        suffix = secrets.token_hex(4)
        self.database = 'zp_bench_%s' % suffix
        self.user = 'zp_bench_%s' % suffix
        self.password = secrets.token_hex(12)
        self.created = False

    def _connection(self):
        connect = self.connect
        if connect is None:
            import MySQLdb
            connect = MySQLdb.connect
        return connect(**self.admin)

    def _execute(self, statements):
        connection = self._connection()
        try:
            cursor = connection.cursor()
            for statement in statements:
                cursor.execute(statement)
            connection.commit()
        finally:
            connection.close()

    def create(self):
        statements = ['CREATE DATABASE `%s`' % self.database]
        for host in (MYSQL_HOST, 'localhost'):
            statements.append(
                "CREATE USER '%s'@'%s' IDENTIFIED BY '%s'"
                % (self.user, host, self.password))
            statements.append("GRANT ALL ON `%s`.* TO '%s'@'%s'"
                              % (self.database, self.user, host))
        self.created = True
        self._execute(statements)

    def setup(self, workspace, label='mysql'):
        """Create the scratch database once; return a ZConfig path."""
        if not self.created:
            self.create()
        options = {'db': self.database, 'user': self.user,
                   'passwd': self.password, 'host': MYSQL_HOST,
                   'port': MYSQL_PORT}
        # etc/zodb-mysql.conf's section: RelStorage's <mysql> with timeouts
        text = zconfig(('mysql', 'mysql-with-timeouts'), options,
                       self.template)
        return workspace.write('zodb-%s.conf' % label, text)

    def teardown(self):
        """Drop the scratch database and its user."""
        if not self.created:
            return
        statements = ['DROP DATABASE IF EXISTS `%s`' % self.database]
        statements.extend("DROP USER IF EXISTS '%s'@'%s'" % (self.user, host)
                          for host in (MYSQL_HOST, 'localhost'))
        self._execute(statements)
        self.created = False

    def describe(self):
        return ('RelStorage on MySQL (MariaDB), scratch database %s over '
                'TCP %s:%d' % (self.database, MYSQL_HOST, MYSQL_PORT))


def make_storage(name, site):
    template = site.zodb_templates.get(name)
    if name == 'sqlite':
        return SqliteStorage(template)
    if name == 'mysql':
        return MysqlStorage(template)
    raise ValueError('Unknown storage %r (sqlite or mysql)' % name)
