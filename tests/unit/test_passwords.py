"""zope.pipeline.security.passwords: bcrypt hashes for new passwords, and the
credentials a process verified remembered by keyed digest, successes
only."""

import bcrypt

from zope.pipeline.security import passwords

#: A cheap hash for the tests (2**4 rounds); the real cost is
#: passwords.BCRYPT_ROUNDS.
CHEAP = passwords.BCRYPTPasswordManager().encodePassword(
    'right', salt=bcrypt.gensalt(4))


def test_new_passwords_are_bcrypt_hashes_of_the_configured_cost():
    hashed = passwords.hash_password('a long password')
    assert hashed.startswith('{BCRYPT}$2b$%02d$' % passwords.BCRYPT_ROUNDS)
    manager = passwords.RememberingBCRYPTPasswordManager(
        passwords.VerifiedCredentials())
    assert manager.checkPassword(hashed, 'a long password')
    assert not manager.checkPassword(hashed, 'another password')


def test_a_verified_password_is_checked_by_bcrypt_once(bcrypt_checks):
    manager = passwords.RememberingBCRYPTPasswordManager(
        passwords.VerifiedCredentials())
    for _ in range(5):
        assert manager.checkPassword(CHEAP, 'right')
        assert manager.checkPassword(CHEAP.decode('ascii'), b'right')
    assert len(bcrypt_checks) == 1


def test_wrong_passwords_are_never_remembered(bcrypt_checks):
    verified = passwords.VerifiedCredentials()
    manager = passwords.RememberingBCRYPTPasswordManager(verified)
    for _ in range(3):
        assert not manager.checkPassword(CHEAP, 'wrong')
    assert len(bcrypt_checks) == 3
    assert len(verified) == 0


def test_another_hash_is_not_matched_by_a_remembered_password(bcrypt_checks):
    manager = passwords.RememberingBCRYPTPasswordManager(
        passwords.VerifiedCredentials())
    assert manager.checkPassword(CHEAP, 'right')
    changed = passwords.BCRYPTPasswordManager().encodePassword(
        'changed', salt=bcrypt.gensalt(4))
    assert not manager.checkPassword(changed, 'right')
    assert manager.checkPassword(changed, 'changed')
    assert len(bcrypt_checks) == 3


def test_no_password_and_other_schemes_are_refused_without_bcrypt(
        bcrypt_checks):
    manager = passwords.RememberingBCRYPTPasswordManager(
        passwords.VerifiedCredentials())
    assert not manager.checkPassword(CHEAP, None)
    assert not manager.checkPassword('{SSHA}DrduR71dMJbqQ0wbe1OQbyh83rEBvEsi',
                                     'admin')
    assert bcrypt_checks == []


def test_the_oldest_verified_credentials_are_forgotten_first(bcrypt_checks):
    verified = passwords.VerifiedCredentials(size=2)
    manager = passwords.RememberingBCRYPTPasswordManager(verified)
    hashes = [passwords.BCRYPTPasswordManager().encodePassword(
        'pw%d' % number, salt=bcrypt.gensalt(4)) for number in range(3)]
    for number, hashed in enumerate(hashes):
        assert manager.checkPassword(hashed, 'pw%d' % number)
    assert len(verified) == 2
    assert manager.checkPassword(hashes[2], 'pw2')      # remembered
    assert manager.checkPassword(hashes[0], 'pw0')      # forgotten
    assert len(bcrypt_checks) == 4


def test_the_digest_depends_on_the_process_key():
    first = passwords.VerifiedCredentials()
    second = passwords.VerifiedCredentials()
    assert first.digest(b'h', b'p') != second.digest(b'h', b'p')
    assert first.digest(b'h', b'p') == first.digest(b'h', b'p')
