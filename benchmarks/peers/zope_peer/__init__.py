"""The Zope peer: Zope 6 (ZPublisher, OFS) serving ``folder/page``, whose
default view is a ``PageTemplateFile`` (rendered by Chameleon in Zope 4
and later), from the database of a ZConfig file."""

import os
import re

from benchmarks.peers import fix_relstorage_on_mariadb
from benchmarks.peers import write_file

_ZOPE_CONF = '''\
%%define INSTANCE %(instance)s
instancehome $INSTANCE
debug-mode off
security-policy-implementation C
verbose-security off
default-zpublisher-encoding utf-8
%(database)s
'''


def zope_database(zodb_text):
    """A ZODB ZConfig text (``<zodb main>``) as zope.conf's
    ``<zodb_db main>`` mounted at ``/``."""
    text, opened = re.subn(r'<zodb\s+main\s*>',
                           '<zodb_db main>\n  mount-point /', zodb_text)
    if not opened:
        raise ValueError('The ZConfig text has no <zodb main> section.')
    return re.sub(r'</zodb\s*>', '</zodb_db>', text)


def write_zope_conf(zodb_config, workdir):
    instance = os.path.join(workdir, 'zope-instance')
    os.makedirs(os.path.join(instance, 'var'), exist_ok=True)
    with open(zodb_config) as source:
        database = zope_database(source.read())
    return write_file(os.path.join(instance, 'zope.conf'), _ZOPE_CONF % {
        'instance': instance, 'database': database})


def make_app(zodb_config, workdir):
    """Zope's WSGI application (``publish_module``), started in this
    process; the content is added at the database's first start."""
    from Zope2.Startup.run import make_wsgi_app
    fix_relstorage_on_mariadb()
    app = make_wsgi_app({}, write_zope_conf(zodb_config, workdir))
    populate_database()
    return app


def populate_database():
    import transaction
    import Zope2
    from benchmarks.peers.zope_peer.content import populate
    root = Zope2.app()
    try:
        if populate(root):
            transaction.commit()
        else:
            transaction.abort()
    finally:
        root._p_jar.close()
