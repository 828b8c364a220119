"""Known default passwords: never served beyond this machine by accident.

The sample site's administrator (``admin``/``admin``, etc/site-dev.zcml)
and the sample database password (``zope-pipeline-sample``) are known to
everyone.  ``check_known_passwords`` finds them in a loaded site (the
principals of ``zope.principalregistry`` and the MySQL password of each
database) and, when the server listens on an address other than loopback
(or on one it does not know, as under a system Apache), refuses to start,
unless the ini says the site is a demonstration (``demo = true``): then
it only logs a warning.
"""

import configparser
import ipaddress
import logging

logger = logging.getLogger('zope.pipeline.credentials')

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


def principals_with_known_passwords(passwords=KNOWN_PASSWORDS):
    """Logins of the global principals whose password is known (one of
    ``passwords``, or the login itself)."""
    from zope.principalregistry.principalregistry import principalRegistry
    found = []
    for principal in principalRegistry.getPrincipals(''):
        validate = getattr(principal, 'validate', None)
        login = principal.getLogin()
        if validate is None or not login:
            continue
        if any(validate(password) for password in passwords + (login,)):
            found.append(login)
    return sorted(found)


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
    from zope.pipeline.mysqltimeouts import is_mysql_adapter
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


def known_password_problems(database_configs):
    """What in the loaded site has a known password (sentences)."""
    problems = ['the administrator %r has a known password (defined in '
                'the site ZCML or its principals file)' % login
                for login in principals_with_known_passwords()]
    problems += ['the database of %s connects with a known password' % path
                 for path in databases_with_known_passwords(database_configs)]
    return problems


def check_known_passwords(database_configs, listen, demo, where):
    """Refuse (``KnownPasswordError``) to serve known passwords on
    ``listen`` unless it is loopback or ``demo``; log a warning when it is
    a demo.  ``where`` names the ini."""
    if is_loopback(listen):
        return []
    problems = known_password_problems(database_configs)
    if not problems:
        return problems
    address = listen or 'an address this process cannot know (a system ' \
        'Apache: any of its Listen addresses)'
    problem = ('%s would be served on %s, which is not loopback, with known '
               'passwords: %s.' % (where, address, '; '.join(problems)))
    if demo:
        logger.warning('Demonstration site (demo = true): %s', problem)
        return problems
    message = ('%s  Create the administrator with `zope-pipeline adduser '
               '%s --login LOGIN` and the database password with '
               '`zope-pipeline init-db %s` (see docs/security.md), or listen '
               'on 127.0.0.1; for a demonstration only, set `demo = true` '
               'in its [app:main].' % (problem, where, where))
    logger.error('%s', message)
    raise KnownPasswordError(message)
