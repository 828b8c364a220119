"""Method views (plain HTTP PUT, DELETE, ...) are called behind their
security checker, as every other published callable: a DELETE view that
needs zope.ManageContent refuses anonymous users (401) and authenticated
principals without the permission (403), and changes nothing for them."""

import base64

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.test_security import SECURITY_ZCML


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


@pytest.fixture
def site(clean_zope):
    return RawClient(build_site(SECURITY_ZCML))


def page_title(site):
    response = site.request('GET', '/folder/page')
    assert response.status_int == 200
    return response.text.split('<title>', 1)[1].split('</title>', 1)[0]


def test_anonymous_delete_skips_the_method_views_permission(site):
    before = page_title(site)
    response = site.request('DELETE', '/folder/page')
    assert response.status_int == 401
    assert response.header_values('WWW-Authenticate')
    assert page_title(site) == before


def test_reader_delete_without_manage_content_is_forbidden(site):
    before = page_title(site)
    response = site.request('DELETE', '/folder/page',
                            headers=basic('reader', 'readerpw'))
    assert response.status_int == 403
    assert page_title(site) == before


def test_manager_may_call_the_method_view(site):
    response = site.request('DELETE', '/folder/page',
                            headers=basic('admin', 'admin'))
    assert response.status_int == 200
    assert response.body == b'deleted'


def test_method_view_whose_checker_does_not_name_the_method_is_refused(site):
    before = page_title(site)
    response = site.request('PATCH', '/folder/page',
                            headers=basic('admin', 'admin'))
    assert response.status_int == 404
    assert page_title(site) == before
