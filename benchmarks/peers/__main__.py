"""``python -m benchmarks.peers populate|render PEER ZODB_CONFIG WORKDIR``.

``populate`` starts the peer once, alone, so that its first start adds the
page's content before the server's processes start together; ``render``
also prints the page's status and body as it answers ``GET /folder/page``
(through WebTest), for the tests.
"""

import argparse
import sys

from benchmarks.peers import BY_NAME
from benchmarks.peers.page import PAGE_PATH


def render(app):
    import webtest
    response = webtest.TestApp(app).get(PAGE_PATH, expect_errors=True)
    sys.stdout.write('%s\n' % response.status_int)
    sys.stdout.flush()
    sys.stdout.buffer.write(response.body)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.peers')
    parser.add_argument('action', choices=('populate', 'render'))
    parser.add_argument('peer', choices=sorted(
        name for name, peer in BY_NAME.items() if peer.module))
    parser.add_argument('zodb_config')
    parser.add_argument('workdir')
    args = parser.parse_args(argv)
    app = BY_NAME[args.peer].make_app(args.zodb_config, args.workdir)
    if args.action == 'render':
        render(app)
    return 0


if __name__ == '__main__':
    sys.exit(main())
