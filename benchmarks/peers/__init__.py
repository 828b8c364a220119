"""The peers: the same page (``benchmarks.peers.page``) served by Pyramid,
Zope and zope.pipeline, each from its own database, and the plain-WSGI
ceiling serving its bytes.

Each peer is a package with ``make_app(zodb_config, workdir)``: the WSGI
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

    def describe(self):
        version = distribution_version(self.distribution)
        return self.label % {'version': version or '?'}

    def make_app(self, zodb_config, workdir):
        return importlib.import_module(self.module).make_app(zodb_config,
                                                             workdir)


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
ZOPE = Peer('zope', 'Zope %(version)s (ZPublisher, Chameleon page template)',
            'benchmarks.peers.zope_peer', 'Zope')
PIPELINE = Peer('pipeline', 'zope.pipeline (standard stages, browser:page, '
                'Chameleon)', 'benchmarks.peers.pipeline_peer',
                'zope.pipeline')

#: In the order of the table (and of the first round).
PEERS = (CEILING, PYRAMID, ZOPE, PIPELINE)
BY_NAME = {peer.name: peer for peer in PEERS}

#: Modules the peers import that the runtime does not install (the
#: ``bench`` extra does).
BENCH_MODULES = ('pyramid', 'pyramid_tm', 'pyramid_zodbconn',
                 'pyramid_chameleon', 'Zope2')


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
    gets the fix zope.pipeline applies (``zope.pipeline.compat``, which
    imports only RelStorage) before its storage opens."""
    from zope.pipeline import compat
    compat.apply()
