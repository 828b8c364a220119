"""Password hashes: new passwords hashed with bcrypt, and the credentials a
process has verified remembered so that each request does not pay for
bcrypt again.

New passwords (``zope-pipeline adduser``, the sample administrator) are
hashed by zope.password's ``BCRYPTPasswordManager``: bcrypt with a cost of
``BCRYPT_ROUNDS`` (2**12 rounds, about 0.2 s of one core per check on the
machine that measured it), stored as ``{BCRYPT}$2b$12$...`` with the
password manager ``BCRYPT``.  Existing ``{SSHA}`` entries (one round of
salted SHA-1) keep working with their manager ``SSHA``; running
``zope-pipeline adduser`` again for a login hashes its password anew with
bcrypt.

HTTP Basic authentication sends the password with every request, and the
principal registry checks it every time: at 0.2 s a check, a logged-in
administrator's every page would cost that.  ``RememberingBCRYPTPassword
Manager`` (registered as ``BCRYPT`` by ``passwords.zcml``, which
zope.pipeline's ``site.zcml`` includes as an override) remembers, per
process, the credentials it has verified: an HMAC-SHA-256, under a random
key of the process, of the stored hash and the password, never the
password, for the last ``REMEMBERED`` successes.  A wrong password is never
remembered: every wrong guess pays the whole bcrypt check (and the
authenticate stage throttles repeated failures).  A changed password
changes the stored hash, so an old password is not remembered for it.

An unknown login costs what a known one does: the principal registry (and
a local authentication utility's principal folder) checks a password only
for a login it knows, so bcrypt's 0.2 s told which logins exist.  The
manager counts, per thread, the checks it hands to bcrypt
(``bcrypt_checks``); the authenticate stage gives a failed login whose
request made none one check against ``UNKNOWN_LOGIN_HASH``, a bcrypt salt
of the same cost that no password matches (``check_unknown_login``).
"""

import collections
import hashlib
import hmac
import os
import threading

import bcrypt
from zope.password.password import BCRYPTPasswordManager

#: The name of the password manager of new passwords (zope.password's).
NEW_PASSWORD_MANAGER = 'BCRYPT'
#: bcrypt's cost: 2**BCRYPT_ROUNDS rounds.
BCRYPT_ROUNDS = 12
#: The longest password bcrypt takes, in bytes (of UTF-8).
BCRYPT_MAX_BYTES = 72
#: How many verified credentials a process remembers (the oldest go).
REMEMBERED = 1024
#: What a password given for an unknown login is checked against: a
#: bcrypt salt of cost ``BCRYPT_ROUNDS`` alone, which no hash equals.
UNKNOWN_LOGIN_HASH = b'{BCRYPT}' + bcrypt.gensalt(BCRYPT_ROUNDS)

#: This thread's count of the checks handed to bcrypt.
_checks = threading.local()


def hash_password(password):
    """The ``{BCRYPT}`` hash of ``password``, as text."""
    encoded = BCRYPTPasswordManager().encodePassword(
        password, salt=bcrypt.gensalt(BCRYPT_ROUNDS))
    return encoded.decode('ascii')


class VerifiedCredentials:
    """The last ``size`` (hash, password) pairs found to match, kept as
    keyed digests; thread-safe."""

    def __init__(self, size=REMEMBERED):
        self.size = size
        self._key = os.urandom(32)
        self._digests = collections.OrderedDict()
        self._lock = threading.Lock()

    def digest(self, hashed, clear):
        return hmac.new(self._key, hashed + b'\0' + clear,
                        hashlib.sha256).digest()

    def __contains__(self, digest):
        with self._lock:
            if digest not in self._digests:
                return False
            self._digests.move_to_end(digest)
            return True

    def add(self, digest):
        with self._lock:
            self._digests[digest] = True
            while len(self._digests) > self.size:
                self._digests.popitem(last=False)

    def __len__(self):
        return len(self._digests)


#: The verified credentials of this process.
VERIFIED = VerifiedCredentials()


class RememberingBCRYPTPasswordManager(BCRYPTPasswordManager):
    """zope.password's bcrypt manager, which checks a password it has
    verified before by its keyed digest instead of by bcrypt."""

    def __init__(self, verified=VERIFIED):
        self.verified = verified

    def checkPassword(self, hashed_password, clear_password):
        if clear_password is None or not self.match(hashed_password):
            return False
        hashed = self._clean_hashed(hashed_password)
        digest = self.verified.digest(hashed,
                                      self._clean_clear(clear_password))
        if digest in self.verified:
            return True
        _checks.count = bcrypt_checks() + 1
        matches = super().checkPassword(hashed, clear_password)
        if matches:
            self.verified.add(digest)
        return matches


def bcrypt_checks():
    """How many checks ``RememberingBCRYPTPasswordManager`` has handed to
    bcrypt in this thread (not those it remembered)."""
    return getattr(_checks, 'count', 0)


def check_unknown_login(clear_password):
    """Check ``clear_password`` with bcrypt as a known login's would be,
    against ``UNKNOWN_LOGIN_HASH``: as costly, and never a match."""
    BCRYPTPasswordManager().checkPassword(UNKNOWN_LOGIN_HASH,
                                          clear_password)
