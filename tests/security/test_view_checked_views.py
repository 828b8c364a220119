"""The view-checked security model runs untrusted views as the proxied
chain runs them.

The sample site's views (``browser:page``, not ``ITrustedView``) were
written for security-proxied content: in a view-checked chain they must
see a proxied context and be checked exactly as in the proxied chain.
Only views that say they are trusted (``securitymodels.
TRUSTED_VIEW_INTERFACES``) get the objects themselves.  Each attack is
replayed on the sample site configured with both models: the answers
must be the proxied chain's.
"""

import pytest
from zope.securitypolicy.interfaces import IPrincipalPermissionManager

from zope.pipeline.sample.content import Page
from zope.pipeline.sample.content import populate

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_method_views import basic
from tests.security.test_security import SECURITY_ZCML

MODELS = ('proxied', 'view-checked')
SITE = '''<configure xmlns="http://namespaces.zope.org/zope"
           xmlns:browser="http://namespaces.zope.org/browser"
           xmlns:pipeline="http://namespaces.zope.org/pipeline">
  <include file="%s" />
  <pipeline:security model="%s" />
  <!-- local grants on pages -->
  <class class="zope.pipeline.sample.content.Page">
    <implements
        interface="zope.annotation.interfaces.IAttributeAnnotatable" />
  </class>
  <browser:page for="zope.pipeline.sample.interfaces.IPage"
                name="trusted-title"
                class="tests.security.views.TrustedTitle"
                permission="zope.Public" />
  <browser:page for="zope.pipeline.sample.interfaces.IPage"
                name="untrusted-title"
                class="tests.security.views.UntrustedTitle"
                permission="zope.Public" />
  <browser:page for="zope.pipeline.sample.interfaces.IPage"
                name="title-attribute"
                class="tests.security.views.UntrustedTitle"
                attribute="title_of_context"
                permission="zope.Public" />
</configure>
'''
SECRET_TITLE = 'About the sample site'
ORIGIN = {'HTTP_ORIGIN': 'http://localhost',
          'CONTENT_TYPE': 'application/x-www-form-urlencoded'}


def populate_with_denials(root):
    """The sample content; ``/folder/about`` is denied to everybody
    (zope.View), and commenting on ``/folder/page`` too; ``/folder/open``
    is a page without denials."""
    populate(root)
    root['folder']['open'] = Page('An open page', 'Comment here.')
    IPrincipalPermissionManager(root['folder']['about']) \
        .denyPermissionToPrincipal('zope.View', 'zope.Everybody')
    IPrincipalPermissionManager(root['folder']['page']) \
        .denyPermissionToPrincipal('zope.pipeline.sample.AddComment',
                                   'zope.Everybody')


@pytest.fixture(params=MODELS)
def site(request, clean_zope, tmp_path):
    """The sample site with the local denials, under each model."""
    zcml = tmp_path / 'site.zcml'
    zcml.write_text(SITE % (SECURITY_ZCML, request.param))
    settings = site_settings()
    settings['open_root']['populate'] = (
        'tests.security.test_view_checked_views.populate_with_denials')
    client = RawClient(build_site(str(zcml), settings))
    client.model = request.param
    return client


def comments_of_page(client):
    response = client.request(path='/folder/page/@@index.html')
    assert response.status_int == 200
    return response.text


def test_view_checked_listing_hides_denied_page_title(site):
    response = site.request(path='/folder')
    assert response.status_int == 401
    assert SECRET_TITLE not in response.text


def test_view_checked_search_hides_denied_page_title(site):
    response = site.request(path='/folder/@@search', query='q=about')
    assert response.status_int == 401
    assert SECRET_TITLE not in response.text


def test_view_checked_denied_page_itself_is_challenged(site):
    for path in ('/folder/about', '/folder/about/@@index.html',
                 '/folder/about/++view++index.html'):
        response = site.request(path=path)
        assert response.status_int == 401, path
        assert SECRET_TITLE not in response.text


def test_view_checked_anonymous_comment_on_denied_page_is_refused(site):
    response = site.request(
        'POST', '/folder/page/@@add-comment', body=b'text=planted',
        headers=ORIGIN)
    assert response.status_int == 401
    assert 'planted' not in comments_of_page(site)
    # on a page without the denial, the same form stores it
    response = site.request(
        'POST', '/folder/open/@@add-comment', body=b'text=allowed',
        headers=ORIGIN)
    assert response.status_int == 303
    assert 'allowed' in site.request(path='/folder/open').text


def test_view_checked_page_attribute_is_reached_through_the_view_proxy(
        site):
    # a browser:page with attribute=: the published callable is the
    # view's bound method, which reads the context behind its proxy
    response = site.request(path='/folder/about/@@title-attribute')
    assert response.status_int == 401
    assert SECRET_TITLE not in response.text


def test_view_checked_untrusted_view_sees_a_proxied_context(site):
    response = site.request(path='/folder/page/@@untrusted-title')
    assert response.status_int == 200
    assert response.text == 'proxied: True'


def test_view_checked_trusted_view_gets_bare_objects(site):
    response = site.request(path='/folder/page/@@trusted-title')
    assert response.status_int == 200
    # the proxied chain proxies every view; a view-checked one leaves a
    # view that says it is trusted bare, on bare content
    expected = 'True' if site.model == 'proxied' else 'False'
    assert response.text == 'proxied: %s' % expected


def page_title(client):
    response = client.request(path='/folder/page')
    assert response.status_int == 200
    return response.text.split('<title>', 1)[1].split('</title>', 1)[0]


def test_view_checked_delete_method_view_is_checked_as_in_the_proxied_chain(
        site):
    before = page_title(site)
    assert site.request('DELETE', '/folder/page').status_int == 401
    assert site.request('DELETE', '/folder/page',
                        headers=basic('reader', 'readerpw')).status_int == 403
    # a method the view's checker does not name: nobody may call it
    assert site.request('PATCH', '/folder/page',
                        headers=basic('admin', 'admin')).status_int == 404
    assert page_title(site) == before
    response = site.request('DELETE', '/folder/page',
                            headers=basic('admin', 'admin'))
    assert (response.status_int, response.body) == (200, b'deleted')
