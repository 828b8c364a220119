"""Loading a site in a server process: once, and never half.

What a WSGI script (the one ``zope-pipeline serve --mod-wsgi`` writes, or
etc/app.wsgi) calls in each server process: ``load_site`` loads the ini
and its ZCML, checks the threads against the ZODB pool, refuses known
passwords beyond loopback (zope.pipeline.security.credentials) and opens the
databases.  It never raises: mod_wsgi imports a script that raised again
at the next request, in the same process, and running the ZCML a second
time fails on its first registration (``DuplicateId``) for ever.
Instead, what cannot load is logged once, saying what to change, and the
process answers 503 with a short page (``Unavailable``).  A database that
refuses to open (a wrong password, no database yet) is tried again, at
most every ``REOPEN_INTERVAL`` seconds, by the requests
(``OpeningDatabases``): once ``init-db`` has run or the password is
fixed, the process serves without a restart.  The result is remembered
per ini, so a second import of the script returns the same application.
"""

import configparser
import contextlib
import gc
import inspect
import logging
import logging.config
import os
import threading
import time

from zope.pipeline.environ import SITE_ROOT
from zope.pipeline.http.wsgi import NOSNIFF
from zope.pipeline.http.wsgi import html_response
from zope.pipeline.security import credentials
from zope.pipeline.stages import readiness

logger = logging.getLogger('zope.pipeline.serving.startup')

#: Seconds between two attempts to open a database that refused to open.
REOPEN_INTERVAL = 5.0
#: Seconds in the Retry-After header of the 503 while the site cannot
#: serve.
RETRY_AFTER = 10

UNAVAILABLE_PAGE = '''\
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Site unavailable</title></head>
<body>
<h1>Site unavailable</h1>
<p>This site cannot serve requests at the moment.  Please try again
later.</p>
</body>
</html>
'''

#: The application loaded for each (ini, name) in this process.
_sites = {}
_sites_lock = threading.Lock()


class Unavailable:
    """Answer every request 503 with a page saying the site is
    unavailable (the reason is in the log, never in the page)."""

    def __init__(self, reason):
        self.reason = reason

    def __call__(self, environ, start_response):
        return unavailable_response(start_response)


def unavailable_response(start_response):
    """503, made outside the pipeline (no security_headers stage runs):
    it sends NOSNIFF itself."""
    return html_response(start_response, '503 Service Unavailable',
                         UNAVAILABLE_PAGE,
                         [('Retry-After', str(RETRY_AFTER)), NOSNIFF])


class OpeningDatabases:
    """The site, in front of databases that could not be opened at the
    process's start: each request tries again (at most every
    ``interval`` seconds, one request at a time) and is answered 503
    until they open; then every request goes straight to the site.  The
    log gets one line per distinct error, saying what to change."""

    def __init__(self, application, databases, explain, interval=None,
                 clock=time.monotonic, first_error=None):
        self.application = application
        self.databases = databases
        self.explain = explain
        self.interval = REOPEN_INTERVAL if interval is None else interval
        self.clock = clock
        self.ready = False
        #: The error at the start was logged already: the next attempt
        #: comes one interval later and logs only a different error.
        self.next_attempt = clock() + self.interval if first_error else 0.0
        self.last_error = error_text(first_error) if first_error else None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        if self.ready or self.try_open():
            return self.application(environ, start_response)
        return unavailable_response(start_response)

    def try_open(self):
        """Open the databases if it is time to try; return whether every
        one is open."""
        if not self._lock.acquire(blocking=False):
            return self.ready
        try:
            if self.ready or self.clock() < self.next_attempt:
                return self.ready
            try:
                for database in self.databases:
                    database.get()
            except Exception as error:
                self.failed(error)
                return False
            self.ready = True
            logger.info('Process %s opened its database; serving',
                        os.getpid())
            return True
        finally:
            self._lock.release()

    def failed(self, error):
        self.next_attempt = self.clock() + self.interval
        text = error_text(error)
        if text != self.last_error:
            self.last_error = text
            logger.error('%s', self.explain(error))


def error_text(error):
    return '%s: %s' % (type(error).__name__, error)


# -- what a WSGI script calls


def load_site(ini, name='main', listen=None):
    """The WSGI application of ``ini`` for this process (see the module's
    docstring); ``listen`` is the address the server listens on (None: not
    known, as under a system Apache, which counts as not loopback)."""
    ini = os.path.abspath(ini)
    key = (ini, name)
    with _sites_lock:
        application = _sites.get(key)
        if application is None:
            with kept_for_the_process():
                application = _sites[key] = _load(ini, name, listen)
            readiness.mark_loaded(state_of(application))
        return application


@contextlib.contextmanager
def kept_for_the_process():
    """Load what lives as long as the process (the site: the modules its
    ZCML names, its components, its compiled pipelines, its databases)
    without the cyclic garbage collector, then move every object alive to
    the collector's permanent generation (``gc.freeze``), where no
    collection walks it again.

    Loading allocates about 100,000 objects that stay: the collector,
    left running, walked them over and over as they piled up (70 ms of
    CPU of each start of the sample site, of about 0.6 s, timed with
    ``gc.callbacks``), and every later full collection while serving
    walked them again.  The price: the cycles loading made and dropped
    (about 17,000 objects: ZCML parser state, a parsed locale file; under
    0.5 MB of the process's memory) stay too, once per process.  A
    collector that was off stays off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def state_of(application):
    """The readiness state (``zope.pipeline.stages.readiness``) of what
    ``load_site`` returns."""
    if isinstance(application, Unavailable):
        return readiness.UNAVAILABLE
    if isinstance(application, OpeningDatabases):
        return readiness.DATABASE_CLOSED
    return readiness.SERVING


def _load(ini, name, listen):
    try:
        configure_logging(ini)
    except Exception as error:
        return refuse('The logging sections of %s are wrong: %s: %s.  Fix '
                      'them and touch the WSGI script to restart.'
                      % (ini, type(error).__name__, error))
    try:
        application, publisher = load_application(ini, name)
    except SystemExit as error:
        return refuse('%s  Then touch the WSGI script to restart.' % error)
    except Exception as error:
        logger.exception('Cannot load %s', ini)
        return refuse('Cannot load the site of %s (%s: %s, the traceback '
                      'above).  Fix its ini or ZCML and touch the WSGI script '
                      'to restart.' % (ini, type(error).__name__, error))
    return _check_and_open(ini, application, publisher, listen)


def _check_and_open(ini, application, publisher, listen):
    threads = mod_wsgi_threads()
    try:
        if threads is not None:
            check_threads(publisher, threads, 'mod_wsgi threads_per_process')
        application = guard_known_passwords(application, publisher, listen,
                                            ini)
    except SystemExit as error:
        return refuse('%s  Then touch the WSGI script to restart.' % error)
    except credentials.KnownPasswordError as error:
        # Already logged, with what to change.
        return Unavailable(str(error))
    closed, first_error = [], None
    for database in process_databases(publisher):
        error = open_at_start(database, ini)
        if error is not None:
            closed.append(database)
            first_error = first_error or error
    if not closed:
        return application
    return OpeningDatabases(
        application, closed,
        lambda error: explain_open_error(error, ini, closed),
        first_error=first_error)


def guard_known_passwords(application, publisher, listen, ini):
    """``application`` as it may be served with the site's known
    passwords (``zope.pipeline.security.credentials``): refused
    (``KnownPasswordError``) when others may reach it, kept to local
    clients on loopback."""
    configs = database_configs(publisher)
    demo = getattr(publisher, 'demo', False)
    checked = getattr(publisher, 'checked_passwords', None)
    credentials.check_known_passwords(configs, listen, demo, ini,
                                      credentials.exposures_of(publisher),
                                      checked)
    return credentials.keep_known_passwords_local(application, configs,
                                                  demo, checked)


def refuse(message):
    """Log ``message`` once; an application answering 503."""
    logger.error('Process %s cannot serve: %s', os.getpid(), message)
    return Unavailable(message)


def open_at_start(database, ini):
    """Open ``database`` now; return the error when it refused to open.  A
    server that cannot be reached is left to the requests as before (the
    site answers 503 and reconnects, ``ProcessDatabase.open_at_start``);
    any other error is logged once, with what to change, and left to
    ``OpeningDatabases``."""
    try:
        database.open_at_start()
    except Exception as error:
        logger.error('%s', explain_open_error(error, ini, [database]))
        return error
    return None


#: MySQL error codes that say what the deployer must change.
ACCESS_DENIED = (1044, 1045, 1698)
UNKNOWN_DATABASE = 1049


def mysql_error_code(error):
    """The MySQL error code in ``error`` or its causes, or None."""
    seen = 0
    while error is not None and seen < 5:
        arguments = getattr(error, 'args', ())
        if type(error).__module__.startswith('MySQLdb') and arguments and \
                isinstance(arguments[0], int):
            return arguments[0]
        error = error.__cause__ or error.__context__
        seen += 1
    return None


def explain_open_error(error, ini, databases, serving=True):
    """What is wrong with the database and what to change (and, when
    ``serving``, what the process does meanwhile)."""
    configs = ', '.join(database.config_path or 'memory'
                        for database in databases)
    code = mysql_error_code(error)
    if code in ACCESS_DENIED:
        advice = ('MySQL refused the user and password of the <mysql> '
                  'section of %s (open_root.zodb_config in %s; the password '
                  'is its passwd or the option file its read_default_file '
                  'names): correct them, or create the user with '
                  '`zope-pipeline init-db %s`' % (configs, ini, ini))
    elif code == UNKNOWN_DATABASE:
        advice = ('the database named by the <mysql> section of %s does '
                  'not exist yet: create it with `zope-pipeline init-db %s`'
                  % (configs, ini))
    else:
        advice = ('check the ZConfig file %s (open_root.zodb_config in %s)'
                  '; a new MySQL database is made with `zope-pipeline '
                  'init-db %s`' % (configs, ini, ini))
    text = ('Process %s cannot open its database (%s: %s): %s.'
            % (os.getpid(), type(error).__name__, error, advice))
    if serving:
        text += ('  Requests are answered 503 meanwhile; the database is '
                 'tried again every %g s, no restart needed.'
                 % REOPEN_INTERVAL)
    return text


# -- the ini, the threads and the databases


def configure_logging(ini):
    """Apply the ini's ``[loggers]`` sections, if it has them."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ini)
    if not parser.has_section('loggers'):
        return False
    logging.config.fileConfig(
        ini, {'here': os.path.dirname(ini), '__file__': ini},
        disable_existing_loggers=False)
    return True


def load_application(ini, name='main'):
    """Load the ini: (the WSGI application, the Publisher inside it)."""
    # late: the CLI's --help imports this module (commands.serve)
    from paste.deploy import loadapp

    from zope.pipeline import app as app_module
    before = len(app_module.built)
    application = loadapp('config:' + ini, name=name)
    if len(app_module.built) == before:
        raise SystemExit('%s builds no zope.pipeline publisher.' % ini)
    return application, app_module.built[-1]


def open_databases(publisher, at_start=False):
    """Open (and bootstrap) every database now, in this process.  In a
    server process that just started (``at_start``), one whose server
    cannot be reached is left to the first request (see
    ``ProcessDatabase.open_at_start``)."""
    for database in process_databases(publisher):
        if at_start:
            database.open_at_start()
        else:
            database.get()


def process_databases(publisher):
    """The ProcessDatabase of every open_root stage in the publisher."""
    # late: the CLI's --help imports this module (the ZODB)
    from zope.pipeline.zodb.storage import ProcessDatabase
    found = []
    for _registration, spec in publisher.request_types.values():
        for stage in publisher.chain_for(spec).stages:
            database = getattr(stage.app, 'database', None)
            if isinstance(database, ProcessDatabase) and \
                    database not in found:
                found.append(database)
    return found


def database_configs(publisher):
    """(ZConfig path, parsed database section) of each database ('' and
    None for a database in memory)."""
    # late: the CLI's --help imports this module (the ZODB)
    from zope.pipeline.zodb.storage import load_database_config
    configs = []
    for database in process_databases(publisher):
        path = database.config_path
        section = load_database_config(path).database[0] if path else None
        configs.append((path, section))
    return configs


def pool_size(section):
    """The ZODB connection pool size of a database section."""
    if section is None:
        import ZODB  # late: the CLI's --help imports this module
        return inspect.signature(ZODB.DB).parameters['pool_size'].default
    return section.config.pool_size


def check_threads(publisher, threads, where):
    """Refuse more request threads per process than ZODB connections."""
    for path, section in database_configs(publisher):
        size = pool_size(section)
        if threads > size:
            raise SystemExit(
                '%d threads per process (%s) but the ZODB pool-size of %s '
                'is %d: every request thread holds a connection, so a '
                'process must not run more threads than its pool has '
                'connections.  Lower the threads or raise pool-size.'
                % (threads, where, path or 'the database in memory', size))


def mod_wsgi_threads():
    """Threads per daemon process under mod_wsgi, else None."""
    try:
        import mod_wsgi  # late: optional, a server only inside mod_wsgi
        return int(mod_wsgi.threads_per_process)
    except (ImportError, AttributeError):
        return None


# -- publishing an object at the root URL


class SiteAtRoot:
    """Publish the object at ``site_path`` (e.g. ``/folder``) at the root
    URL, as a virtual hosting rewrite rule would do: each request's environ
    names it in ``zope.pipeline.site_root``, a key no client can set, and
    the virtual_host stage, once it has checked the client's path, maps it
    through ``++vh++`` so the URLs the site makes start at the root URL (and
    the script's mount point, SCRIPT_NAME)."""

    def __init__(self, application, site_path):
        self.application = application
        self.site_path = '/' + site_path.strip('/') if site_path.strip('/') \
            else ''

    def __call__(self, environ, start_response):
        if self.site_path:
            environ[SITE_ROOT] = self.site_path
        return self.application(environ, start_response)
