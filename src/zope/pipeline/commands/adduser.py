"""Create (or change the password of) an administrator of a site.

The ini's principals_zcml names a ZCML file of principals, which the
site loads after its own ZCML (etc/deploy-mysql.ini:
var/principals.zcml).  This command writes the principal there with
a bcrypt-hashed password (zope.pipeline.security.passwords) and grants it
--permission (default zope.ManageContent and
zope.pipeline.ViewMetrics, the permission of the metrics.html
page), keeping the other principals of the file.  Run as root, the
file is root's and readable by the group of the server's daemon
processes (mode 0640: --group, else the group it has, else www-data's),
as zope-pipeline serve run as root leaves it, so serve, restart and a
system Apache's daemons all read it; run as another user, it is that
user's, mode 0600.  The password comes from
--password-file (its first line), else the environment variable
ZOPE_PIPELINE_PASSWORD, else a prompt: never from the command line,
which ps shows to every user.  Restart the server (touch its WSGI
script) to load the change.  The other principals of the file keep their
hashes and password managers: an {SSHA} entry an older version wrote
keeps working, and running this command again for its login hashes its
password with bcrypt.
"""

import os
import re
from xml.etree import ElementTree
from xml.sax.saxutils import quoteattr

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands import read_secret
from zope.pipeline.security.credentials import KNOWN_PASSWORDS
from zope.pipeline.security.credentials import checked_passwords_path
from zope.pipeline.security.credentials import record_checked_entries
from zope.pipeline.serving.ownership import write_shared_secret

NAME = 'adduser'
HELP = "create a site administrator in the ini's principals file"

#: The environment variable a password may come from.
PASSWORD_VARIABLE = 'ZOPE_PIPELINE_PASSWORD'
#: What an administrator may do unless ``--permission`` says otherwise:
#: manage the content, and read the request metrics page.
DEFAULT_PERMISSIONS = ('zope.ManageContent', 'zope.pipeline.ViewMetrics')
#: The shortest password accepted.
MIN_LENGTH = 10
ZOPE = '{http://namespaces.zope.org/zope}'
LOGIN_RE = re.compile(r'^[A-Za-z0-9_.@-]{1,64}$')
PRINCIPAL_PREFIX = 'zope.pipeline.principals.'

HEADER = '''\
<configure xmlns="http://namespaces.zope.org/zope">

  <!-- The site's principals, written by `zope-pipeline adduser` (which
       keeps what else is here); loaded after the site ZCML because the
       ini names this file in principals_zcml.  Passwords are bcrypt
       hashes (older entries may be SSHA: run adduser again for their
       login to rehash).  Root's, readable by the server's group only. -->

'''


def add_arguments(parser):
    add_ini_arguments(parser, 'etc/deploy-mysql.ini')
    parser.add_argument('--login', required=True,
                        help='the login name (letters, digits, _ . @ -)')
    parser.add_argument('--title', help='a title (default: the login)')
    parser.add_argument('--permission', action='append', default=None,
                        help='a permission to grant (repeatable; default: '
                        'zope.ManageContent and zope.pipeline.ViewMetrics)')
    parser.add_argument('--password-file', metavar='FILE',
                        help='read the password from the first line of FILE '
                        '(else $%s, else a prompt)' % PASSWORD_VARIABLE)
    parser.add_argument('--group', metavar='GROUP',
                        help="run as root: the group of the server's daemon "
                        'processes, which may read the principals file '
                        '(root:GROUP, mode 0640; default: the group it '
                        'has, else www-data\'s)')


def run(args):
    # late: --help (bcrypt, zope.password)
    from zope.pipeline.security.passwords import NEW_PASSWORD_MANAGER
    from zope.pipeline.security.passwords import hash_password
    ini = os.path.abspath(args.ini)
    path = principals_path(ini, args.name)
    login = args.login
    if not LOGIN_RE.match(login):
        raise SystemExit('--login %r: use letters, digits and _ . @ - '
                         '(at most 64).' % login)
    password = read_secret(args.password_file, PASSWORD_VARIABLE,
                           'Password for %s: ' % login)
    check_password(password, login)
    principals = read_principals(path)
    principals[login] = {
        'id': PRINCIPAL_PREFIX + login, 'title': args.title or login,
        'login': login, 'password': hash_password(password),
        'password_manager': NEW_PASSWORD_MANAGER,
        'permissions': args.permission or list(DEFAULT_PERMISSIONS)}
    write_principals(path, principals, args.group)
    record_checked(ini, path, principals[login])
    print('%s: principal %s (login %s) with %s.  Restart the server to '
          'load it.' % (path, principals[login]['id'], login,
                        ', '.join(principals[login]['permissions'])))
    return 0


def principals_path(ini, name='main'):
    """The file the ini's ``principals_zcml`` names (relative to it)."""
    from paste.deploy import appconfig  # late: --help
    if not os.path.exists(ini):
        raise SystemExit('The ini file %s does not exist.' % ini)
    settings = appconfig('config:' + ini, name=name)
    value = (settings.local_conf.get('principals_zcml') or '').strip()
    if not value:
        raise SystemExit(
            '%s names no principals file: add `principals_zcml = '
            '%%(here)s/../var/principals.zcml` to its [app:%s] section.'
            % (ini, name))
    return os.path.normpath(os.path.join(os.path.dirname(ini), value))


def record_checked(ini, path, principal):
    """Record the entry just written as checked against the known
    passwords (``check_password`` refused them), so no server start
    checks it again (zope.pipeline.security.credentials)."""
    record_checked_entries(checked_passwords_path(ini, path), [(
        principal['login'], principal['password_manager'],
        principal['password'])])


def check_password(password, login):
    # late: --help
    from zope.pipeline.security.passwords import BCRYPT_MAX_BYTES
    if len(password) < MIN_LENGTH:
        raise SystemExit('The password must have at least %d characters.'
                         % MIN_LENGTH)
    size = len(password.encode('utf-8'))
    if size > BCRYPT_MAX_BYTES:
        raise SystemExit('The password must be at most %d bytes long '
                         '(UTF-8): bcrypt does not take longer ones (this '
                         'one has %d).' % (BCRYPT_MAX_BYTES, size))
    if password in KNOWN_PASSWORDS or password == login:
        raise SystemExit('That password is known to everyone: choose '
                         'another.')


def read_principals(path):
    """{login: principal} of a file this command wrote (empty if none)."""
    if not os.path.exists(path):
        return {}
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise SystemExit('%s is not a principals file (%s): move it away.'
                         % (path, error)) from None
    grants = {}
    for grant in root.iter(ZOPE + 'grant'):
        grants.setdefault(grant.get('principal'), []).append(
            grant.get('permission'))
    principals = {}
    for element in root.iter(ZOPE + 'principal'):
        principals[element.get('login')] = {
            'id': element.get('id'), 'title': element.get('title'),
            'login': element.get('login'),
            'password': element.get('password'),
            'password_manager': element.get('password_manager',
                                            'Plain Text'),
            'permissions': grants.get(element.get('id'), [])}
    return principals


def write_principals(path, principals, group=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    parts = [HEADER]
    for login in sorted(principals):
        principal = principals[login]
        parts.append(
            '  <principal\n      id=%s\n      title=%s\n      login=%s\n'
            '      password_manager=%s\n      password=%s\n      />\n'
            % tuple(quoteattr(principal[key]) for key in
                    ('id', 'title', 'login', 'password_manager',
                     'password')))
        parts.extend('  <grant permission=%s\n         principal=%s />\n'
                     % (quoteattr(permission), quoteattr(principal['id']))
                     for permission in principal['permissions'])
        parts.append('\n')
    parts.append('</configure>\n')
    write_shared_secret(path, ''.join(parts), group)
