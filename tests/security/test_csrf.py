"""Cross-site request forgery: a page on another site makes the browser
send a form to this one, with the credentials the browser holds for it
(cached Basic credentials, cookies)."""

import base64

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site

FORM = 'application/x-www-form-urlencoded'


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return 'Basic ' + token.decode()


ADMIN = {'HTTP_AUTHORIZATION': basic('admin', 'admin')}


@pytest.fixture
def site(clean_zope):
    return RawClient(build_site())


def post_edit(site, title, **headers):
    headers = dict(ADMIN, CONTENT_TYPE=FORM, **headers)
    return site.request('POST', '/folder/page/@@edit', '',
                        b'title=' + title + b'&body=x', headers)


def page_title(site):
    return site.request('GET', '/folder/page').text


def test_cross_site_post_with_cached_basic_credentials_is_refused(site):
    response = post_edit(site, b'Owned', HTTP_ORIGIN='https://evil.example')
    assert response.status_int == 403
    assert response.header_values('X-Content-Type-Options') == ['nosniff']
    assert 'another site' in response.text
    assert 'Owned' not in page_title(site)


def test_cross_site_post_known_only_by_its_referer_is_refused(site):
    response = post_edit(site, b'Owned',
                         HTTP_REFERER='https://evil.example/attack.html')
    assert response.status_int == 403
    assert 'Owned' not in page_title(site)


@pytest.mark.parametrize('origin', [
    'null', 'https://localhost', 'http://localhost:8080',
    'http://localhost.evil.example', 'http://evil.example/localhost',
    'not a url', 'http://localhost http://evil.example'])
def test_cross_site_post_from_a_lookalike_or_opaque_origin_is_refused(
        site, origin):
    response = post_edit(site, b'Owned', HTTP_ORIGIN=origin)
    assert response.status_int == 403
    assert 'Owned' not in page_title(site)


def test_cross_site_comment_post_is_refused_too(site):
    response = site.request(
        'POST', '/folder/page/@@add-comment', '',
        b'author=x&text=Forged', {'CONTENT_TYPE': FORM,
                                  'HTTP_ORIGIN': 'https://evil.example'})
    assert response.status_int == 403
    assert 'Forged' not in page_title(site)


def test_cross_site_post_through_an_attacker_chosen_vh_origin_is_refused(
        site):
    # The attacker's page names its own origin in a ++vh++ segment, so the
    # site's origin would seem to match the Origin header: a client's
    # ++vh++ is refused (virtual_host), and nothing is changed.
    headers = dict(ADMIN, CONTENT_TYPE=FORM,
                   HTTP_ORIGIN='https://evil.example')
    response = site.request(
        'POST', '/++vh++https:evil.example:443/++/folder/page/@@edit', '',
        b'title=Owned&body=x', headers)
    assert response.status_int in (400, 403)
    assert 'Owned' not in page_title(site)
