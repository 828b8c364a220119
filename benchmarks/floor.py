"""The least Zope work the view-checked peers' page needs, counted in
instructions, part by part.

    python -m benchmarks.floor [--calls 200] [--parts floor,request,...]

zope.pipeline's view-checked chain and Pyramid serve the same page
(``benchmarks.peers``); ``benchmarks.instructions`` counts both.  This
counts what is left when the pipeline is taken away: on the view-checked
peer's site (its ZCML, its database, populated), a plain WSGI function
(``floor_app``) does only the work the page cannot do without under
Zope's components:

- a ZODB connection with an explicit transaction manager, begun,
  committed and closed;
- zope.publisher's ``BrowserRequest`` with the default skin;
- the unauthenticated principal of the global ``IAuthentication``, an
  interaction, and the view's permission checked once (the site's
  security policy);
- the root folder as the local site while the view runs;
- ``root['folder']['page']`` by item access (no traversal adapters, no
  events, no hooks);
- the view looked up (``queryMultiAdapter``) and called (its template,
  compiled by Chameleon as zope.pipeline compiles it).

Each part is also counted alone (``PARTS``), and ``chameleon`` counts
Chameleon's own ``PageTemplateFile`` rendering the Pyramid peer's
template with the same data, as Pyramid renders it.  What the pipeline
adds to the page is its count minus ``floor``'s; what Zope's components
cost beyond Pyramid is ``floor``'s minus Pyramid's.  Every part is
counted as ``benchmarks.instructions`` counts a request: called
``--warmup`` times, then ``--calls`` times inside ``operator.call``
(callgrind counts only that), with ``PYTHONHASHSEED=0``.
"""

import argparse
import logging
import os
import subprocess
import sys
import tempfile

import transaction
from zope.authentication.interfaces import IAuthentication
from zope.component import getUtility
from zope.component import queryMultiAdapter
from zope.component.hooks import setSite
from zope.publisher.browser import BrowserRequest
from zope.publisher.skinnable import setDefaultSkin
from zope.security.management import checkPermission
from zope.security.management import endInteraction
from zope.security.management import newInteraction

from benchmarks.inprocess import call_app
from benchmarks.inprocess import make_environ
from benchmarks.instructions import callgrind_prefix
from benchmarks.instructions import counted_calls
from benchmarks.instructions import counted_environ
from benchmarks.instructions import total_instructions
from benchmarks.peers import BY_NAME
from benchmarks.peers import page
from benchmarks.storages import zconfig

#: The view-checked peer: its site is the floor's.
PEER = 'pipeline-checked'
#: The root folder's name in the database (zope.pipeline's default).
ROOT_NAME = 'Application'
#: The page's default view, and the permission the peer's ZCML gives it.
VIEW_NAME = 'index.html'
PERMISSION = 'zope.View'
#: The Pyramid peer's template.
PYRAMID_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                'peers', 'pyramid_peer', 'page.pt')

#: What each part is (the order of the table).
PARTS = {
    'floor': 'the whole page, no pipeline (floor_app)',
    'environ': "the WSGI environment (the harness's own dict)",
    'request': "zope.publisher's BrowserRequest and its default skin",
    'database': 'connection, begin, root, the two item lookups, commit, '
                'close',
    'security': 'an interaction and the view permission checked once',
    'view_lookup': 'the view looked up in the local site',
    'template': 'the view called: its template rendered',
    'chameleon': "Chameleon rendering the Pyramid peer's template, "
                 'the same data',
}


class Floor:
    """The view-checked peer's site loaded in this process, its database
    open and populated; ``floor_app`` and the parts run on it."""

    def __init__(self, workdir):
        from zope.pipeline.serving.startup import process_databases
        zodb_config = os.path.join(workdir, 'zodb.conf')
        with open(zodb_config, 'w') as output:
            output.write(zconfig('sqlite3', {
                'data-dir': os.path.join(workdir, 'data')}))
        #: the peer's publisher: its ZCML loaded, its database populated
        self.publisher = BY_NAME[PEER].make_app(zodb_config, workdir)
        self.db = process_databases(self.publisher)[0].get()

    def floor_app(self, environ, start_response):
        """The page with nothing but the work it needs (module docstring)."""
        manager = transaction.TransactionManager(explicit=True)
        connection = self.db.open(manager)
        try:
            manager.begin()
            root = connection.root()[ROOT_NAME]
            request = BrowserRequest(environ['wsgi.input'], environ)
            setDefaultSkin(request)
            request.setPrincipal(
                getUtility(IAuthentication).unauthenticatedPrincipal())
            newInteraction(request)
            setSite(root)
            try:
                context = root[page.FOLDER_NAME][page.PAGE_NAME]
                view = queryMultiAdapter((context, request), name=VIEW_NAME)
                if not checkPermission(PERMISSION, view):
                    raise AssertionError('the page is not public')
                body = view().encode('utf-8')
            finally:
                setSite(None)
                endInteraction()
            manager.commit()
        finally:
            connection.close()
        start_response('200 OK', [
            ('Content-Type', 'text/html;charset=utf-8'),
            ('Content-Length', str(len(body)))])
        return [body]

    def parts(self):
        """Part name -> a function of no argument doing that part."""
        manager = transaction.TransactionManager(explicit=True)
        connection = self.db.open(manager)
        manager.begin()  # left open: closing the database aborts it
        root = connection.root()[ROOT_NAME]
        context = root[page.FOLDER_NAME][page.PAGE_NAME]
        request = make_request()
        participation = Participation(request.principal)

        def database():
            manager = transaction.TransactionManager(explicit=True)
            connection = self.db.open(manager)
            manager.begin()
            root = connection.root()[ROOT_NAME]
            root[page.FOLDER_NAME][page.PAGE_NAME]
            manager.commit()
            connection.close()

        def security():
            newInteraction(participation)
            checkPermission(PERMISSION, view)
            endInteraction()
            participation.interaction = None

        def view_lookup():
            setSite(root)
            queryMultiAdapter((context, request), name=VIEW_NAME)
            setSite(None)

        setSite(root)
        view = queryMultiAdapter((context, request), name=VIEW_NAME)
        setSite(None)
        chameleon = pyramid_template()

        def pyramid_render():
            chameleon(title=context.title,
                      item_titles=[item.title for item in context.values()])

        return {
            'floor': lambda: call_app(self.floor_app, page.PAGE_PATH),
            'environ': lambda: make_environ(page.PAGE_PATH),
            'request': make_request,
            'database': database,
            'security': security,
            'view_lookup': view_lookup,
            'template': view,
            'chameleon': pyramid_render,
        }


class Participation:
    """A participation of ``principal`` alone (the security part's)."""

    interaction = None

    def __init__(self, principal):
        self.principal = principal


def make_request():
    """zope.publisher's browser request of the page, default skin, the
    unauthenticated principal."""
    environ = make_environ(page.PAGE_PATH)
    request = BrowserRequest(environ['wsgi.input'], environ)
    setDefaultSkin(request)
    request.setPrincipal(
        getUtility(IAuthentication).unauthenticatedPrincipal())
    return request


def pyramid_template():
    from chameleon import PageTemplateFile
    return PageTemplateFile(PYRAMID_TEMPLATE)


def run_part(part, calls, warmup):
    """Call ``part`` ``warmup`` times, then ``calls`` times inside
    ``operator.call``; returns what its last call returned."""
    with tempfile.TemporaryDirectory() as workdir:
        return counted_calls(Floor(workdir).parts()[part], calls, warmup)


def valgrind_command(output, part, calls, warmup):
    return callgrind_prefix(output) + [
        sys.executable, '-m', 'benchmarks.floor', '--inside', part,
        '--calls', str(calls), '--warmup', str(warmup)]


def count(part, calls, warmup):
    """Instructions per call of ``part``, counted by callgrind."""
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, 'callgrind.out')
        completed = subprocess.run(
            valgrind_command(output, part, calls, warmup),
            capture_output=True, text=True,
            env=counted_environ(os.environ))
        if completed.returncode:
            raise SystemExit('valgrind failed for %s:\n%s'
                             % (part, completed.stderr[-3000:]))
        return total_instructions(output) // calls


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--calls', type=int, default=200)
    parser.add_argument('--warmup', type=int, default=100)
    parser.add_argument('--parts', default=','.join(PARTS),
                        help='comma-separated, of: %s' % ', '.join(PARTS))
    parser.add_argument('--inside', choices=list(PARTS),
                        help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.disable(logging.CRITICAL)
    if args.inside:
        result = run_part(args.inside, args.calls, args.warmup)
        if args.inside == 'floor' and (
                result[0] != '200 OK' or page.page_problems(result[1])):
            return 1
        return 0
    parts = [part.strip() for part in args.parts.split(',') if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit('unknown parts: %s' % ', '.join(unknown))
    for part in parts:
        print('%-12s %9d  %s' % (part, count(part, args.calls, args.warmup),
                                 PARTS[part]))
    return 0


if __name__ == '__main__':  # pragma: no cover - a command
    raise SystemExit(main())
