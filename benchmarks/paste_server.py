"""Serve a WSGI script with paste.httpserver: Paste's threaded server
(``paste.httpserver.serve``, a pool of worker threads, 10 by default), the
server classic Zope 3 sites were often run with
(``python -m benchmarks.paste_server``)."""

import argparse
import runpy
import signal

#: paste.httpserver.serve's default ``threadpool_workers``.
DEFAULT_THREADS = 10
#: Its thread pool's default ``spawn_if_under``, which must not exceed
#: the number of workers.
SPAWN_IF_UNDER = 5


def threadpool_options(threads):
    """The pool's defaults, but for a pool smaller than Paste's default
    spare threads (``spawn_if_under``), which Paste refuses."""
    if threads < SPAWN_IF_UNDER:
        return {'spawn_if_under': threads}
    return {}


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('script', help='WSGI script defining `application`')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--threads', type=int, default=DEFAULT_THREADS)
    return parser


def main(argv=None):
    from paste import httpserver
    # SIGINT is how the harness stops us, also when we were started with
    # it ignored (a background job of a non-interactive shell passes
    # SIG_IGN on, and Python then installs no KeyboardInterrupt handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = build_parser().parse_args(argv)
    application = runpy.run_path(args.script,
                                 run_name='benchmark_wsgi')['application']
    # serve() returns on SIGINT (KeyboardInterrupt), how the harness stops
    # it, once its thread pool has shut down; atexit closes the database.
    # Daemon worker threads: with Paste's default (non-daemon threads and
    # no socket timeout) a worker still reading from a connection a client
    # left open keeps the process from exiting after SIGINT, until the
    # harness kills it; serving is the same either way.
    httpserver.serve(application, host=args.host, port=args.port,
                     use_threadpool=True, threadpool_workers=args.threads,
                     threadpool_options=threadpool_options(args.threads),
                     daemon_threads=True)
    return 0


if __name__ == '__main__':  # pragma: no cover - run as a server process
    raise SystemExit(main())
