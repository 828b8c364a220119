"""Clickjacking: a page of this site shown in a frame of another site can
be clicked blind, and the form it sends carries this site's own Origin
(the csrf stage lets it through).  Every response, the edit form, error
pages and the other stages' short answers included, tells browsers to
show it in a frame of this site only (X-Frame-Options: SAMEORIGIN,
Content-Security-Policy: frame-ancestors 'self'), and not to sniff it."""

import xmlrpc.client

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_security import ADMIN
from tests.security.test_security import SECURITY_ZCML


@pytest.fixture(scope='module')
def site():
    import zope.testing.cleanup

    from zope.pipeline.zodb import storage
    zope.testing.cleanup.cleanUp()
    yield RawClient(build_site(SECURITY_ZCML))
    storage.close_all()
    zope.testing.cleanup.cleanUp()


RESPONSES = [
    ('GET', '/folder/page', '', b'', {}, 200),
    ('GET', '/folder/page/@@edit', '', b'', ADMIN, 200),
    ('GET', '/folder/page/@@edit', '', b'', {}, 401),
    ('GET', '/no-such-page', '', b'', {}, 404),
    ('GET', '/folder/page/@@explode', '', b'', {}, 500),
    ('PUT', '/folder/page', '', b'', {}, 405),
    ('GET', '/folder/page', '', b'', {'HTTP_HOST': 'evil.example'}, 400),
    ('POST', '/folder/page/@@index.html', '', b'x' * 200000, {}, 413),
    ('POST', '/folder/page/@@edit', '', b'title=x',
     dict(ADMIN, HTTP_ORIGIN='http://evil.example',
          CONTENT_TYPE='application/x-www-form-urlencoded'), 403),
    ('POST', '/folder', '', xmlrpc.client.dumps((), 'no_such').encode(),
     {'CONTENT_TYPE': 'text/xml'}, 200),
]


@pytest.mark.parametrize('method, path, query, body, headers, status',
                         RESPONSES)
def test_pages_refuse_framing_by_other_sites(site, method, path, query,
                                             body, headers, status):
    response = site.request(method, path, query, body, headers)
    assert response.status_int == status
    assert response.header_values('X-Frame-Options') == ['SAMEORIGIN']
    assert response.header_values('Content-Security-Policy') == [
        "frame-ancestors 'self'"]
    assert response.header_values('X-Content-Type-Options') == ['nosniff']


def test_framing_headers_follow_the_settings(clean_zope):
    site = RawClient(build_site(SECURITY_ZCML, site_settings(
        security_headers={'frame_options': 'DENY',
                          'frame_ancestors': "'none'"})))
    response = site.request('GET', '/folder/page')
    assert response.header_values('X-Frame-Options') == ['DENY']
    assert response.header_values('Content-Security-Policy') == [
        "frame-ancestors 'none'"]


def test_each_security_header_can_be_turned_off(clean_zope):
    site = RawClient(build_site(SECURITY_ZCML, site_settings(
        security_headers={'frame_options': '', 'frame_ancestors': '',
                          'nosniff': 'false'})))
    response = site.request('GET', '/no-such-page')
    assert response.status_int == 404
    for name in ('X-Frame-Options', 'Content-Security-Policy',
                 'X-Content-Type-Options'):
        assert response.header_values(name) == []
