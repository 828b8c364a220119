"""Known default passwords: never served beyond this machine by accident.

The sample site's administrator (``admin``/``admin``, etc/site-dev.zcml)
and the sample database password (``zope-pipeline-sample``) are known to
everyone.  ``check_known_passwords`` finds them in a loaded site (the
principals of ``zope.principalregistry`` and the MySQL password of each
database) and refuses to start when anyone but this machine's user may
reach the site: the server listens on an address other than loopback (or
on one it does not know, as under a system Apache), proxies are trusted
(``virtual_host.trusted_proxies``: a proxy forwards other people's
requests), or the ini does not say it is a development one
(``development = true``; a production ini never serves known passwords).
``demo = true`` lets a demonstration site start anyway, with a warning.
A development site that does serve them, on loopback, refuses every
request that a proxy forwarded or that comes from another address
(``LocalClientsOnly``): a local reverse proxy in front of it would serve
the sample administrator to the internet.

Checking a password costs a bcrypt verification per known password
(about 0.25 s each), so a principal's check is done once:
``CheckedPasswords`` records, in ``checked-passwords.json`` beside the
principals file (else in the ``var/`` beside the ini's ``etc/``), the
outcome for each principal's login and password hash as its ZCML
defined them.  ``zope-pipeline adduser`` records the
entries it writes (it refuses known passwords); a process that loads the
site checks only the entries not recorded yet (one edited by hand, the
sample administrator the first time) and records them when it may write
the record.  A changed hash, login or list of known passwords is a new
entry, checked again.
"""

import configparser
import hashlib
import ipaddress
import json
import logging
import os

from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import write_secret

logger = logging.getLogger('zope.pipeline.security.credentials')

#: Passwords everyone knows: the sample administrator's, the sample
#: database password, and the first ones anyone tries.
KNOWN_PASSWORDS = ('admin', 'zope-pipeline-sample', 'secret', 'password',
                   'changeme', 'zope')


class KnownPasswordError(Exception):
    """A site with a known password would be served to the network."""


def is_loopback(host):
    """Whether ``host`` (an address or name a server listens on) can only
    be reached from this machine.  None (not known) is not."""
    if host is None:
        return False
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        return False


def principals_with_known_passwords(passwords=KNOWN_PASSWORDS,
                                    checked=None):
    """Logins of the global principals whose password is known (one of
    ``passwords``, or the login itself); ``checked`` (a
    ``CheckedPasswords``) answers for the entries it has recorded and
    records the others."""
    # late: the CLI's --help imports this module (commands.adduser)
    from zope.principalregistry.principalregistry import principalRegistry
    checked = checked if checked is not None else CheckedPasswords()
    found = []
    for principal in principalRegistry.getPrincipals(''):
        validate = getattr(principal, 'validate', None)
        login = principal.getLogin()
        if validate is None or not login:
            continue
        if checked.is_known(principal, passwords):
            found.append(login)
    checked.save()
    return sorted(found)


def has_known_password(principal, passwords=KNOWN_PASSWORDS):
    """Whether ``principal``'s password is one of ``passwords`` or its
    login (a password manager's verification for each: slow by design)."""
    login = principal.getLogin()
    return any(principal.validate(password)
               for password in passwords + (login,))


#: The name of the record of checked passwords in a site's ``var/``.
CHECKED_PASSWORDS_NAME = 'checked-passwords.json'
#: Entries a record keeps at most (the oldest are forgotten first).
MAX_CHECKED_ENTRIES = 10000


def checked_passwords_path(ini, principals_zcml=None):
    """The record of checked passwords of the site of ``ini``: beside its
    principals file when it names one, else in the state directory
    ``var/`` beside its ``etc/``; None without either."""
    if principals_zcml:
        directory = os.path.dirname(os.path.abspath(principals_zcml))
    else:
        directory = os.path.normpath(os.path.join(os.path.dirname(ini), '..',
                                                  'var'))
    return os.path.join(directory, CHECKED_PASSWORDS_NAME) \
        if os.path.isdir(directory) else None


def password_entry_key(login, password_manager, password,
                       passwords=KNOWN_PASSWORDS):
    """The record's key of one principal entry: a digest of its login,
    password manager and stored (hashed) password, and of the known
    passwords it was checked against."""
    if isinstance(password, bytes):
        password = password.decode('utf-8', 'surrogateescape')
    text = json.dumps([list(passwords), login, password_manager, password])
    return hashlib.sha256(text.encode('utf-8', 'surrogateescape')).hexdigest()


def defined_principals(actions):
    """{principal id: (login, password manager, stored password)} of the
    ``<principal>`` directives among ZCML ``actions`` (a configuration
    machine's, before they are executed).  An id defined more than once
    (overridden) is left out: it is checked every time."""
    definitions, seen = {}, set()
    for action in actions:
        discriminator = action.get('discriminator') \
            if isinstance(action, dict) else None
        if not (isinstance(discriminator, tuple) and
                len(discriminator) == 2 and discriminator[0] == 'principal'):
            continue
        principal_id = discriminator[1]
        if principal_id in seen:
            definitions.pop(principal_id, None)
            continue
        seen.add(principal_id)
        args = action.get('args') or ()
        if len(args) == 6:
            _id, _title, _description, login, password, manager = args
            definitions[principal_id] = (login, manager, password)
    return definitions


class CheckedPasswords:
    """Which principal entries have a known password, checked once per
    entry (see the module's docstring).  ``definitions`` are
    ``defined_principals``'s; ``path`` the record (None: remembered in
    this object only)."""

    def __init__(self, definitions=None, path=None):
        self.definitions = definitions or {}
        self.path = path
        self.entries = read_checked(path) if path else {}
        self.changed = False

    def is_known(self, principal, passwords=KNOWN_PASSWORDS):
        definition = self.definitions.get(principal.id)
        if definition is None or definition[0] != principal.getLogin():
            return has_known_password(principal, passwords)
        key = password_entry_key(*definition, passwords=passwords)
        known = self.entries.get(key)
        if known is None:
            known = self.entries[key] = has_known_password(principal,
                                                            passwords)
            self.changed = True
        return known

    def save(self):
        """Write the record if it gained entries and may be written (a
        process that may not, a daemon process, checks again next time)."""
        if not (self.changed and self.path):
            return
        self.changed = False
        write_checked(self.path, self.entries)


def read_checked(path):
    """{key: known} of a record (empty when there is none, or it is not
    one)."""
    try:
        with open(path) as stream:
            data = json.load(stream)
    except (OSError, ValueError):
        return {}
    entries = data.get('checked') if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {key: known for key, known in entries.items()
            if isinstance(key, str) and isinstance(known, bool)}


def write_checked(path, entries):
    """Write a record of ``entries`` (the newest ``MAX_CHECKED_ENTRIES``),
    readable by its owner only (root: and by the group of its directory,
    the daemon processes' in ``var/``); a failure is logged, not
    raised."""
    kept = dict(list(entries.items())[-MAX_CHECKED_ENTRIES:])
    text = json.dumps({'checked': kept}, indent=0, sort_keys=False)
    try:
        write_secret(path, text + '\n')
        if os.geteuid() == 0:
            # as the principals file: the daemon processes' group reads it
            group = os.stat(os.path.dirname(path)).st_gid
            os.chown(path, 0, group, follow_symlinks=False)
            os.chmod(path, 0o640)
    except (OSError, UnsafePathError) as error:
        logger.debug('Cannot record checked passwords in %s: %s', path,
                     error)


def record_checked_entries(path, entries, known=False):
    """Record principal entries ((login, password manager, stored
    password) each) in the record ``path`` as checked: what
    ``zope-pipeline adduser`` writes (it refuses known passwords)."""
    if path is None:
        return
    recorded = read_checked(path)
    for entry in entries:
        recorded[password_entry_key(*entry)] = known
    write_checked(path, recorded)


def option_file_password(path):
    """The ``[client]`` password of a MySQL option file, or None."""
    parser = configparser.ConfigParser(interpolation=None, strict=False,
                                       allow_no_value=True)
    try:
        parser.read(path)
    except (OSError, configparser.Error):
        return None
    value = parser.get('client', 'password', fallback=None)
    if value is None:
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
        value = value[1:-1]
    return value


def database_passwords(mysql_section):
    """The passwords a RelStorage ``<mysql>`` section connects with."""
    passwords = []
    if getattr(mysql_section, 'passwd', None):
        passwords.append(mysql_section.passwd)
    option_file = getattr(mysql_section, 'read_default_file', None)
    if option_file:
        password = option_file_password(option_file)
        if password:
            passwords.append(password)
    return passwords


def mysql_section_of(database_section):
    """The ``<mysql>`` (or ``<mysql-with-timeouts>``) section of a parsed
    ZConfig database, or None."""
    # late: the CLI's --help imports this module (RelStorage)
    from zope.pipeline.zodb.mysqltimeouts import is_mysql_adapter
    storage = getattr(database_section.config.storage, 'config', None)
    adapter = getattr(storage, 'adapter', None)
    if not is_mysql_adapter(adapter):
        return None
    return adapter.config


def databases_with_known_passwords(database_configs,
                                   passwords=KNOWN_PASSWORDS):
    """ZConfig paths whose MySQL password is a known one."""
    found = []
    for path, section in database_configs:
        mysql = mysql_section_of(section) if section is not None else None
        if mysql is not None and set(database_passwords(mysql)) & \
                set(passwords):
            found.append(path)
    return found


def known_password_problems(database_configs, checked=None):
    """What in the loaded site has a known password (sentences);
    ``checked``: ``principals_with_known_passwords``'s."""
    problems = ['the administrator %r has a known password (defined in '
                'the site ZCML or its principals file)' % login
                for login in principals_with_known_passwords(
                    checked=checked)]
    problems += ['the database of %s connects with a known password' % path
                 for path in databases_with_known_passwords(database_configs)]
    return problems


def exposures_of(publisher):
    """How a loaded site may be reached by others than this machine's user,
    whatever address it listens on (sentences; none: only through
    loopback by the local user)."""
    exposures = []
    proxies = trusted_proxies(publisher)
    if proxies:
        exposures.append('behind proxies (virtual_host.trusted_proxies = '
                         '%s), which forward other clients\' requests'
                         % ' '.join(str(network)
                                    for network in proxies.networks))
    if not getattr(publisher, 'development', False):
        exposures.append('by an ini that is not a development one (it does '
                         'not say development = true)')
    return exposures


def trusted_proxies(publisher):
    """The ``virtual_host.trusted_proxies`` of a loaded site (an
    AddressList), or None without a virtual_host stage."""
    for stage in getattr(getattr(publisher, 'outer', None), 'stages', ()):
        if stage.name == 'virtual_host':
            return getattr(stage.app, 'proxies', None)
    return None


def reach_of(listen, exposures):
    """Where a site would be served (the start of a sentence), or None
    when only the local user reaches it."""
    reach = list(exposures)
    if not is_loopback(listen):
        reach.insert(0, 'on %s, which is not loopback' % (
            listen or 'an address this process cannot know (a system '
            'Apache: any of its Listen addresses)'))
    return ' and '.join(reach) if reach else None


def check_known_passwords(database_configs, listen, demo, where,
                          exposures=(), checked=None):
    """Refuse (``KnownPasswordError``) to serve known passwords on
    ``listen`` unless it is loopback and nothing in ``exposures``
    (``exposures_of``) lets others reach the site, or ``demo``; log a
    warning when it is a demo.  ``where`` names the ini."""
    reach = reach_of(listen, exposures)
    if reach is None:
        return []
    problems = known_password_problems(database_configs, checked)
    if not problems:
        return problems
    problem = ('%s would be served %s, with known passwords: %s.'
               % (where, reach, '; '.join(problems)))
    if demo:
        logger.warning('Demonstration site (demo = true): %s', problem)
        return problems
    message = ('%s  Create the administrator with `zope-pipeline adduser '
               '%s --login LOGIN` and the database password with '
               '`zope-pipeline init-db %s` (see docs/security.md), or serve '
               'a development ini (development = true) on 127.0.0.1 without '
               'trusted proxies; for a demonstration only, set `demo = '
               'true` in its [app:main].' % (problem, where, where))
    logger.error('%s', message)
    raise KnownPasswordError(message)


#: Request headers a proxy adds: a request carrying one was forwarded.
FORWARDED_HEADERS = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_FOR',
                     'HTTP_X_FORWARDED_HOST', 'HTTP_X_FORWARDED_PROTO',
                     'HTTP_X_FORWARDED_SERVER', 'HTTP_X_REAL_IP', 'HTTP_VIA')


def keep_known_passwords_local(application, database_configs, demo,
                               checked=None):
    """``application``, behind ``LocalClientsOnly`` when the site has
    known passwords (and is not a demo): what ``check_known_passwords``
    let start on loopback."""
    if demo or not known_password_problems(database_configs, checked):
        return application
    logger.warning('This development site has known passwords: it answers '
                   'only requests from this machine that no proxy '
                   'forwarded.')
    return LocalClientsOnly(application)


class LocalClientsOnly:
    """Answer 403 to a request from another address than loopback, or
    forwarded by a proxy (it carries a forwarding header): a site with
    known passwords serves this machine's user only."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        if is_loopback(environ.get('REMOTE_ADDR', '')) and not any(
                name in environ for name in FORWARDED_HEADERS):
            return self.application(environ, start_response)
        return plain_response(
            start_response, '403 Forbidden',
            'This development site has known passwords and serves this '
            "machine's user only, not requests a proxy forwarded.")
