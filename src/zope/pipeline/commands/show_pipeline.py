"""Print, per request type, the complete ordered chain of stages a request
goes through: outer and inner stages, each with its factory, settings,
before/after constraints, the environ keys it reads and writes and the
ZCML file:line where it was registered."""

import json

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands import load_publisher

NAME = 'show-pipeline'
HELP = 'print the compiled pipeline of each request type'


def add_arguments(parser):
    add_ini_arguments(parser)
    parser.add_argument('--request-type', metavar='TYPE',
                        help='only this request type (browser, xmlrpc, http)')
    parser.add_argument('--format', choices=('text', 'json'), default='text',
                        help='text for people (default), or JSON for tools')


def run(args):
    # late: --help (the engine)
    from zope.pipeline.engine.introspect import describe_request_factories
    from zope.pipeline.engine.introspect import format_text
    # The pipeline is described, the database never opened.
    publisher = load_publisher(args.ini, args.name, opens_database=False)
    data = publisher.describe()
    known = data['request_types']
    if args.request_type and args.request_type not in known:
        raise SystemExit("Unknown request type %r; known: %s." % (
            args.request_type, ', '.join(known)))
    if args.format == 'json':
        if args.request_type:
            data = {'request_types': {
                args.request_type: known[args.request_type]}}
        print(json.dumps(data, indent=2))
    else:
        print(format_text(data, args.request_type,
                          describe_request_factories(publisher)))
    return 0
