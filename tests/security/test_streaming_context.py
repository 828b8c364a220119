"""A streamed body (an IResult iterated by the server after the pipeline
returned) reads protected content through its security proxy: the
request's security interaction and local site are in force while the
server iterates it, and nowhere else."""

import pytest
from zope.component.hooks import getSite
from zope.security.management import queryInteraction

from tests.security.conftest import build_site
from tests.security.conftest import RawClient
from tests.security.test_security import SECURITY_ZCML


@pytest.fixture
def site(clean_zope):
    return RawClient(build_site(SECURITY_ZCML))


def test_streamed_view_reading_protected_content_after_the_response_started(
        site):
    response = site.request('GET', '/folder/page/@@stream-title')
    assert response.status_int == 200
    assert '<h1>' in response.text
    assert 'AttributeError' not in response.text


def test_streamed_body_leaves_no_interaction_or_site_behind(site):
    response = site.request('GET', '/folder/page/@@stream-title')
    assert response.status_int == 200
    assert queryInteraction() is None
    assert getSite() is None


def test_streamed_body_sees_the_local_site_of_the_request(site):
    response = site.request('GET', '/folder/page/@@stream-title')
    assert '<p>site: NoneType</p>' not in response.text
    assert '<p>site: ' in response.text
