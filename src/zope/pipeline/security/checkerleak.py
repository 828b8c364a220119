"""A workaround: the memory leak of zope.security's C checker.

The upstream bug (zope.security 8.4, ``src/zope/security/
_zope_security_checker.c``): line 25 defines ::

    #define MAKE_STRING(name) PyBytes_AS_STRING( \\
            PyUnicode_AsUTF8String(name))

which makes a new bytes object and never releases it.
``Checker_check_int`` (line 140) looks the name up in the checker's
``get_permissions`` dict first; for every name that is not there it runs
``MAKE_STRING`` at lines 164 and 165 (is it a ``__dunder__``?) and, for a
dunder name that is not in ``_available_by_default``, again at line 181
(is it ``__iter__``?).  So each check of such a name leaks one to three
small bytes objects.  The names of ``zope.security.checker.
_available_by_default`` (``__class__``, ``__providedBy__``, ``__name__``,
``__parent__``, ``__conform__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__bool__`` ...) are allowed on every proxy *after* that leaking test, and
adapter lookups, ``isinstance()`` and location code check them all the
time: each GET of the sample site's /folder/page made dozens to hundreds
of such checks (two leaked blocks each), and one mod_wsgi process grew
from 107 MB to 550 MB over 20,000 of them.  The pure-Python checker
(``PURE_PYTHON=1``) does not leak.

The workaround: ``apply()`` adds ``name: CheckerPublic`` with
``setdefault`` for each name of ``_available_by_default`` to the
``get_permissions`` dict of every checker alive when it runs.  A name
with an explicit permission keeps it (setdefault never overrides).  For
the other names the result of a check is the same (allowed), but it is
decided by the dict lookup, before the leaking branch.  Only code that
reads the dict sees a difference (``permission_id(name)`` answers
``CheckerPublic`` instead of ``None`` for those names, and
``zope.security.proxy.getTestProxyItems`` lists them).

What it cannot stop: a check of a name that is neither in the dict nor
available by default still leaks (three blocks for a dunder name), as the
check must raise ``ForbiddenAttribute``.  ``getattr(proxy, name,
default)`` turns that into the default, and zope.tales does it for
``__call__`` on every path expression that ends on a proxied object that
is not callable (three blocks each time): templates should say
``nocall:`` where a path ends on data, as the sample's page does for the
lists it repeats over.

Which checkers: every ``Checker`` instance the garbage collector tracks,
found with ``gc.get_objects()`` (the C type is a GC type): the class
checkers of ``zope.security.checker._checkers``, ``_defaultChecker``,
the checkers of module functions such as ``_namedChecker``, and the
checkers ZCML directives keep in closures and ``__Security_checker__``
attributes (browser resources, protected adapter factories), which
``_checkers`` does not list.  A ``CombinedChecker`` made at run time uses
its first checker's dict, so it is covered when that checker is.
``zope.pipeline.app.make_app`` calls ``apply()`` once, after the site's
ZCML ran and the pipelines were built: a request of the sample site then
sends no name available by default down the leaking branch
(``tests/unit/test_security_checker_leak.py`` measures it), so checkers
made later
(``defineChecker`` after start-up) are left alone.  Under
``PURE_PYTHON=1`` (no C checker) ``apply()`` does nothing.

Remove this module and its call once zope.security releases a
``_zope_security_checker.c`` whose ``MAKE_STRING`` no longer leaks (the
fix there is ``PyUnicode_AsUTF8(name)``, which returns a buffer the
string owns).
"""

import gc
import itertools
import logging

from zope.security import checker as security_checker

log = logging.getLogger(__name__)


def c_checker_in_use():
    """True when zope.security uses its C checker (not PURE_PYTHON)."""
    return security_checker.Checker is not security_checker.CheckerPy


def checker_types():
    """The Checker class and every subclass of it (CombinedChecker ...)."""
    found = [security_checker.Checker]
    for checker_type in found:
        found.extend(checker_type.__subclasses__())
    return frozenset(found)


def live_checkers():
    """Every Checker instance alive in the process, each once.

    ``type()``, not ``isinstance()``: the scan stays in C (a few ms for the
    100,000 objects of a site) and never asks a proxy for its __class__.
    """
    objects = gc.get_objects()
    is_checker = map(checker_types().__contains__, map(type, objects))
    return list(itertools.compress(objects, is_checker))


def make_available_names_public(checker):
    """Give ``checker`` an explicit CheckerPublic for each name available
    by default that it does not name; return True if its dict changed."""
    permissions = checker.get_permissions
    before = len(permissions)
    for name in security_checker._available_by_default:
        permissions.setdefault(name, security_checker.CheckerPublic)
    return len(permissions) != before


def apply():
    """Patch every live checker's dict (C checker only); return how many
    checkers changed."""
    if not c_checker_in_use():
        return 0
    patched = sum(make_available_names_public(checker)
                  for checker in live_checkers())
    # DEBUG: an internal detail, made in every process of every command
    log.debug('zope.security C checker leak workaround: names available by '
             'default made explicit on %d checkers', patched)
    return patched
