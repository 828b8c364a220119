"""Create the MySQL (MariaDB) database and user that an ini's storage
names, and give the user every right on that database.

The ini's ``open_root.zodb_config`` names a ZConfig file with a RelStorage
``<mysql>`` section; its ``db``, ``user`` and ``passwd`` are created with
administrator credentials (``--admin-user``, ``--admin-password``; root
through the server's socket by default).  The user may connect from the
host the application connects from: ``localhost`` and ``127.0.0.1`` when
the database is on this machine, else any host (``%``), or the
``--client-host`` values.  Then it opens the database as the application
will, so RelStorage creates its tables and the root application is
created with the site's content: servers starting together on several
machines later find a complete database.  Running it again changes nothing
but the password, set again from the ZConfig file.  ``--drop`` removes the
database and the user instead.
"""

import os
import re

NAME = 'init-db'
HELP = 'create the MySQL database and user named by an ini\'s storage'

#: Where Debian's MariaDB listens when no host is given.
DEFAULT_SOCKET = '/run/mysqld/mysqld.sock'
#: Hosts that mean "this machine".
LOCAL_HOSTS = ('', 'localhost', '127.0.0.1', '::1')

NAME_RE = re.compile(r'^[A-Za-z0-9_]{1,64}$')
USER_RE = re.compile(r'^[A-Za-z0-9_.-]{1,80}$')
HOST_RE = re.compile(r'^[A-Za-z0-9_.%:-]{1,255}$')


def add_arguments(parser):
    parser.add_argument('ini', help='paste.deploy ini, e.g. '
                        'etc/deploy-mysql.ini')
    parser.add_argument('--name', default='main',
                        help='application name in the ini (default: main)')
    parser.add_argument('--admin-user', default='root',
                        help='administrator account (default: root)')
    parser.add_argument('--admin-password', default='',
                        help='its password (default: empty)')
    parser.add_argument('--host', help='server to connect to as '
                        "administrator (default: the socket, or the "
                        "ZConfig's host when it is not this machine)")
    parser.add_argument('--port', type=int, help='its port')
    parser.add_argument('--socket', help='its socket (default: %s)'
                        % DEFAULT_SOCKET)
    parser.add_argument('--client-host', action='append', default=None,
                        help='host the application connects from (may be '
                        'repeated; default: localhost and 127.0.0.1 for a '
                        'local server, else %%)')
    parser.add_argument('--drop', action='store_true',
                        help='drop the database and the user instead')


def run(args):
    config_path = zodb_config_of(os.path.abspath(args.ini), args.name)
    target = mysql_target(config_path)
    hosts = args.client_host or client_hosts(target)
    statements = (drop_statements(target, hosts) if args.drop
                  else create_statements(target, hosts))
    connection = connect_admin(args, target)
    try:
        execute(connection, statements)
    finally:
        connection.close()
    if not args.drop:
        prepare_database(os.path.abspath(args.ini), args.name)
    action = 'Dropped' if args.drop else 'Ready'
    print('%s: database %s, user %s@%s' % (
        action, target['db'], target['user'], ','.join(hosts)))
    return 0


def prepare_database(ini, name='main'):
    """Open the site's databases with the application's credentials: the
    tables and the root application are created, then closed."""
    from zope.pipeline import storage
    from zope.pipeline.commands.serve import load_application
    from zope.pipeline.commands.serve import open_databases
    application, publisher = load_application(ini, name)
    try:
        open_databases(publisher)
    finally:
        storage.close_all()


def zodb_config_of(ini, name='main'):
    """The ZConfig file the ini's ``open_root.zodb_config`` names."""
    from paste.deploy import appconfig
    if not os.path.exists(ini):
        raise SystemExit('The ini file %s does not exist.' % ini)
    settings = appconfig('config:' + ini, name=name)
    path = settings.get('open_root.zodb_config')
    if not path:
        raise SystemExit('%s sets no open_root.zodb_config: there is no '
                         'database to create.' % ini)
    return path


def mysql_target(config_path):
    """db, user, passwd, host, port and unix_socket of the ``<mysql>``
    section of a ZConfig database file."""
    from zope.pipeline.storage import load_database_config
    if not os.path.exists(config_path):
        raise SystemExit('The ZODB configuration file %s does not exist.'
                         % config_path)
    storage = load_database_config(config_path).database[0].config.storage
    adapter = getattr(storage.config, 'adapter', None)
    if type(adapter).__name__ != 'MySQLAdapterFactory':
        raise SystemExit('%s does not describe RelStorage on MySQL.'
                         % config_path)
    section = adapter.config
    target = {key: getattr(section, key, None) for key in (
        'db', 'user', 'passwd', 'host', 'port', 'unix_socket')}
    check_names(target, config_path)
    return target


def check_names(target, where):
    for key, pattern in (('db', NAME_RE), ('user', USER_RE)):
        value = target[key]
        if not value or not pattern.match(value):
            raise SystemExit('%s: the <mysql> %s %r must be set and made of '
                             'letters, digits and _ (or . - for a user).'
                             % (where, key, value))


def is_local(target):
    return bool(target['unix_socket']) or (target['host'] or '') in \
        LOCAL_HOSTS


def client_hosts(target):
    return ['localhost', '127.0.0.1'] if is_local(target) else ['%']


def account(user, host):
    if not HOST_RE.match(host):
        raise SystemExit('Bad client host %r.' % host)
    return "'%s'@'%s'" % (user, host)


def create_statements(target, hosts):
    """(SQL, parameters) that create the database and the user."""
    db, user, password = target['db'], target['user'], target['passwd'] or ''
    statements = [('CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4'
                   % db, ())]
    for host in hosts:
        name = account(user, host)
        # With parameters, MySQLdb formats the statement with %: a host
        # like '%' must be written '%%' there.
        escaped = name.replace('%', '%%')
        statements += [
            ('CREATE USER IF NOT EXISTS %s IDENTIFIED BY %%s' % escaped,
             (password,)),
            ('ALTER USER %s IDENTIFIED BY %%s' % escaped, (password,)),
            ('GRANT ALL PRIVILEGES ON `%s`.* TO %s' % (db, name), ()),
        ]
    return statements


def drop_statements(target, hosts):
    statements = [('DROP DATABASE IF EXISTS `%s`' % target['db'], ())]
    statements += [('DROP USER IF EXISTS %s' % account(target['user'], host),
                    ()) for host in hosts]
    return statements


def admin_connection_options(args, target):
    """How to reach the server as administrator."""
    options = {'user': args.admin_user, 'passwd': args.admin_password}
    if args.socket:
        options['unix_socket'] = args.socket
    elif args.host:
        options['host'] = args.host
        if args.port:
            options['port'] = args.port
    elif is_local(target):
        options['unix_socket'] = target['unix_socket'] or DEFAULT_SOCKET
    else:
        options['host'] = target['host']
        if target['port']:
            options['port'] = target['port']
    return options


def connect_admin(args, target):
    import MySQLdb
    options = admin_connection_options(args, target)
    try:
        return MySQLdb.connect(**options)
    except MySQLdb.Error as exc:
        where = options.get('unix_socket') or options.get('host')
        raise SystemExit('Cannot connect to MySQL at %s as %s: %s'
                         % (where, args.admin_user, exc))


def execute(connection, statements):
    cursor = connection.cursor()
    try:
        for sql, parameters in statements:
            print(sql % (("'***'",) * len(parameters)) if parameters
                  else sql)
            cursor.execute(sql, parameters or None)
        cursor.execute('FLUSH PRIVILEGES')
    finally:
        cursor.close()
