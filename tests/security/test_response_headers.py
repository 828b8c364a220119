"""What every response says about the server: nothing it need not
(zope.publisher's ``X-Powered-By`` names Zope and Python on every
response, which helps only an attacker choosing exploits)."""

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings


def test_responses_do_not_advertise_x_powered_by(shared_site):
    for method, path in [('GET', '/folder/page'), ('GET', '/nothing-here'),
                         ('GET', '/folder/page/@@edit'),
                         ('PUT', '/folder/page')]:
        response = shared_site.request(method, path)
        assert response.status_int in (200, 401, 404, 405), path
        assert response.header_values('X-Powered-By') == [], path


def test_create_request_powered_by_brings_the_header_back(clean_zope):
    site = RawClient(build_site(settings=site_settings(
        create_request={'powered_by': 'true'})))
    response = site.request('GET', '/folder/page')
    assert response.header_values('X-Powered-By') == [
        'Zope (www.zope.org), Python (www.python.org)']
