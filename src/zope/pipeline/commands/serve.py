"""Serve a site described by a paste.deploy ini.

Without --mod-wsgi: waitress, one process with threads (development);
with --reload, the server is started again whenever a Python module it
loaded, an ini, ZCML or ZConfig file beside the ini, a ZCML file the
site's configuration read or a template beside the project's own ZCML
changes (after a configuration error too: fixing the file starts it
again).  A development ini (development = true) also reads a changed
template again at its next render, without a restart.
With --mod-wsgi: mod_wsgi-express in daemon mode, --processes x
--threads; every daemon process imports a generated WSGI script at its
start, which loads the ini and opens the database in that process (after
the fork).  Run as root, Apache's children (or waitress, once it has
bound its socket) run as --user/--group (www-data by default),
which get the storage's directories and nothing root reads or runs
(zope.pipeline.serving.layout).  Host, port and
threads default to the ini's [server:main].  Before anything starts,
the threads per process are checked against the ZODB pool size, and known
passwords are served to this machine's user only.  A database
in memory (no open_root.zodb_config) is named at the start: what the
site stores is lost when the server stops.  Both servers refuse request
bodies over retry.max_body, and mod_wsgi-express refuses TRACE.

Touching the generated script (<server root>/application.wsgi), or
zope-pipeline restart INI, restarts the daemon processes one at a time,
each after its successor has loaded the site (mod_wsgi's own reload, every
process at once under load, is off unless --reload); a process restarting
finishes every request in flight within the request's own limit (its
group's graceful-timeout and shutdown-timeout, see
zope.pipeline.serving.modwsgi_express.timeouts);
<server root>/apachectl graceful restarts Apache,
which stops every daemon process at once and may answer a few requests
with 502/503 (see etc/apache/zope-pipeline.conf).

Administrative URLs (--admin-urls, by default edit forms and site
management) run in their own daemon process group, zope-pipeline-admin
(--admin-processes x --admin-threads; --admin-processes 0
turns it off), so slow administrative requests never hold the threads the
site needs.  Its configuration goes to <server root>/admin.conf, which
mod_wsgi-express includes.

Slow clients: Apache reads a request body whole before a daemon process
sees the request (unless --no-buffer-bodies), has --apache-workers worker
threads for the connections still sending their headers or bodies, and
mod_reqtimeout cuts the slow ones.

Memory: --memory-limit bounds what each daemon process may allocate
(a request allocating more gets a 500; the process goes on serving),
--restart-interval restarts each daemon process periodically.

Request timeouts: a request that runs past its group's limit is
interrupted in its thread (mod_wsgi's request-timeout with an
interrupt-timeout: mod_wsgi.RequestTimeout is raised in it), answered
504 and the thread serves again.
"""

import argparse
import configparser
import errno
import logging
import os
import re
import signal
import socket
import sys

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.security.credentials import KnownPasswordError
from zope.pipeline.serving.layout import PRIVATE_UMASK
from zope.pipeline.serving.layout import check_before_loading
from zope.pipeline.serving.layout import daemon_of
from zope.pipeline.serving.layout import drop_privileges
from zope.pipeline.serving.layout import prepare_site_files
from zope.pipeline.serving.layout import storage_directories  # noqa: F401 (API)
from zope.pipeline.serving.modwsgi_express import APACHE_WORKERS
from zope.pipeline.serving.modwsgi_express import BODY_TIMEOUT
from zope.pipeline.serving.modwsgi_express import BUFFERED_HOST
from zope.pipeline.serving.modwsgi_express import HEADER_TIMEOUT
from zope.pipeline.serving.modwsgi_express import MIN_RATE
from zope.pipeline.serving.modwsgi_express import client_limits
from zope.pipeline.serving.modwsgi_express import default_server_root
from zope.pipeline.serving.modwsgi_express import drain_seconds
from zope.pipeline.serving.modwsgi_express import find_mod_wsgi_express
from zope.pipeline.serving.modwsgi_express import free_loopback_port
from zope.pipeline.serving.modwsgi_express import make_run_directory
from zope.pipeline.serving.modwsgi_express import mod_wsgi_command
from zope.pipeline.serving.modwsgi_express import timeouts
from zope.pipeline.serving.modwsgi_express import write_admin_conf
from zope.pipeline.serving.modwsgi_express import write_body_buffering_conf
from zope.pipeline.serving.modwsgi_express import write_security_conf
from zope.pipeline.serving.modwsgi_express import write_wsgi_script
from zope.pipeline.serving.ownership import DEFAULT_USER
from zope.pipeline.serving.ownership import check_readable_by
from zope.pipeline.serving.ownership import readable_paths
from zope.pipeline.serving.ownership import run_as
from zope.pipeline.serving.startup import check_threads
from zope.pipeline.serving.startup import configure_logging
from zope.pipeline.serving.startup import database_configs
from zope.pipeline.serving.startup import explain_open_error
from zope.pipeline.serving.startup import guard_known_passwords
from zope.pipeline.serving.startup import kept_for_the_process
from zope.pipeline.serving.startup import load_application
from zope.pipeline.serving.startup import open_databases
from zope.pipeline.serving.startup import process_databases

NAME = 'serve'
HELP = 'serve a site: waitress, or mod_wsgi-express in daemon mode'

#: mod_wsgi daemon processes when --processes is not given.
DEFAULT_PROCESSES = 2

#: Seconds a request may run in the site's daemon processes (mod_wsgi's
#: request-timeout; see ``timeouts()``).
DEFAULT_REQUEST_TIMEOUT = 60
#: The administrative group: URLs, processes, threads, request timeout
#: (as in etc/apache/zope-pipeline.conf).
DEFAULT_ADMIN_URLS = r'/(@@edit|\+\+etc\+\+site)(/|$)'
DEFAULT_ADMIN_PROCESSES = 1
DEFAULT_ADMIN_THREADS = 2
DEFAULT_ADMIN_REQUEST_TIMEOUT = 600


def add_arguments(parser):
    add_ini_arguments(parser)
    parser.add_argument('--host', help="address to listen on (default: the "
                        "ini's [server:main] host, else 127.0.0.1)")
    parser.add_argument('--port', type=int, help="port (default: the ini's "
                        '[server:main] port, else 8080)')
    parser.add_argument('--threads', type=int, help='threads per process '
                        "(default: the ini's [server:main] threads, else 4)")
    parser.add_argument('--mod-wsgi', action='store_true',
                        help='serve with mod_wsgi-express in daemon mode')
    parser.add_argument('--processes', type=int, default=DEFAULT_PROCESSES,
                        help='mod_wsgi daemon processes (default: %d)'
                        % DEFAULT_PROCESSES)
    parser.add_argument('--reload', action='store_true',
                        help='start the server again when a loaded Python '
                        'module changes (waitress: also an ini, ZCML or '
                        'ZConfig file in the directory of the ini, every '
                        'ZCML file the site loaded, and the templates '
                        'beside the project\'s ZCML, also after an error; '
                        'mod_wsgi: the daemon processes restart)')
    parser.add_argument('--server-root', help='mod_wsgi: directory for '
                        "Apache's configuration and logs (default: "
                        'var/mod_wsgi-PORT beside the etc/ of the ini)')
    parser.add_argument('--user', help='under root: user of the mod_wsgi '
                        'daemon processes, or of waitress once it has bound '
                        'its socket (default: %s)' % DEFAULT_USER)
    parser.add_argument('--group', help='under root: their group '
                        '(default: the user\'s group)')
    parser.add_argument('--express-option', action='append', default=[],
                        metavar='OPTION', dest='express_options',
                        help='mod_wsgi: one more mod_wsgi-express '
                        'start-server option, e.g. '
                        '--express-option=--graceful-timeout=30 '
                        '(repeatable)')
    parser.add_argument('--request-timeout', type=positive, metavar='SECONDS',
                        default=DEFAULT_REQUEST_TIMEOUT,
                        help='mod_wsgi: a request running longer (times '
                        '1 + ln(threads): mod_wsgi\'s per-thread limit) is '
                        'interrupted, answered 504 Gateway Timeout, and its '
                        'thread serves again (default: %d)'
                        % DEFAULT_REQUEST_TIMEOUT)
    parser.add_argument('--buffer-bodies', default=True,
                        action=argparse.BooleanOptionalAction,
                        help='mod_wsgi: Apache reads a request body whole '
                        'before a daemon process sees the request (its '
                        'proxy in front of the daemons\' listener), so a '
                        'client sending its body slowly holds no daemon '
                        'thread (default: on; see docs/deployment.md, '
                        'slow clients)')
    parser.add_argument('--apache-workers', type=positive, metavar='N',
                        default=APACHE_WORKERS,
                        help='mod_wsgi: Apache\'s worker threads, which '
                        'clients hold while they send their headers and '
                        'bodies (default: %d; mod_reqtimeout cuts a client '
                        'slower than %d bytes/s after %d s of headers, %d s '
                        'of body)' % (APACHE_WORKERS, MIN_RATE,
                                      HEADER_TIMEOUT, BODY_TIMEOUT))
    parser.add_argument('--memory-limit', type=positive, metavar='MIB',
                        help='mod_wsgi: MiB each daemon process may '
                        'allocate (RLIMIT_DATA); a request allocating more '
                        'gets a 500 (MemoryError) and the process goes on '
                        'serving (default: no limit; see '
                        'docs/deployment.md, memory)')
    parser.add_argument('--restart-interval', type=positive,
                        metavar='SECONDS',
                        help='mod_wsgi: restart each daemon process this '
                        'long after its start, gracefully (its requests '
                        'finish within their limits), returning what it '
                        'grew to (default: never)')
    parser.add_argument('--admin-urls', metavar='REGEX',
                        default=DEFAULT_ADMIN_URLS,
                        help='mod_wsgi: URLs (a regular expression on the '
                        'path, Apache LocationMatch) served by the '
                        'administrative process group (default: %s)'
                        % DEFAULT_ADMIN_URLS.replace('%', '%%'))
    parser.add_argument('--admin-processes', type=int, metavar='N',
                        default=DEFAULT_ADMIN_PROCESSES,
                        help='mod_wsgi: processes of the administrative '
                        'group; 0 serves the administrative URLs in the '
                        'site\'s processes (default: %d)'
                        % DEFAULT_ADMIN_PROCESSES)
    parser.add_argument('--admin-threads', type=positive, metavar='N',
                        default=DEFAULT_ADMIN_THREADS,
                        help='mod_wsgi: threads per administrative process '
                        '(default: %d)' % DEFAULT_ADMIN_THREADS)
    parser.add_argument('--admin-request-timeout', type=positive,
                        metavar='SECONDS',
                        default=DEFAULT_ADMIN_REQUEST_TIMEOUT,
                        help='mod_wsgi: --request-timeout of the '
                        'administrative group (default: %d)'
                        % DEFAULT_ADMIN_REQUEST_TIMEOUT)


def positive(text):
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def run(args):
    ini = os.path.abspath(args.ini)
    if not os.path.exists(ini):
        raise SystemExit('The ini file %s does not exist.' % ini)
    server = server_section(ini)
    host = args.host or server.get('host', '127.0.0.1')
    port = args.port or int(server.get('port', 8080))
    threads = args.threads or int(server.get('threads', 4))
    if args.express_options and not args.mod_wsgi:
        raise SystemExit('--express-option is for mod_wsgi-express: it '
                         'needs --mod-wsgi.')
    if args.mod_wsgi:
        check_admin_options(args)
    elif args.reload:
        reload_on_changes(ini, args.argv)
    refuse_busy_port(host, port, ini)
    daemon = daemon_of(*run_as(args.user, args.group))
    check_before_loading(ini, args.name, daemon)
    configure_logging(ini)
    publisher = None
    try:
        with kept_for_the_process():
            application, publisher = load_application(ini, args.name)
    finally:
        if args.reload and not args.mod_wsgi:
            watch_configuration(getattr(publisher, 'development', False))
    check_threads(publisher, threads, '--threads / [server:main] threads')
    if args.mod_wsgi and args.admin_processes:
        check_threads(publisher, args.admin_threads, '--admin-threads')
    application = refuse_known_passwords(application, publisher, host, ini)
    warn_of_memory_databases(publisher)
    warn_of_unserved_metrics(publisher)
    if args.mod_wsgi:
        return serve_mod_wsgi(args, ini, publisher, host, port, threads)
    prepare_site_files(ini, publisher, daemon)
    if daemon is not None:
        check_readable_by(daemon.user, daemon.group,
                          readable_paths(ini, publisher))
    return serve_waitress(application, publisher, host, port, threads, ini,
                          daemon)


def refuse_busy_port(host, port, ini):
    """Stop with one sentence when the address cannot be listened on (a
    server already there; a port below 1024 without root), before the
    site is loaded: waitress and Apache would say it in a traceback or
    an error log."""
    try:
        family, kind, protocol, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as error:
        raise SystemExit('Cannot listen on %s: %s.  Give an address of this '
                         'machine with --host (or host in the [server:main] '
                         'of %s).' % (host, error.strerror, ini)) from None
    with socket.socket(family, kind, protocol) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise SystemExit(
                    'Port %d on %s is already in use (another server, or '
                    'this one still running): stop it, or serve on another '
                    'port with --port (or port in the [server:main] of %s).'
                    % (port, host, ini)) from None
            raise SystemExit(
                'Cannot listen on %s port %d: %s.  Choose another address '
                'with --host/--port (a port below 1024 needs root).'
                % (host, port, error.strerror)) from None


def reload_on_changes(ini, argv):
    """--reload under waitress: hupper runs this command again in a worker
    process, and starts a new worker whenever a watched file changes (this
    call does not return in the process that watches); in the worker, the
    files beside the ini are added to the Python modules hupper watches."""
    import hupper  # late: --help
    if not hupper.is_active():
        hupper.start_reloader('zope.pipeline.cli.main',
                              worker_kwargs={'argv': list(argv)})
        raise SystemExit(0)  # start_reloader exits; in case it returns
    hupper.get_reloader().watch_files(watched_files(ini))


#: Files beside the ini whose change starts the server again (--reload).
WATCHED_PATTERNS = ('*.ini', '*.zcml', '*.conf')


def watched_files(ini):
    """Glob patterns of the configuration files in the ini's directory."""
    here = os.path.dirname(ini)
    return [os.path.join(here, pattern) for pattern in WATCHED_PATTERNS]


#: In each directory of the project's own ZCML files (not an installed
#: library's), the files whose change starts the server again: the ZCML
#: files (those that only include others too) and, unless the ini is a
#: development one (which reads a changed template again at its next
#: render: ``templates.check_template_files``), the templates.
PROJECT_PATTERNS = ('**/*.zcml',)
TEMPLATE_PATTERNS = ('**/*.pt',)


def watch_configuration(development=False):
    """--reload under waitress, in the worker, once the site is loaded or
    failed to load: watch every ZCML file the configuration read (those
    read before an error too, and the one the error names, so fixing it
    starts the server again), and the ZCML files and templates under the
    directories of the project's own ZCML files (not the templates in
    ``development``: they are read again without a restart)."""
    import hupper  # late: --help

    from zope.pipeline.app import loaded_files  # late: --help (the engine)
    patterns = PROJECT_PATTERNS + (() if development else TEMPLATE_PATTERNS)
    hupper.get_reloader().watch_files(
        sorted(loaded_files) + project_patterns(loaded_files, patterns))


def project_patterns(files, patterns=PROJECT_PATTERNS):
    """``patterns`` under each directory of ``files`` that is not in an
    installed library (site-packages, the standard library)."""
    import sysconfig  # late: --help
    paths = sysconfig.get_paths()
    libraries = {os.path.realpath(paths[key]) + os.sep
                 for key in ('purelib', 'platlib', 'stdlib')}
    directories = {os.path.dirname(os.path.realpath(path))
                   for path in files}
    return [os.path.join(directory, pattern)
            for directory in sorted(directories)
            if not any((directory + os.sep).startswith(library)
                       for library in libraries)
            for pattern in patterns]


def warn_of_memory_databases(publisher):
    """Say so when the site's database is in memory: whatever it stores
    is lost when the server stops (and under mod_wsgi every process has
    its own)."""
    from zope.pipeline.zodb.storage import is_in_memory  # late: --help (ZODB)
    for path, section in database_configs(publisher):
        if is_in_memory(section):
            print('The database %s is in memory: what the site stores is '
                  'lost when the server stops (and each process has its '
                  'own).  Name a ZConfig file in open_root.zodb_config to '
                  'keep it.' % (path or '(no open_root.zodb_config)'),
                  flush=True)


def warn_of_unserved_metrics(publisher):
    """Say once, when serving starts (not in every command or process),
    that the metrics endpoint is off for want of a token."""
    for stage in publisher.outer.stages:
        if stage.name == 'metrics_endpoint' and getattr(stage.app, 'off',
                                                        False):
            logging.getLogger('zope.pipeline.serve').warning(
                stage.app.unserved_message())


def refuse_known_passwords(application, publisher, host, ini):
    """Stop before serving known passwords to anyone but this machine's
    user, unless the ini says ``demo = true``; return the application,
    kept to local clients when it has them
    (zope.pipeline.security.credentials)."""
    try:
        return guard_known_passwords(application, publisher, host, ini)
    except KnownPasswordError as error:
        raise SystemExit(str(error)) from None


#: The largest request body when the site has no retry stage (the retry
#: stage's own default).
DEFAULT_MAX_BODY = 100 << 20


def max_body(publisher):
    """The largest request body the site accepts: ``retry.max_body`` (0:
    no limit), which the servers are told too, so every server refuses
    the same bodies (waitress max_request_body_size, mod_wsgi-express
    --limit-request-body, Apache LimitRequestBody)."""
    for stage in publisher.outer.stages:
        if stage.name == 'retry':
            return getattr(stage.app, 'max_body', DEFAULT_MAX_BODY) or 0
    return DEFAULT_MAX_BODY


def check_admin_options(args):
    """Refuse administrative group options Apache would choke on."""
    if args.admin_processes < 0:
        raise SystemExit('--admin-processes must be 0 (no administrative '
                         'group) or more.')
    if '"' in args.admin_urls or '\n' in args.admin_urls or \
            not args.admin_urls:
        raise SystemExit('--admin-urls must be a non-empty regular '
                         'expression on one line, without double quotes.')
    try:
        re.compile(args.admin_urls)
    except re.error as error:
        raise SystemExit('--admin-urls %r is not a regular expression: %s'
                         % (args.admin_urls, error)) from None


# -- the ini


def server_section(ini, name='main'):
    """The ``[server:NAME]`` settings of an ini (empty if it has none)."""
    parser = configparser.ConfigParser(
        defaults={'here': os.path.dirname(ini), '__file__': ini})
    parser.read(ini)
    section = 'server:%s' % name
    if not parser.has_section(section):
        return {}
    return dict(parser.items(section))


# -- databases and threads


# -- waitress


def serve_waitress(application, publisher, host, port, threads, ini='',
                   daemon=None):
    """Run as root, bind and become ``daemon``; open the databases with a
    private umask and serve."""
    import waitress  # late: --help
    options = waitress_options(publisher, host, port, threads)
    if daemon is not None:
        options = bind_then_drop(options, daemon)
    os.umask(PRIVATE_UMASK)
    try:
        with kept_for_the_process():
            open_databases(publisher)
    except Exception as error:
        from zope.pipeline.http.errors import is_unavailable  # late: --help
        if is_unavailable(error):
            raise
        raise SystemExit(explain_open_error(
            error, ini, process_databases(publisher), serving=False)) from None
    # SIGTERM ends the process like Ctrl-C does: atexit then closes the
    # databases, so RelStorage writes its cache.
    signal.signal(signal.SIGTERM, exit_on_signal)
    print('Serving on http://%s:%d/ (waitress, 1 process x %d threads%s)'
          % (host, port, threads,
             ' as %s' % daemon.user if daemon is not None else ''),
          flush=True)
    waitress.serve(application, **options)
    return 0


#: The largest request line and headers, together, that waitress reads
#: (431 beyond; waitress's own default is 256 KiB): four of Apache's
#: LimitRequestLine and LimitRequestFieldSize (8,190 bytes each), as
#: nginx's large_client_header_buffers (4 x 8 KiB).
MAX_REQUEST_HEAD = 4 * 8190


def bind_then_drop(options, daemon):
    """Bind the address of waitress's ``options`` (a port below 1024
    needs root), then become ``daemon`` for good: the options with the
    bound socket instead of the address."""
    options = dict(options)
    host, port = options.pop('host'), options.pop('port')
    family, kind, protocol, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    bound = socket.socket(family, kind, protocol)
    bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    bound.bind(address)
    drop_privileges(daemon)
    options['sockets'] = [bound]
    return options


def waitress_options(publisher, host, port, threads):
    """waitress.serve's options: the address, the threads, the body
    limit of ``retry.max_body`` (waitress's own default is 1 GiB), the
    head limit ``MAX_REQUEST_HEAD``, and forwarded headers left for the
    virtual_host stage, which believes them from
    ``virtual_host.trusted_proxies`` only (and, from anyone else, takes
    them as a sign that the client's own address is unknown)."""
    limit = max_body(publisher)
    return {'host': host, 'port': port, 'threads': threads,
            # waitress has no "unlimited": 0 would refuse every body.
            'max_request_body_size': limit or (1 << 62),
            'max_request_header_size': MAX_REQUEST_HEAD,
            'clear_untrusted_proxy_headers': False}


def exit_on_signal(signum, frame):
    raise SystemExit(0)


# -- mod_wsgi-express


def serve_mod_wsgi(args, ini, publisher, host, port, threads):
    express = find_mod_wsgi_express()
    server_root = os.path.abspath(args.server_root or default_server_root(
        ini, port))
    user, group = run_as(args.user, args.group)
    prepare_site_files(ini, publisher, daemon_of(user, group), server_root,
                       generated_root=not args.server_root, more=[express])
    run_dir = make_run_directory(server_root, user, group)
    script = write_wsgi_script(server_root, ini, args.name, run_dir, host,
                               drain=restart_drain(args, threads),
                               memory_limit=args.memory_limit)
    if user is not None:
        check_readable_by(user, group, readable_paths(ini, publisher))
    extra = ['--%s=%d' % item for item in
             timeouts(args.request_timeout, threads).items()]
    if args.restart_interval:
        extra.append('--restart-interval=%d' % args.restart_interval)
    extra += ['--limit-request-body=%d' % max_body(publisher),
              '--include-file=' + write_security_conf(server_root)]
    admin = ''
    if args.admin_processes:
        include = write_admin_conf(
            server_root, urls=args.admin_urls,
            processes=args.admin_processes, threads=args.admin_threads,
            request_timeout=args.admin_request_timeout)
        extra.append('--include-file=' + include)
        admin = '; %s: %d processes x %d threads' % (
            args.admin_urls, args.admin_processes, args.admin_threads)
    listen_host, listen_port, buffering = body_buffering(
        args, server_root, host, port)
    command = mod_wsgi_command(
        express, script, host=listen_host, port=listen_port,
        processes=args.processes,
        threads=threads, server_root=server_root, user=user, group=group,
        reload=args.reload,
        extra=extra + buffering + client_limits(args.apache_workers)
        + rolling_reload(args) + list(args.express_options))
    set_up_server(command)
    print('Serving on http://%s:%d/ (mod_wsgi daemon mode, %d processes x '
          '%d threads%s; server root %s)' % (host, port, args.processes,
                                             threads, admin, server_root),
          flush=True)
    return run_in_foreground([os.path.join(server_root, 'apachectl'),
                              'start', '-DFOREGROUND'])


def restart_drain(args, threads):
    """The longest a daemon process of the server takes to finish its
    requests when it restarts: the longest request limit of its groups
    (the site's, the administrative one's)."""
    drain = drain_seconds(args.request_timeout, threads)
    if args.admin_processes:
        drain = max(drain, drain_seconds(args.admin_request_timeout,
                                         args.admin_threads))
    return drain


def body_buffering(args, server_root, host, port):
    """(host, port, more mod_wsgi-express options) of the daemons'
    listener.  With ``--buffer-bodies`` (the default), mod_wsgi-express
    listens on a free loopback port instead, under the process group
    name it would have given the clients' address, and Apache's proxy on
    the clients' address reads each request body whole before it hands
    the request to that listener (``write_body_buffering_conf``)."""
    if not args.buffer_bodies:
        return host, port, []
    inner_port = free_loopback_port(taken={port})
    conf = write_body_buffering_conf(server_root, host, port, inner_port)
    # mod_wsgi-express's own name: 'localhost' for an empty host.
    return BUFFERED_HOST, inner_port, [
        '--process-group=%s:%d' % (host or 'localhost', port),
        '--include-file=' + conf]


def rolling_reload(args):
    """mod_wsgi-express options: without ``--reload``, mod_wsgi's own
    reload on a touch of the script (every daemon process at once under
    load) is off; the script's watcher restarts them one at a time
    instead (zope.pipeline.serving.rolling)."""
    return [] if args.reload else ['--disable-reloading']


def set_up_server(command):
    """Have mod_wsgi-express write Apache's configuration and apachectl
    in the server root (``--setup-only``), without starting Apache.  Its
    summary is kept out of the output, unless it fails: it names the
    daemons' listener as the "Server URL" (with body buffering, the
    internal loopback one), and it opens /dev/stdout and /dev/stderr for
    writing, which truncates a file the output is redirected to, losing
    what was printed before."""
    import subprocess  # late: --help
    done = subprocess.run(command + ['--setup-only'], capture_output=True,
                          stdin=subprocess.DEVNULL, text=True)
    if done.returncode:
        raise SystemExit('mod_wsgi-express could not set up the server '
                         '(exit status %d):\n%s%s' % (
                             done.returncode, done.stdout, done.stderr))


#: The signals passed on to Apache by ``run_in_foreground`` at a terminal
#: (SIGINT: Ctrl-C; SIGUSR1: graceful restart).
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                     signal.SIGUSR1)


def run_in_foreground(command):
    """Run Apache (``apachectl start -DFOREGROUND``) until it stops, as
    mod_wsgi-express's start-server does: become it, or, at a terminal,
    start it in a process group of its own and pass it the signals this
    process gets, so a Ctrl-C stops Apache, which stops its children,
    rather than reaching every child at once.  Return its exit status."""
    if not sys.stdout.isatty():
        exec_command(command)
    import subprocess  # late: --help
    process = None

    def forward(signum, frame):
        if process is not None:
            process.send_signal(signum)

    previous = {signum: signal.signal(signum, forward)
                for signum in FORWARDED_SIGNALS}
    try:
        process = subprocess.Popen(command, process_group=0)
        return process.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exec_command(command):
    """Become the server (signals reach Apache directly)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)




