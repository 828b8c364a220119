"""Password guessing over HTTP Basic: 1,234 guesses on one keep-alive
connection once reached admin:admin.  Failed logins are logged (login and
client escaped) and, after a few within the window, a client or a login
is refused with 429 and Retry-After before its password is checked."""

import base64
import logging
import xmlrpc.client

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_security import SECURITY_ZCML

EDIT = '/folder/page/@@edit'

#: The security site's principals have plain-text passwords.
pytestmark = pytest.mark.usefixtures('cheap_unknown_login_check')


def basic(login, password, address='127.0.0.1'):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode(),
            'REMOTE_ADDR': address}


def security_site(**authenticate):
    return RawClient(build_site(SECURITY_ZCML, site_settings(
        authenticate=authenticate)))


@pytest.fixture
def site(clean_zope):
    return security_site()


def failed_logins(caplog):
    return [record for record in caplog.records
            if record.name == 'zope.pipeline.authenticate'
            and record.levelno == logging.WARNING]


def test_password_guessing_is_throttled(site, caplog):
    statuses = {}
    with caplog.at_level(logging.INFO, 'zope.pipeline.authenticate'):
        for guess in range(1234):
            status = site.request('GET', EDIT, headers=basic(
                'admin', 'guess-%d' % guess)).status_int
            statuses[status] = statuses.get(status, 0) + 1
        right = site.request('GET', EDIT, headers=basic('admin', 'admin'))
    # only the first 10 guesses (authenticate.max_failures_per_login)
    # had their password checked; the right one comes too late
    assert statuses == {401: 10, 429: 1224}
    assert len(failed_logins(caplog)) == 10
    assert right.status_int == 429
    retry_after = int(right.header_values('Retry-After')[0])
    assert 0 < retry_after <= 300
    assert 'Too many failed logins' in right.text


def test_failed_login_is_logged_with_login_and_client_escaped(site, caplog):
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        response = site.request('GET', EDIT, headers=basic(
            'admin\nINFO forged line', 'wrong', '192.0.2.7'))
    assert response.status_int == 401
    [record] = failed_logins(caplog)
    message = record.getMessage()
    assert '\n' not in message
    assert 'admin\\x0aINFO forged line' in message
    assert '192.0.2.7' in message


def test_a_successful_login_forgets_the_failures(site):
    for _ in range(2):
        for guess in range(9):
            assert site.request('GET', EDIT, headers=basic(
                'reader', 'guess-%d' % guess)).status_int == 401
        assert site.request('GET', '/folder/page', headers=basic(
            'reader', 'readerpw')).status_int == 200


def test_guessing_many_logins_from_one_client_is_throttled(clean_zope):
    site = security_site(max_failures_per_client='5',
                         max_failures_per_login='0')
    for number in range(5):
        assert site.request('GET', EDIT, headers=basic(
            'user%d' % number, 'guess')).status_int == 401
    assert site.request('GET', EDIT, headers=basic(
        'reader', 'readerpw')).status_int == 429
    # another client is not refused
    assert site.request('GET', '/folder/page', headers=basic(
        'reader', 'readerpw', '192.0.2.8')).status_int == 200


def test_guessing_one_login_from_many_clients_is_throttled(clean_zope):
    site = security_site(max_failures_per_client='0',
                         max_failures_per_login='3')
    for number in range(3):
        assert site.request('GET', EDIT, headers=basic(
            'reader', 'guess', '192.0.2.%d' % number)).status_int == 401
    assert site.request('GET', '/folder/page', headers=basic(
        'reader', 'readerpw', '198.51.100.1')).status_int == 429
    # another login is not refused
    assert site.request('GET', EDIT, headers=basic(
        'admin', 'admin', '198.51.100.1')).status_int == 200


def test_a_forwarded_for_header_does_not_give_a_fresh_client(clean_zope):
    site = security_site(max_failures_per_client='3',
                         max_failures_per_login='0')
    for number in range(3):
        headers = dict(basic('user%d' % number, 'guess'),
                       HTTP_X_FORWARDED_FOR='203.0.113.%d' % number)
        assert site.request('GET', EDIT, headers=headers).status_int == 401
    headers = dict(basic('user9', 'guess'),
                   HTTP_X_FORWARDED_FOR='203.0.113.99')
    assert site.request('GET', EDIT, headers=headers).status_int == 429


def test_xmlrpc_and_browser_guesses_count_together(clean_zope):
    site = security_site(max_failures_per_login='4')
    body = xmlrpc.client.dumps((), 'whereami.application_url').encode()
    for _ in range(2):
        assert site.request('GET', EDIT, headers=basic(
            'reader', 'guess')).status_int == 401
        assert site.request('POST', '/folder', body=body, headers=dict(
            basic('reader', 'guess'), CONTENT_TYPE='text/xml')
        ).status_int in (200, 401)
    assert site.request('POST', '/folder', body=body, headers=dict(
        basic('reader', 'readerpw'), CONTENT_TYPE='text/xml')
    ).status_int == 429


def test_without_limits_failed_logins_are_still_logged(clean_zope, caplog):
    site = security_site(max_failures_per_client='0',
                         max_failures_per_login='0')
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        for guess in range(30):
            assert site.request('GET', EDIT, headers=basic(
                'reader', 'guess-%d' % guess)).status_int == 401
    assert len(failed_logins(caplog)) == 30
    assert site.request('GET', '/folder/page', headers=basic(
        'reader', 'readerpw')).status_int == 200
