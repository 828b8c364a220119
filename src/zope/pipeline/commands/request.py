"""Publish one request through the site of an ini, without a server, and
print the response (as Pyramid's prequest does): its status line, its
headers with --display-headers, and its body.

The request goes through the application the ini builds (its filters,
the outer and inner chains, the database named by the ini: what it
writes is committed), from this machine (REMOTE_ADDR 127.0.0.1), to
the first of the site's virtual_host.allowed_hosts when the URL is a
path.  --user LOGIN publishes as that principal of the principal
registry, as explain --user asks: the site's chains are built again and
the principal is the request's after the authenticate stage.  --data
sends a body (a form, application/x-www-form-urlencoded unless
--content-type says otherwise; @FILE reads it from FILE); a request with
a body is a POST unless --method says otherwise.  The command exits with
0 for a 1xx, 2xx or 3xx response, 1 otherwise.
"""

import io
import os
import sys

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands import load_site_application
from zope.pipeline.serving.startup import process_databases

NAME = 'request'
HELP = 'publish one request through the site and print the response'


def add_arguments(parser):
    add_ini_arguments(parser)
    parser.add_argument('url', help='the path (e.g. /folder/page?x=1) or '
                        'the whole URL (e.g. http://localhost/folder/page)')
    parser.add_argument('--user', metavar='LOGIN',
                        help='publish as the principal with this login (or '
                        'id) in the principal registry (default: as the '
                        'request authenticates, anonymous without '
                        'credentials)')
    parser.add_argument('--method', type=str.upper,
                        help='the request method (default: GET, POST with '
                        '--data)')
    parser.add_argument('--data', metavar='BODY',
                        help='the request body, e.g. title=Hello&body=...; '
                        '@FILE reads it from FILE')
    parser.add_argument('--content-type', metavar='TYPE',
                        default='application/x-www-form-urlencoded',
                        help='the type of --data (default: '
                        'application/x-www-form-urlencoded)')
    parser.add_argument('--header', action='append', default=[],
                        metavar='NAME:VALUE',
                        help='a request header (repeatable)')
    parser.add_argument('-d', '--display-headers', action='store_true',
                        help='print the response headers after its status')


def run(args):
    # late: --help (the engine)
    from zope.pipeline.explain import ActingPublisher
    from zope.pipeline.explain import principal_by_login
    from zope.pipeline.explain import site_environ
    if not os.path.exists(args.ini):
        raise SystemExit('The ini file %s does not exist.' % args.ini)
    body = request_body(args.data)
    headers = header_items(args.header)
    method = args.method or ('POST' if body is not None else 'GET')
    application, publisher = load_site_application(args.ini, args.name)
    publishers = [publisher]
    if args.user:
        application = ActingPublisher(publisher,
                                      principal_by_login(args.user))
        publishers.append(application)
    environ = site_environ(publisher, args.url, method)
    add_body(environ, body, args.content_type)
    environ.update(headers)
    try:
        status, headers, content = publish(application, environ)
    finally:
        for each in publishers:
            for database in process_databases(each):
                database.close()
    print_response(status, headers, content, args.display_headers)
    return 0 if int(status.split()[0]) < 400 else 1


def request_body(data):
    """The bytes of --data (None: no body)."""
    if data is None:
        return None
    if data.startswith('@'):
        try:
            with open(data[1:], 'rb') as stream:
                return stream.read()
        except OSError as error:
            raise SystemExit('Cannot read --data %s: %s'
                             % (data, error.strerror)) from None
    return data.encode('utf-8')


def add_body(environ, body, content_type):
    if body is None:
        return
    environ['wsgi.input'] = io.BytesIO(body)
    environ['CONTENT_LENGTH'] = str(len(body))
    environ['CONTENT_TYPE'] = content_type


def header_items(headers):
    """The environ keys and values of --header NAME:VALUE options."""
    items = {}
    for header in headers:
        name, colon, value = header.partition(':')
        if not colon or not name.strip():
            raise SystemExit('--header %r: give it as NAME:VALUE.' % header)
        key = name.strip().upper().replace('-', '_')
        if key not in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
            key = 'HTTP_' + key
        items[key] = value.strip()
    return items


def publish(application, environ):
    """Call the WSGI ``application``: (status, headers, body bytes); the
    response iterable is closed."""
    started = []

    def start_response(status, headers, exc_info=None):
        started[:] = [status, headers]
        return lambda data: None  # the legacy write() is not used here

    result = application(environ, start_response)
    try:
        content = b''.join(result)
    finally:
        getattr(result, 'close', lambda: None)()
    return started[0], started[1], content


def print_response(status, headers, content, display_headers):
    out = sys.stdout
    out.write(status + '\n')
    if display_headers:
        for name, value in headers:
            out.write('%s: %s\n' % (name, value))
        out.write('\n')
    out.flush()
    out.buffer.write(content)
    if content and not content.endswith(b'\n'):
        out.buffer.write(b'\n')
    out.buffer.flush()
