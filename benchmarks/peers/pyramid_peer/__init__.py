"""The Pyramid peer: Pyramid 2 with pyramid_tm (an explicit transaction
manager), pyramid_zodbconn (a connection per request) and Chameleon
(pyramid_chameleon); traversal over the ZODB, one view for ``Page``.

``make_acl_app`` is the ``pyramid-acl`` peer: the same app with a
security policy deciding by ACL (Pyramid 2's ``ACLHelper``, the root's
``__acl__`` letting ``Everyone`` view) and the view registered with
``permission='view'``, as Pyramid's tutorials protect views."""

import transaction
from pyramid.authorization import ACLHelper
from pyramid.authorization import Everyone
from pyramid.config import Configurator
from pyramid_zodbconn import get_connection

from benchmarks.peers import fix_relstorage_on_mariadb
from benchmarks.peers.pyramid_peer.content import ROOT_KEY
from benchmarks.peers.pyramid_peer.content import Page
from benchmarks.peers.pyramid_peer.content import build


def populate(zodb_root):
    """Add the content to a new database's root mapping; False when it
    was there already."""
    if ROOT_KEY in zodb_root:
        return False
    zodb_root[ROOT_KEY] = build()
    return True


def root_factory(request):
    return get_connection(request).root()[ROOT_KEY]


def page_view(context, request):
    return {'title': context.title,
            'item_titles': [item.title for item in context.values()]}


def settings_for(zodb_config):
    return {'zodbconn.uri': 'zconfig://%s#main' % zodb_config,
            'tm.manager_hook': 'pyramid_tm.explicit_manager',
            'pyramid.reload_templates': False}


class ACLSecurityPolicy:
    """Anonymous visitors only (``Everyone``), permissions from the
    context's ACLs (Pyramid 2's ``ACLHelper``)."""

    helper = ACLHelper()

    def identity(self, request):
        return None

    def authenticated_userid(self, request):
        return None

    def effective_principals(self, request):
        return [Everyone]

    def permits(self, request, context, permission):
        return self.helper.permits(
            context, self.effective_principals(request), permission)

    def remember(self, request, userid, **kw):
        return []

    def forget(self, request, **kw):
        return []


def make_app(zodb_config, workdir=None, security_policy=None,
             permission=None):
    """The WSGI application on the database of ``zodb_config``, populated
    at its first start; with a security policy and the view's permission
    when given."""
    fix_relstorage_on_mariadb()
    with Configurator(settings=settings_for(zodb_config),
                      root_factory=root_factory) as config:
        config.include('pyramid_tm')
        config.include('pyramid_zodbconn')
        config.include('pyramid_chameleon')
        if security_policy is not None:
            config.set_security_policy(security_policy)
        config.add_view(page_view, context=Page, permission=permission,
                        renderer='benchmarks.peers.pyramid_peer:page.pt')
        app = config.make_wsgi_app()
    populate_database(app.registry._zodb_databases[''])
    return app


def make_acl_app(zodb_config, workdir=None, permission='view'):
    """The ``pyramid-acl`` peer: the view needs ``permission``, which the
    root's ACL gives ``Everyone`` when it is ``view``."""
    return make_app(zodb_config, workdir, ACLSecurityPolicy(), permission)


def populate_database(db):
    manager = transaction.TransactionManager(explicit=True)
    connection = db.open(transaction_manager=manager)
    try:
        with manager:
            populate(connection.root())
    finally:
        connection.close()
