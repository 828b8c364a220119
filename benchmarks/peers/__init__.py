"""The peers: the same page (``benchmarks.peers.page``) served by Pyramid
(plain, and with an ACL view permission), Zope 6, the classic Zope 3
publisher and zope.pipeline (proxied, and view-checked), each from its
own database, and the plain-WSGI ceiling serving its bytes.

Each peer is a package with ``make_app(zodb_config, workdir)`` (or the
function its ``Peer`` names): the WSGI
application on the database of a ZConfig file (``<zodb main>``), which
adds the page's content at the database's first start.  The benchmark's
WSGI script calls it in every server process; ``python -m
benchmarks.peers`` runs a first start alone (the populate step) or renders
the page once.
"""

import dataclasses
import importlib
import importlib.metadata
import importlib.util
import os
import tempfile


@dataclasses.dataclass(frozen=True)
class Peer:
    """An application of the comparison."""

    name: str
    #: What it is, as the table names it.
    label: str
    #: The package with ``make_app``; None for the ceiling.
    module: str = None
    #: The distribution whose version the label shows.
    distribution: str = None
    #: The module's function making the app.
    function: str = 'make_app'
    #: Another checkout of zope.pipeline whose code (``src``) and
    #: ``benchmarks`` serve this app (``NAME@CHECKOUT``), or None: this
    #: one's.
    checkout: str = None

    @property
    def base_name(self):
        """The name of the peer, without ``@CHECKOUT``."""
        return self.name.partition('@')[0]

    def describe(self):
        version = distribution_version(self.distribution)
        return self.label % {'version': version or '?'}

    def make_app(self, zodb_config, workdir):
        make_app = getattr(importlib.import_module(self.module),
                           self.function)
        return make_app(zodb_config, workdir)


def distribution_version(name):
    if name is None:
        return None
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


CEILING = Peer('ceiling', 'plain WSGI app, same bytes (ceiling)')
PYRAMID = Peer('pyramid', 'Pyramid %(version)s + pyramid_tm + '
               'pyramid_zodbconn + Chameleon',
               'benchmarks.peers.pyramid_peer', 'pyramid')
PYRAMID_ACL = Peer('pyramid-acl', 'Pyramid %(version)s, the same with an '
                   'ACL security policy and the view\'s permission',
                   'benchmarks.peers.pyramid_peer', 'pyramid',
                   'make_acl_app')
ZOPE = Peer('zope', 'Zope %(version)s (ZPublisher, Chameleon page template)',
            'benchmarks.peers.zope_peer', 'Zope')
CLASSIC = Peer('classic', 'classic Zope 3 publisher (zope.app.wsgi '
               '%(version)s + zope.app.publication, browser:page, zope.tal)',
               'benchmarks.peers.classic_peer', 'zope.app.wsgi')
PIPELINE = Peer('pipeline', 'zope.pipeline (standard stages, browser:page, '
                'Chameleon)', 'benchmarks.peers.pipeline_peer',
                'zope.pipeline')
PIPELINE_CHECKED = Peer(
    'pipeline-checked', 'zope.pipeline, the same configured view-checked '
    '(ITrustedView)', 'benchmarks.peers.pipeline_checked_peer',
    'zope.pipeline')

PIPELINE_CACHED = Peer(
    'pipeline-cached', 'zope.pipeline, the same with its response cache on '
    '(pipeline:cacheable)', 'benchmarks.peers.pipeline_cached_peer',
    'zope.pipeline')

#: In the order of the table (and of the first round).
PEERS = (CEILING, PYRAMID, PYRAMID_ACL, ZOPE, CLASSIC, PIPELINE,
         PIPELINE_CHECKED, PIPELINE_CACHED)
BY_NAME = {peer.name: peer for peer in PEERS}


def resolve(name):
    """The peer ``name``: one of ``BY_NAME``, or ``NAME@CHECKOUT``, the
    peer ``NAME`` served from the code of another checkout of zope.pipeline
    (the directory holding its ``src`` and ``benchmarks``), to compare two
    versions side by side in one run.  KeyError for an unknown name,
    ValueError for a directory that is no checkout."""
    base, at, checkout = name.partition('@')
    peer = BY_NAME[base]
    if not at:
        return peer
    checkout = os.path.abspath(checkout)
    if not os.path.isdir(os.path.join(checkout, 'src', 'zope', 'pipeline')) \
            or not os.path.isdir(os.path.join(checkout, 'benchmarks')):
        raise ValueError('%s is not a checkout of zope.pipeline (no '
                         'src/zope/pipeline and benchmarks in it)' % checkout)
    # The name names files: the checkout's directory name, not its path.
    return dataclasses.replace(
        peer, name='%s@%s' % (base, os.path.basename(checkout)),
        checkout=checkout,
        label='%s, the code of %s' % (peer.label, checkout))

#: Modules the peers (and paste.httpserver) import that the runtime does
#: not install (the ``bench`` extra does).
BENCH_MODULES = ('pyramid', 'pyramid_tm', 'pyramid_zodbconn',
                 'pyramid_chameleon', 'Zope2', 'zope.app.wsgi',
                 'zope.app.publication', 'zope.app.appsetup',
                 'paste.httpserver')


def missing_modules():
    """The ``bench`` extra's modules that cannot be imported here."""
    return [name for name in BENCH_MODULES
            if importlib.util.find_spec(name) is None]


def write_file(path, text):
    """Write ``path`` whole at once: the server's processes start together
    and each writes the same file, which another may be reading."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path),
                                         prefix='.writing-')
    with os.fdopen(handle, 'w') as output:
        output.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
    return path


def fix_relstorage_on_mariadb():
    """RelStorage 4.3 sends MySQL-8-only SQL to MariaDB 10.11: every peer
    gets the fix zope.pipeline applies (``zope.pipeline.zodb.compat``, which
    imports only RelStorage) before its storage opens."""
    from zope.pipeline.zodb import compat
    compat.apply()
