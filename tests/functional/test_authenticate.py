"""authenticate: the principal from the global principal registry (HTTP
basic auth), a security interaction around the rest of the request, and
placeful authentication at local sites."""

import pytest
from zope.security.management import queryInteraction

from . import inner
from .inner.content import LOCAL_LOGIN
from .inner.content import LOCAL_PASSWORD
from .inner.content import LOCAL_PRINCIPAL_ID


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


def whoami(app, path='/folder/doc/@@whoami', **headers):
    return app.get(path, headers=headers).json


def test_basic_auth_principal_comes_from_the_global_principal_registry(app):
    seen = whoami(app, **inner.basic_auth('alice', 'alicepw'))
    assert seen['principal'] == 'zope.alice'


def test_wrong_password_and_no_credentials_give_the_unauthenticated_principal(
        app):
    assert whoami(app, **inner.basic_auth('alice', 'wrong'))[
        'principal'] == 'zope.anybody'
    assert whoami(app)['principal'] == 'zope.anybody'


def test_malformed_basic_auth_header_counts_as_no_credentials(app):
    seen = whoami(app, Authorization='Basic not-base64!')
    assert seen['principal'] == 'zope.anybody'


def test_security_interaction_exists_during_the_view_and_ends_after(app):
    seen = whoami(app, **inner.basic_auth('alice', 'alicepw'))
    assert seen['interaction'] is True
    assert seen['participation_is_request'] is True
    assert queryInteraction() is None


def test_security_interaction_is_ended_after_an_error_in_the_view(app):
    app.get('/folder/doc/@@fail?kind=boom', status=500)
    assert queryInteraction() is None
    # the next request on this thread starts a new interaction
    assert whoami(app)['interaction'] is True


def test_security_interaction_is_ended_after_unauthorized(app):
    app.get('/folder/doc/@@secret', status=401)
    assert queryInteraction() is None


def test_local_site_authenticates_a_principal_the_global_registry_does_not(
        app):
    credentials = inner.basic_auth(LOCAL_LOGIN, LOCAL_PASSWORD)
    at_site = whoami(app, '/site/doc/@@whoami', **credentials)
    outside = whoami(app, '/folder/doc/@@whoami', **credentials)
    assert at_site['principal'] == LOCAL_PRINCIPAL_ID
    assert at_site['site_name'] == 'site'
    assert outside['principal'] == 'zope.anybody'


def test_placeful_authentication_keeps_a_globally_authenticated_principal(
        app):
    seen = whoami(app, '/site/doc/@@whoami',
                  **inner.basic_auth('alice', 'alicepw'))
    assert seen['principal'] == 'zope.alice'


def test_permission_granted_to_a_principal_is_checked_in_the_interaction(
        app):
    response = app.get('/folder/doc/@@secret',
                       headers=inner.basic_auth('bob', 'bobpw'))
    assert response.text == 'secret for zope.bob'


def test_without_an_authentication_utility_the_request_has_no_principal(
        clean_zope):
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.authenticate import AuthenticateStage
    seen = []

    def rest_of_pipeline(environ, start_response):
        request = environ['zope.request']
        seen.append((request.principal, queryInteraction() is not None))
        start_response('200 OK', [])
        return []

    request = TestRequest()
    stage = AuthenticateStage(rest_of_pipeline)
    stage({'zope.request': request}, lambda status, headers: None)
    assert seen == [(None, True)]
    assert queryInteraction() is None
    assert request.interaction is None


def test_without_an_authentication_utility_the_fallback_principal_is_used(
        clean_zope):
    # the classic publisher's IFallbackUnauthenticatedPrincipal (what
    # zope.principalregistry provides when no unauthenticatedPrincipal is
    # configured): without it the security policy fails on principal.id
    from zope.authentication.interfaces import (
        IFallbackUnauthenticatedPrincipal,
    )
    from zope.component import provideUtility
    from zope.principalregistry.principalregistry import (
        UnauthenticatedPrincipal,
    )
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.authenticate import AuthenticateStage
    fallback = UnauthenticatedPrincipal('zope.fallback', 'Fallback', '')
    provideUtility(fallback, IFallbackUnauthenticatedPrincipal)
    seen = []

    def rest_of_pipeline(environ, start_response):
        seen.append(environ['zope.request'].principal)
        return []

    stage = AuthenticateStage(rest_of_pipeline)
    stage({'zope.request': TestRequest()}, lambda status, headers: None)
    assert seen == [fallback]


def test_local_site_unauthenticated_principal_replaces_the_global_one(
        app, monkeypatch):
    from .inner.content import LocalAuthentication
    from .inner.content import LocalPrincipal
    monkeypatch.setattr(LocalAuthentication, 'unauthenticatedPrincipal',
                        lambda self: LocalPrincipal('local.anybody'))
    assert whoami(app, '/site/doc/@@whoami')['principal'] == 'local.anybody'
    assert whoami(app, '/folder/doc/@@whoami')['principal'] == \
        'zope.anybody'
