"""The view-checked security model (zope.pipeline.security.models): content
that declares no security, as Grok's models, is traversed and used bare;
the published view's permission is checked once, when it is called
(tests/functional/viewchecked/site.zcml)."""

import os
import xmlrpc.client

import pytest

from fixtures.testing import basic_auth

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    'viewchecked', 'site.zcml')
SETTINGS = {'open_root': {
    'populate': 'tests.functional.viewchecked.content.populate'}}
KEEPER = basic_auth('keeper', 'secret')
VISITOR = basic_auth('visitor', 'secret')


@pytest.fixture
def app(make_testapp):
    return make_testapp(SITE, SETTINGS)


def xmlrpc_body(method, *params):
    return xmlrpc.client.dumps(params, method).encode()


# -- traversal hands back the objects themselves

def test_view_checked_chain_traverses_content_without_security_declarations(
        app):
    # the herd's traverser calls its undeclared ``get``; the page reads the
    # undeclared ``name``: both ForbiddenAttribute behind proxies
    assert app.get('/herd/manfred').text == 'Mammoth manfred'
    assert app.get('/herd/manfred/@@index.html').text == 'Mammoth manfred'


def test_proxied_chain_refuses_the_same_content(make_testapp, tmp_path):
    site = tmp_path / 'proxied.zcml'
    site.write_text(open(SITE).read().replace(
        '<pipeline:security model="view-checked" />', ''))
    proxied = make_testapp(str(site), SETTINGS)
    response = proxied.get('/herd/manfred', expect_errors=True)
    assert response.status_int != 200
    assert b'Mammoth manfred' not in response.body


# -- the published view's permission, checked when it is called

def test_anonymous_request_to_protected_view_is_challenged(app):
    response = app.get('/herd/manfred/@@secret', status=401)
    assert 'WWW-Authenticate' in response.headers
    assert b'Secret' not in response.body


def test_authenticated_request_without_the_permission_is_forbidden(app):
    response = app.get('/herd/manfred/@@secret', headers=VISITOR,
                       status=403)
    assert b'Secret' not in response.body


def test_principal_with_the_permission_sees_the_protected_view(app):
    response = app.get('/herd/manfred/@@secret', headers=KEEPER)
    assert response.text == 'Secret of manfred'


def test_decisions_kept_across_requests_still_refuse_anonymous(app):
    """The view's decision is the global one (nothing in the database
    grants anything): kept across requests per principal, groups and
    permission, and ended by a change of the global maps."""
    from zope.securitypolicy.principalpermission import (
        principalPermissionManager,
    )
    for _ in range(2):
        app.get('/herd/manfred/@@secret', status=401)
        app.get('/herd/manfred/@@secret', headers=VISITOR, status=403)
        app.get('/herd/manfred/@@secret', headers=KEEPER, status=200)
    principalPermissionManager.grantPermissionToPrincipal(
        'viewchecked.secret', 'viewchecked.visitor')
    app.get('/herd/manfred/@@secret', headers=VISITOR, status=200)
    app.get('/herd/manfred/@@secret', status=401)
    principalPermissionManager.unsetPermissionForPrincipal(
        'viewchecked.secret', 'viewchecked.visitor')
    app.get('/herd/manfred/@@secret', headers=VISITOR, status=403)
    app.get('/herd/manfred/@@secret', status=401)


def test_untrusted_view_is_checked_and_sees_proxied_content(app):
    app.get('/herd/manfred/@@untrusted', status=401)
    app.get('/herd/manfred/@@untrusted', headers=VISITOR, status=403)
    # made on the proxied mammoth, as in a proxied chain: the page may
    # not read its undeclared ``name`` (ForbiddenAttribute, 404)
    response = app.get('/herd/manfred/@@untrusted', headers=KEEPER,
                       status=404)
    assert b'manfred' not in response.body


def test_anonymous_xmlrpc_call_of_protected_method_view_is_challenged(app):
    response = app.post('/herd/manfred', xmlrpc_body('feed', 'grass'),
                        headers={'Content-Type': 'text/xml'},
                        expect_errors=True)
    assert response.status_int == 401
    assert b'ate grass' not in response.body


def test_xmlrpc_method_view_runs_for_the_principal_with_the_permission(app):
    response = app.post('/herd/manfred', xmlrpc_body('feed', 'grass'),
                        headers=dict(KEEPER, **{'Content-Type': 'text/xml'}))
    assert xmlrpc.client.loads(response.body)[0] == ('manfred ate grass',)


def test_plain_http_method_view_is_checked_before_it_is_called(app):
    app.put('/herd/manfred', b'', status=401)
    app.put('/herd/manfred', b'', headers=VISITOR, status=403)
    assert app.put('/herd/manfred', b'', headers=KEEPER).text == \
        'Put manfred'


def test_plain_http_method_without_view_is_not_allowed(app):
    response = app.delete('/herd/manfred', headers=KEEPER, status=405)
    assert b'manfred' not in response.body


def test_page_published_through_its_default_method_is_checked(app):
    # a browser:page class's default is its bound __call__: checked as the
    # view's attribute, not as a method every principal may call
    app.get('/herd/manfred/@@secret', status=401)
    assert app.get('/herd/manfred/@@secret',
                   headers=KEEPER).text == 'Secret of manfred'


# -- a request type made from Grok's publication

def test_grok_publication_sends_its_event_after_traversal(make_testapp):
    pytest.importorskip('grokcore.view')
    from grokcore.view.interfaces import IAfterTraversalEvent
    from zope.component import provideHandler
    app = make_testapp(SITE.replace('site.zcml', 'grok.zcml'), SETTINGS)
    seen = []
    provideHandler(lambda event: seen.append(
        (type(event.object.__self__).__name__, event.request.getURL())),
        (IAfterTraversalEvent,))
    assert app.get('/herd/manfred').text == 'Mammoth manfred'
    app.get('/herd/manfred/@@secret', status=401)
    # the published objects: the pages' methods (their default)
    assert seen == [
        ('MammothPage', 'http://localhost/herd/manfred/index.html'),
        ('SecretPage', 'http://localhost/herd/manfred/@@secret')]


def test_chain_without_publication_sends_no_event_after_traversal(app):
    pytest.importorskip('grokcore.view')
    from grokcore.view.interfaces import IAfterTraversalEvent
    from zope.component import provideHandler
    seen = []
    provideHandler(seen.append, (IAfterTraversalEvent,))
    app.get('/herd/manfred')
    assert seen == []


def test_grok_http_publication_raises_its_error_for_a_method_without_view(
        make_testapp):
    pytest.importorskip('grokcore.rest')
    from grokcore.rest.rest import GrokMethodNotAllowed
    app = make_testapp(SITE.replace('site.zcml', 'grok.zcml'), SETTINGS)
    assert app.put('/herd/manfred', b'', headers=KEEPER).text == \
        'Put manfred'
    app.delete('/herd/manfred', headers=KEEPER, status=405)
    with pytest.raises(GrokMethodNotAllowed):
        app.delete('/herd/manfred', headers=KEEPER,
                   extra_environ={'wsgi.handleErrors': False})
