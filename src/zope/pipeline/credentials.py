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
"""

import configparser
import ipaddress
import logging

from zope.pipeline.wsgi import plain_response

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
                          exposures=()):
    """Refuse (``KnownPasswordError``) to serve known passwords on
    ``listen`` unless it is loopback and nothing in ``exposures``
    (``exposures_of``) lets others reach the site, or ``demo``; log a
    warning when it is a demo.  ``where`` names the ini."""
    reach = reach_of(listen, exposures)
    if reach is None:
        return []
    problems = known_password_problems(database_configs)
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


def keep_known_passwords_local(application, database_configs, demo):
    """``application``, behind ``LocalClientsOnly`` when the site has
    known passwords (and is not a demo): what ``check_known_passwords``
    let start on loopback."""
    if demo or not known_password_problems(database_configs):
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
