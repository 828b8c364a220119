"""Serve a WSGI script with waitress: the single-process, multi-threaded
server of the comparison (``python -m benchmarks.waitress_server``)."""

import argparse
import runpy
import signal

import waitress


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('script', help='WSGI script defining `application`')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--threads', type=int, default=4)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    # SIGINT is how the harness stops us, also when we were started with
    # it ignored (a background job of a non-interactive shell passes
    # SIG_IGN on, and Python then installs no KeyboardInterrupt handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    application = runpy.run_path(args.script,
                                 run_name='benchmark_wsgi')['application']
    try:
        waitress.serve(application, host=args.host, port=args.port,
                       threads=args.threads)
    except KeyboardInterrupt:
        pass  # SIGINT is how the harness stops us; atexit closes the DB
    return 0


if __name__ == '__main__':  # pragma: no cover - run as a server process
    raise SystemExit(main())
