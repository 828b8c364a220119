"""Valid logins found by timing: a wrong password for an unknown login was
answered in 4-8 ms, for an existing one in 290-650 ms, since the principal
registry runs bcrypt only for a login it knows.  A failed login that no
bcrypt check ran for now pays one, against a hash no password matches.

The checks are counted (zope.password's manager calls ``bcrypt.checkpw``
once per check), not timed.
"""

import base64
import os

from zope.pipeline.security import passwords

EDIT = '/folder/page/@@edit'


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


def status(site, login, password):
    return site.request('GET', EDIT, headers=basic(login, password)
                        ).status_int


def test_valid_logins_found_by_timing(raw_site, bcrypt_checks):
    # the sample administrator's hash is bcrypt (cost 12)
    assert status(raw_site, 'admin', 'wrong-password') == 401
    assert bcrypt_checks == [b'wrong-password']
    del bcrypt_checks[:]
    assert status(raw_site, 'nobody', 'guessed-password') == 401
    assert bcrypt_checks == [b'guessed-password']


def test_unknown_login_check_is_a_bcrypt_check_of_the_same_cost(bcrypt_checks):
    salt = passwords.UNKNOWN_LOGIN_HASH[len(b'{BCRYPT}'):]
    assert salt[:7] == b'$2b$%02d$' % passwords.BCRYPT_ROUNDS
    passwords.check_unknown_login(b'a guess')
    assert bcrypt_checks == [b'a guess']


def test_a_known_login_is_not_checked_twice(raw_site, bcrypt_checks,
                                            monkeypatch):
    """Right or wrong, a known login's password is checked once by bcrypt
    (then remembered when right): no extra check is added."""
    # forget what this process verified before (a new key)
    monkeypatch.setattr(passwords.VERIFIED, '_key', os.urandom(32))
    assert status(raw_site, 'admin', 'admin') == 200
    assert status(raw_site, 'admin', 'admin') == 200
    assert status(raw_site, 'admin', 'still-wrong') == 401
    assert bcrypt_checks == [b'admin', b'still-wrong']


def test_a_password_too_long_for_bcrypt_costs_alike(raw_site, bcrypt_checks):
    """bcrypt refuses passwords over 72 bytes at once (zope.password
    answers False): a known and an unknown login refuse them alike."""
    assert status(raw_site, 'admin', 'p' * 100) == 401
    assert status(raw_site, 'nobody', 'p' * 100) == 401
    assert bcrypt_checks == [b'p' * 100, b'p' * 100]
