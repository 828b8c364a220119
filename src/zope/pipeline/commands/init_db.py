"""Create the MySQL (MariaDB) database and user that an ini's storage
names, with a password nobody else knows, and give the user every right
on that database.

The ini's open_root.zodb_config names a ZConfig file with a RelStorage
<mysql> section.  Its db and user are created with
administrator credentials (--admin-user, root through the server's
socket by default; the administrator's password from
--admin-password-file or $MYSQL_PWD).  The user's password goes
to the MySQL option file the section's read_default_file names
([client] password; run as root, root's and readable by the group of
the server's daemon processes, mode 0640: --group, else the group it
has, else www-data's, as zope-pipeline serve leaves it; else the
user's, mode 0600): taken from --db-password-file,
$ZOPE_PIPELINE_DB_PASSWORD or a prompt (--db-password-prompt),
else the one already in that file, else a new random one.  Passwords are
never command-line arguments, which ps shows.  (A section with
passwd instead keeps it, unless it is a known password.)  The user may
connect from the app server's host only: localhost and 127.0.0.1
when the database is on this machine, else the host this machine
connects from as the server sees it, or the --client-host values;
never any host (%).  Then it opens the database as the application
will, so RelStorage creates its tables and the root application is
created with the site's content.  Running it again changes nothing but
the password when a new one is given.  --drop removes the database
and the user instead.
"""

import os
import re
import secrets

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands import read_secret
from zope.pipeline.commands.adduser import principals_path
from zope.pipeline.security.credentials import KNOWN_PASSWORDS
from zope.pipeline.security.credentials import option_file_password
from zope.pipeline.serving.layout import become_database_user
from zope.pipeline.serving.ownership import write_shared_secret
from zope.pipeline.serving.startup import load_application
from zope.pipeline.serving.startup import open_databases

NAME = 'init-db'
HELP = 'create the MySQL database and user named by an ini\'s storage'

#: Where Debian's MariaDB listens when no host is given.
DEFAULT_SOCKET = '/run/mysqld/mysqld.sock'
#: Where the database user's password may come from.
DB_PASSWORD_VARIABLE = 'ZOPE_PIPELINE_DB_PASSWORD'
#: The MySQL administrator's password (as the mysql client reads it).
ADMIN_PASSWORD_VARIABLE = 'MYSQL_PWD'
#: Characters a password written to an option file may not hold.
OPTION_FILE_FORBIDDEN = re.compile(r'["\\\x00-\x1f\x7f]')
#: Hosts that mean "this machine".
LOCAL_HOSTS = ('', 'localhost', '127.0.0.1', '::1')

NAME_RE = re.compile(r'^[A-Za-z0-9_]{1,64}$')
USER_RE = re.compile(r'^[A-Za-z0-9_.-]{1,80}$')
HOST_RE = re.compile(r'^[A-Za-z0-9_.:-]{1,255}$')


def add_arguments(parser):
    add_ini_arguments(parser, 'etc/deploy-mysql.ini')
    parser.add_argument('--admin-user', default='root',
                        help='administrator account (default: root)')
    parser.add_argument('--admin-password-file', metavar='FILE',
                        help="its password, the first line of FILE (else "
                        "$%s, else empty)" % ADMIN_PASSWORD_VARIABLE)
    parser.add_argument('--db-password-file', metavar='FILE',
                        help="the database user's password, the first line "
                        "of FILE (else $%s, else the one in the option file "
                        "read_default_file names, else a new random one)"
                        % DB_PASSWORD_VARIABLE)
    parser.add_argument('--db-password-prompt', action='store_true',
                        help="ask for the database user's password")
    parser.add_argument('--group', metavar='GROUP',
                        help="run as root: the group of the server's daemon "
                        'processes, which may read the option file '
                        '(root:GROUP, mode 0640; default: the group it '
                        'has, else www-data\'s)')
    parser.add_argument('--host', help='server to connect to as '
                        "administrator (default: the socket, or the "
                        "ZConfig's host when it is not this machine)")
    parser.add_argument('--port', type=int, help='its port')
    parser.add_argument('--socket', help='its socket (default: %s)'
                        % DEFAULT_SOCKET)
    parser.add_argument('--client-host', action='append', default=None,
                        help='host the application connects from (may be '
                        'repeated; default: localhost and 127.0.0.1 for a '
                        'local server, else this machine as the server '
                        'sees it); never %%')
    parser.add_argument('--drop', action='store_true',
                        help='drop the database and the user instead')


def run(args):
    ini = os.path.abspath(args.ini)
    config_path = zodb_config_of(ini, args.name)
    target = mysql_target(config_path)
    password = None if args.drop else database_password(args, target)
    connection = connect_admin(args, target)
    try:
        hosts = client_hosts(args, target, connection)
        statements = (drop_statements(target, hosts) if args.drop
                      else create_statements(target, hosts, password))
        execute(connection, statements)
    finally:
        connection.close()
    if not args.drop:
        prepare_database(ini, args.name)
    action = 'Dropped' if args.drop else 'Ready'
    print('%s: database %s, user %s@%s' % (
        action, target['db'], target['user'], ','.join(hosts)))
    if not args.drop:
        remind_administrator(ini, args.name)
    return 0


def remind_administrator(ini, name):
    """Say how to create the administrator when the site has none yet."""
    try:
        path = principals_path(ini, name)
    except SystemExit:
        return
    if not os.path.exists(path):
        print('The site has no administrator yet: zope-pipeline adduser %s '
              '--login LOGIN' % ini)


# -- secrets


def database_password(args, target):
    """The database user's password (see the module's docstring); written
    to the option file when the ZConfig names one."""
    supplied = read_secret(
        args.db_password_file, DB_PASSWORD_VARIABLE,
        "Password of the database user %s: " % target['user']
        if args.db_password_prompt else None)
    if supplied is not None and (supplied in KNOWN_PASSWORDS or
                                 len(supplied) < 10):
        raise SystemExit('That database password is known or too short '
                         '(at least 10 characters): choose another.')
    option_file = target['read_default_file']
    if not option_file:
        return config_password(target, supplied)
    existing = option_file_password(option_file) \
        if os.path.exists(option_file) else None
    password = supplied or existing or secrets.token_urlsafe(24)
    # written again each time: its owner and mode as serve leaves them
    write_option_file(option_file, password, args.group)
    return password


def config_password(target, supplied):
    """The ``passwd`` of a ``<mysql>`` section without an option file."""
    password = target['passwd']
    where = target['config']
    if not password:
        raise SystemExit(
            'The <mysql> section of %s has neither read_default_file nor '
            'passwd: add `read_default_file $here/../var/mysql-client.cnf`'
            ', where this command writes the password.' % where)
    if password in KNOWN_PASSWORDS:
        raise SystemExit(
            'The <mysql> section of %s sets a known password (passwd %s): '
            'remove passwd and add `read_default_file '
            '$here/../var/mysql-client.cnf`, where this command writes a '
            'password of its own.' % (where, password))
    if supplied is not None and supplied != password:
        raise SystemExit(
            'The <mysql> section of %s sets passwd, which the application '
            'connects with: change it there, or replace it with '
            'read_default_file to let this command write the password.'
            % where)
    return password


def write_option_file(path, password, group=None):
    """Write a MySQL option file with the client password, readable by
    the server's processes only (``ownership.write_shared_secret``)."""
    if OPTION_FILE_FORBIDDEN.search(password):
        raise SystemExit('The database password may not hold quotes, '
                         'backslashes or control characters.')
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_shared_secret(path, '# The database password of zope.pipeline, '
                        'written by `zope-pipeline init-db`.\n[client]\n'
                        'password="%s"\n' % password, group)


def prepare_database(ini, name='main'):
    """Open the site's databases with the application's credentials: the
    tables and the root application are created, then closed."""
    from zope.pipeline.zodb import storage  # late: --help (the ZODB)
    become_database_user(ini, name)
    application, publisher = load_application(ini, name)
    try:
        open_databases(publisher)
    finally:
        storage.close_all()


def zodb_config_of(ini, name='main'):
    """The ZConfig file the ini's ``open_root.zodb_config`` names."""
    from paste.deploy import appconfig  # late: --help
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
    # late: --help (RelStorage, the ZODB)
    from zope.pipeline.zodb.mysqltimeouts import is_mysql_adapter
    from zope.pipeline.zodb.storage import load_database_config
    if not os.path.exists(config_path):
        raise SystemExit('The ZODB configuration file %s does not exist.'
                         % config_path)
    storage = load_database_config(config_path).database[0].config.storage
    adapter = getattr(storage.config, 'adapter', None)
    if not is_mysql_adapter(adapter):
        raise SystemExit('%s does not describe RelStorage on MySQL.'
                         % config_path)
    section = adapter.config
    target = {key: getattr(section, key, None) for key in (
        'db', 'user', 'passwd', 'host', 'port', 'unix_socket',
        'read_default_file')}
    target['config'] = config_path
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


def client_hosts(args, target, connection=None):
    """Hosts the user may connect from: ``--client-host``, else this
    machine (``localhost``, ``127.0.0.1``) for a local server, else the
    host of the administrator's connection as the server sees it."""
    if args.client_host:
        return [checked_host(host) for host in args.client_host]
    if is_local(target):
        return ['localhost', '127.0.0.1']
    host = connection_host(connection)
    if host in (None, '', 'localhost'):
        raise SystemExit(
            'The database server %s is not on this machine, and this '
            'connection does not say where the app server connects from: '
            'name its host with --client-host.' % target['host'])
    return [checked_host(host)]


def connection_host(connection):
    """This client's host as the server sees it (``USER()``'s host)."""
    if connection is None:
        return None
    cursor = connection.cursor()
    try:
        cursor.execute('SELECT USER()')
        user = cursor.fetchone()[0]
    finally:
        cursor.close()
    if isinstance(user, bytes):
        user = user.decode('utf-8')
    return user.rpartition('@')[2]


def checked_host(host):
    if '%' in host:
        raise SystemExit(
            'Client host %r: a wildcard would let the database user in from '
            'anywhere; name each app server\'s host with --client-host.'
            % host)
    if not HOST_RE.match(host):
        raise SystemExit('Bad client host %r.' % host)
    return host


def account(user, host):
    return "'%s'@'%s'" % (user, checked_host(host))


def create_statements(target, hosts, password=None):
    """(SQL, parameters) that create the database and the user."""
    db, user = target['db'], target['user']
    if password is None:
        password = target['passwd'] or ''
    statements = [('CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4'
                   % db, ())]
    for host in hosts:
        name = account(user, host)
        statements += [
            ('CREATE USER IF NOT EXISTS %s IDENTIFIED BY %%s' % name,
             (password,)),
            ('ALTER USER %s IDENTIFIED BY %%s' % name, (password,)),
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
    password = read_secret(args.admin_password_file,
                           ADMIN_PASSWORD_VARIABLE) or ''
    options = {'user': args.admin_user, 'passwd': password}
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
    import MySQLdb  # late: optional (the mysql extra)
    options = admin_connection_options(args, target)
    try:
        return MySQLdb.connect(**options)
    except MySQLdb.Error as exc:
        where = options.get('unix_socket') or options.get('host')
        raise SystemExit('Cannot connect to MySQL at %s as %s: %s'
                         % (where, args.admin_user, exc)) from None


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
