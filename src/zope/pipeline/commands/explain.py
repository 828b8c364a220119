"""Say what the site of an ini does with one request, without a server:
its request type and chain, each traversal step (the object reached, its
class, the traverser or namespace used), the view found (its class and
template), the permission the view needs and whether the principal has
it (anonymous, or the principal of --user LOGIN), with the grants and
roles that decide it, and the stages that would change the response.

The request runs through the site's own stages and traversal code, up to
the end of traversal: the view is not called, and the transaction is
aborted, so nothing is written. Run by root on a database another user
can change (the daemon user's), it runs as that user, or refuses
(docs/security.md). A URL that cannot be reached is named with the step
that failed and the response it gets (404, 401, 403).
"""

import json
import os

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.commands import load_publisher
from zope.pipeline.serving.startup import process_databases

NAME = 'explain'
HELP = ('what the site does with a request: traversal, view, permission '
        'and who has it')


def add_arguments(parser):
    add_ini_arguments(parser)
    parser.add_argument('url',
                        help='the path (e.g. /folder/page) or the whole URL '
                             '(e.g. http://localhost/folder/page)')
    parser.add_argument('--user', metavar='LOGIN',
                        help='ask as the principal with this login (or id) '
                             'in the principal registry (default: '
                             'anonymous)')
    parser.add_argument('--method', default='GET', type=str.upper,
                        help='the request method (default: GET)')
    parser.add_argument('--format', choices=('text', 'json'), default='text',
                        help='text for people (default), or JSON for tools')


def run(args):
    # late: --help (the engine)
    from zope.pipeline.explain import explain
    from zope.pipeline.explain import format_text
    if not os.path.exists(args.ini):
        raise SystemExit('The ini file %s does not exist.' % args.ini)
    publisher = load_publisher(args.ini, args.name)
    try:
        data = explain(publisher, args.url, args.method, args.user)
    finally:
        for database in process_databases(publisher):
            database.close()
    if args.format == 'json':
        print(json.dumps(data, indent=2))
    else:
        print(format_text(data))
    return 0
