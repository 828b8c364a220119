"""The classic Zope 3 publisher peer: the pipeline peer's content, security
declarations, view and template (``pipeline_peer``) in a Zope 3 site
served by ``zope.app.wsgi.WSGIPublisherApplication`` (zope.publisher's
``publish`` with zope.app.publication's ``BrowserPublication``), its
template rendered by zope.pagetemplate's stock engine (zope.tal), as a
Zope 3 site is started: a ``zope.conf`` naming ``site.zcml`` and the
database, read by ``zope.app.wsgi.getWSGIApplication``; the root folder
bootstrapped by zope.app.appsetup.  zope.pipeline is not imported (but for
the RelStorage fix every peer gets)."""

import os

from benchmarks.peers import fix_relstorage_on_mariadb
from benchmarks.peers import write_file

SITE_ZCML = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         'site.zcml')

_ZOPE_CONF = '''\
site-definition %(site_zcml)s
%(database)s
<eventlog>
  level WARNING
  <logfile>
    path %(event_log)s
  </logfile>
</eventlog>
'''


def write_zope_conf(zodb_config, workdir):
    """The site's ``zope.conf`` (zope.app.appsetup's schema): the ZCML,
    the ``<zodb main>`` database of ``zodb_config`` and a WARNING log."""
    with open(zodb_config) as source:
        database = source.read()
    return write_file(os.path.join(workdir, 'classic-zope.conf'),
                      _ZOPE_CONF % {
                          'site_zcml': SITE_ZCML, 'database': database,
                          'event_log': os.path.join(workdir,
                                                    'classic-event.log')})


def make_app(zodb_config, workdir):
    """The classic publisher on the database of ``zodb_config``; the page
    is added to the bootstrapped root folder at the database's first
    start."""
    import zope.event
    import zope.processlifetime
    from zope.app.wsgi import getWSGIApplication
    fix_relstorage_on_mariadb()
    app = getWSGIApplication(write_zope_conf(zodb_config, workdir))
    populate_database(app.requestFactory._db)
    zope.event.notify(zope.processlifetime.ProcessStarting())
    return app


def populate_database(db):
    """Add ``folder/page`` to the root folder unless it is there."""
    import transaction
    from zope.app.publication.zopepublication import ZopePublication

    from benchmarks.peers.page import FOLDER_NAME
    from benchmarks.peers.pipeline_peer.content import populate
    manager = transaction.TransactionManager()
    connection = db.open(transaction_manager=manager)
    try:
        root_folder = connection.root()[ZopePublication.root_name]
        if FOLDER_NAME not in root_folder:
            populate(root_folder)
            manager.commit()
    finally:
        manager.abort()
        connection.close()
