"""CGI-Authorization bypassed the failed-login throttle and its log.

zope.publisher takes HTTP Basic credentials from ``CGI-Authorization``
(``HTTP_CGI_AUTHORIZATION``, meant to be set by a CGI gateway) as well as
from ``Authorization``; the authenticate stage counted and logged only
``Authorization``.  With ``Authorization`` locked out (429), guesses sent
as ``CGI-Authorization`` had their password checked, went unlogged, and
the right one logged in.  A client's ``CGI-Authorization`` is now ignored
unless ``create_request.trust_cgi_authorization`` says the server sets
it; trusted, it is throttled and logged as ``Authorization`` is.
"""

import base64
import logging

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_password_guessing import EDIT
from tests.security.test_password_guessing import basic
from tests.security.test_password_guessing import failed_logins
from tests.security.test_security import SECURITY_ZCML

#: The security site's principals have plain-text passwords.
pytestmark = pytest.mark.usefixtures('cheap_unknown_login_check')


def cgi_basic(login, password, address='127.0.0.1'):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_CGI_AUTHORIZATION': 'Basic ' + token.decode(),
            'REMOTE_ADDR': address}


def cgi_site(trust=None):
    settings = site_settings()
    if trust is not None:
        settings['create_request'] = {'trust_cgi_authorization': trust}
    return RawClient(build_site(SECURITY_ZCML, settings))


def lock_out_admin(site):
    for guess in range(10):  # authenticate.max_failures_per_login
        assert site.request('GET', EDIT, headers=basic(
            'admin', 'guess-%d' % guess)).status_int == 401
    assert site.request('GET', EDIT, headers=basic(
        'admin', 'admin')).status_int == 429


def test_cgi_authorization_bypasses_login_throttle(clean_zope, caplog):
    site = cgi_site()
    lock_out_admin(site)
    caplog.clear()
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        for guess in range(25):
            response = site.request('GET', EDIT, headers=cgi_basic(
                'admin', 'cgi-guess-%d' % guess))
            assert response.status_int == 401  # anonymous: the challenge
        right = site.request('GET', EDIT, headers=cgi_basic('admin',
                                                            'admin'))
    # a client's CGI-Authorization is ignored: the request is anonymous,
    # so no password was checked and nothing was a failed login
    assert right.status_int == 401
    assert failed_logins(caplog) == []


def test_cgi_authorization_logs_in_nobody_unless_trusted(clean_zope):
    site = cgi_site()
    assert site.request('GET', EDIT, headers=cgi_basic(
        'admin', 'admin')).status_int == 401
    # the page anonymous may see is served: the header is ignored, not
    # refused
    assert site.request('GET', '/folder/page', headers=cgi_basic(
        'reader', 'wrong')).status_int == 200


def test_trusted_cgi_authorization_is_throttled_and_logged(clean_zope,
                                                           caplog):
    site = cgi_site(trust='true')
    assert site.request('GET', EDIT, headers=cgi_basic(
        'admin', 'admin')).status_int == 200
    lock_out_admin(site)
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        statuses = [site.request('GET', EDIT, headers=cgi_basic(
            'admin', guess)).status_int for guess in ('cgi-guess', 'admin')]
    assert statuses == [429, 429]


def test_trusted_cgi_authorization_guesses_are_logged_and_counted(
        clean_zope, caplog):
    site = cgi_site(trust='true')
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        for guess in range(10):
            assert site.request('GET', EDIT, headers=cgi_basic(
                'admin', 'cgi-guess-%d' % guess, '192.0.2.9')
            ).status_int == 401
    assert len(failed_logins(caplog)) == 10
    assert 'from 192.0.2.9' in failed_logins(caplog)[0].getMessage()
    # ... and they lock out Authorization too
    assert site.request('GET', EDIT, headers=basic(
        'admin', 'admin')).status_int == 429


@pytest.mark.parametrize('trust', [None, 'true'])
def test_cgi_authorization_beside_authorization_is_counted(clean_zope,
                                                           caplog, trust):
    """zope.publisher prefers CGI-Authorization when both are sent: the
    credentials counted are those checked, whichever header held them."""
    site = cgi_site(trust)
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        headers = dict(basic('admin', 'wrong'),
                       **cgi_basic('reader', 'readerpw'))
        status = site.request('GET', EDIT, headers=headers).status_int
    if trust:
        assert status == 403  # reader is logged in; may not edit
        assert failed_logins(caplog) == []
    else:
        assert status == 401
        [record] = failed_logins(caplog)
        assert 'Failed login admin' in record.getMessage()
