"""Content sniffing: error pages, 405 answers and the publisher's own short
answers tell browsers not to guess another type
(X-Content-Type-Options: nosniff), so text a client put in a URL is never
run as a script."""

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.test_security import SECURITY_ZCML


@pytest.fixture(scope='module')
def site():
    import zope.testing.cleanup

    from zope.pipeline.zodb import storage
    zope.testing.cleanup.cleanUp()
    yield RawClient(build_site(SECURITY_ZCML))
    storage.close_all()
    zope.testing.cleanup.cleanUp()


@pytest.mark.parametrize('method, path, status', [
    ('GET', '/no-such-page<script>', 404),
    ('GET', '/folder/page/@@explode', 500),
    ('GET', '/folder/page/@@edit', 401),
    ('PUT', '/folder/page', 405),
    ('POST', '/folder/page/@@index.html', 413),
])
def test_error_page_cannot_be_sniffed_as_another_type(site, method, path,
                                                      status):
    body = b'x' * 200000 if status == 413 else b''
    response = site.request(method, path, body=body)
    assert response.status_int == status
    assert response.header_values('X-Content-Type-Options') == ['nosniff']
