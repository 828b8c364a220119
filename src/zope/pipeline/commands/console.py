"""What ``zope-pipeline shell`` and ``zope-pipeline run`` work in: the site
of an ini loaded in this process, its database open, and the names they
offer (root, app, registry, transaction manager...)."""

import contextlib
import os

from zope.pipeline.serving.layout import become_database_user
from zope.pipeline.serving.startup import configure_logging
from zope.pipeline.serving.startup import load_application
from zope.pipeline.serving.startup import process_databases

#: The names offered, and what each is (the shell's banner says so).
NAMES = (
    ('root', 'the root folder of the site (the local site is set to it)'),
    ('app', 'the WSGI application the ini builds'),
    ('publisher', "zope.pipeline's publisher in it, with its chains"),
    ('registry', 'the global component registry (what the ZCML '
                 'registered)'),
    ('db', 'the ZODB database'),
    ('connection', 'the ZODB connection root comes from'),
    ('transaction_manager', 'its transaction manager (transaction.manager)'),
)


@contextlib.contextmanager
def opened_site(ini, name='main', reads=()):
    """{name: object} of NAMES for the site of ``ini``.  At the end the
    transaction is aborted: only what was committed
    (``transaction_manager.commit()``) is kept.  Run by root, the site is
    opened as the database's user (``layout.become_database_user``;
    ``reads``: what else the command reads)."""
    # late: --help (run and shell import this module)
    import transaction
    from zope.component import getGlobalSiteManager
    from zope.component.hooks import setSite
    ini = os.path.abspath(ini)
    if not os.path.exists(ini):
        raise SystemExit('The ini file %s does not exist.' % ini)
    become_database_user(ini, name, reads)
    configure_logging(ini)
    application, publisher = load_application(ini, name)
    databases = process_databases(publisher)
    if not databases:
        raise SystemExit('%s opens no database (its pipeline has no '
                         'open_root stage).' % ini)
    database = databases[0]
    manager = transaction.manager
    connection = database.get().open(transaction_manager=manager)
    root = connection.root()[database.root_name]
    try:
        setSite(root)
        yield {'root': root, 'app': application, 'publisher': publisher,
               'registry': getGlobalSiteManager(), 'db': database.db,
               'connection': connection, 'transaction_manager': manager}
    finally:
        setSite(None)
        manager.abort()
        connection.close()
        database.close()


def describe_names():
    """One line per name offered: what it is."""
    return '\n'.join('  %-20s %s' % item for item in NAMES)
