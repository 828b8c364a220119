"""The workaround for the memory leak of zope.security's C checker
(zope.pipeline.security.checkerleak): the leak is real, the workaround ends it,
and
every security check answers as it did before.

Leaks are counted with ``sys.getallocatedblocks()`` (Python's own count of
the memory blocks it holds), never with the RSS or with timings.
"""

import functools
import gc
import logging
import sys
from contextlib import contextmanager

import pytest
from zope.interface import Interface
from zope.interface import implementer
from zope.security import checker as security_checker
from zope.security.checker import CheckerPublic
from zope.security.checker import CombinedChecker
from zope.security.checker import NamesChecker
from zope.security.checker import ProxyFactory
from zope.security.checker import defineChecker
from zope.security.interfaces import ForbiddenAttribute
from zope.security.interfaces import Unauthorized
from zope.security.testing import interaction

from zope.pipeline.app import make_app
from zope.pipeline.metrics import runtime as metrics_runtime
from zope.pipeline.security import checkerleak

C_ONLY = pytest.mark.skipif(
    not checkerleak.c_checker_in_use(),
    reason='the leak is in the C checker; PURE_PYTHON=1 does not load it')

ACCESSES = 10000
#: A leaking check leaks at least one block; a clean one none.  Blocks
#: that other threads allocate meanwhile stay far below one in a hundred.
CLEAN_BOUND = ACCESSES // 100

#: The names zope.security allows on every proxy unless a checker says
#: otherwise (the list the leaking branch of Checker_check_int tests).
AVAILABLE_BY_DEFAULT = list(security_checker._available_by_default)


@implementer(Interface)
class Content:
    x = 1
    y = 2
    secret = 3
    __name__ = 'content'
    __parent__ = None


def content_checker():
    """x is public, secret needs zope.ManageContent, and so does
    __name__ (explicitly, although it is available by default)."""
    return security_checker.Checker({
        'x': CheckerPublic,
        'secret': 'zope.ManageContent',
        '__name__': 'zope.ManageContent',
    })


def blocks_leaked_by(access, count=ACCESSES, rounds=3, settle=gc.collect):
    """How many memory blocks ``count`` calls of ``access`` leave behind:
    the smallest figure of ``rounds`` rounds (a leak shows in every round;
    what another thread allocates meanwhile does not).  ``settle`` runs
    before each count of the blocks."""
    access()
    figures = []
    for _ in range(rounds):
        settle()
        before = sys.getallocatedblocks()
        for _ in range(count):
            access()
        settle()
        figures.append(sys.getallocatedblocks() - before)
    return min(figures)


def outcome(access):
    """'allowed', or the name of the security exception ``access`` raised."""
    try:
        access()
    except (ForbiddenAttribute, Unauthorized) as caught:
        return type(caught).__name__
    return 'allowed'


class NamesSeen:
    """Put first in ``_available_by_default``: the leaking branch of the C
    checker asks the list whether it holds the name, and the list asks
    this member first, so it sees every name that reaches the branch."""

    def __init__(self):
        self.names = []

    def __eq__(self, name):
        self.names.append(name)
        return False

    __hash__ = object.__hash__


@contextmanager
def names_reaching_the_leaking_branch():
    seen = NamesSeen()
    security_checker._available_by_default.insert(0, seen)
    try:
        yield seen.names
    finally:
        security_checker._available_by_default.remove(seen)


# -- the leak and its end


@C_ONLY
def test_proxy_class_access_leaks_without_the_workaround_and_not_with_it():
    proxy = ProxyFactory(Content(), NamesChecker(('x',)))
    assert blocks_leaked_by(lambda: proxy.__class__) >= ACCESSES
    assert blocks_leaked_by(lambda: proxy.x) < CLEAN_BOUND

    checkerleak.make_available_names_public(
        security_checker.getChecker(proxy))

    assert blocks_leaked_by(lambda: proxy.__class__) < CLEAN_BOUND


@C_ONLY
@pytest.mark.parametrize('name', AVAILABLE_BY_DEFAULT)
def test_checking_a_name_available_by_default_stops_leaking(name):
    checker = NamesChecker(('x',))
    content = Content()
    check = functools.partial(checker.check, content, name)
    assert blocks_leaked_by(check, 1000) >= 1000

    checkerleak.make_available_names_public(checker)

    assert blocks_leaked_by(check, 1000) < 10


@C_ONLY
def test_proxy_repr_stops_leaking():
    proxy = ProxyFactory(Content(), NamesChecker(('x',)))
    assert blocks_leaked_by(lambda: repr(proxy)) >= ACCESSES

    checkerleak.make_available_names_public(security_checker.getChecker(proxy))

    assert blocks_leaked_by(lambda: repr(proxy)) < CLEAN_BOUND


# -- the same answers


SEMANTICS = {
    'x': 'allowed',
    'y': 'ForbiddenAttribute',
    'secret': 'Unauthorized',
    '__name__': 'Unauthorized',
    '__parent__': 'allowed',
    '__class__': 'allowed',
    '__providedBy__': 'allowed',
    '__dict__': 'ForbiddenAttribute',
}


def answers(proxy):
    with interaction('bob'):
        return {name: outcome(functools.partial(getattr, proxy, name))
                for name in SEMANTICS}


def test_every_check_answers_as_before_the_workaround(clean_zope):
    proxy = ProxyFactory(Content(), content_checker())
    before = answers(proxy)

    assert checkerleak.make_available_names_public(
        security_checker.getChecker(proxy))

    assert answers(proxy) == before == SEMANTICS


def test_an_explicit_permission_on_a_default_name_is_kept(clean_zope):
    checker = content_checker()
    checkerleak.make_available_names_public(checker)
    assert checker.get_permissions['__name__'] == 'zope.ManageContent'
    assert checker.get_permissions['__parent__'] is CheckerPublic
    assert 'y' not in checker.get_permissions
    assert '__dict__' not in checker.get_permissions
    assert checker.set_permissions == {}
    with interaction('bob'):
        with pytest.raises(Unauthorized):
            checker.check(Content(), '__name__')


def test_a_checker_patched_twice_does_not_change_again():
    checker = content_checker()
    assert checkerleak.make_available_names_public(checker)
    assert not checkerleak.make_available_names_public(checker)


# -- which checkers


@C_ONLY
def test_apply_patches_registered_and_unregistered_checkers(clean_zope,
                                                            caplog):
    registered = content_checker()
    defineChecker(Content, registered)
    held_in_a_closure = NamesChecker(('x',))
    caplog.set_level(logging.DEBUG,
                     logger='zope.pipeline.security.checkerleak')

    patched = checkerleak.apply()

    for checker in (registered, held_in_a_closure,
                    security_checker._defaultChecker):
        assert set(AVAILABLE_BY_DEFAULT) <= set(checker.get_permissions)
    assert patched >= 2
    assert caplog.messages == [
        'zope.security C checker leak workaround: names available by '
        'default made explicit on %d checkers' % patched]
    assert caplog.records[0].levelno == logging.DEBUG
    assert checkerleak.apply() == 0


class OwnChecker(security_checker.Checker):
    """A subclass of the C checker with a dict of its own."""


@C_ONLY
def test_apply_patches_subclass_checkers_and_skips_proxies(clean_zope):
    own = OwnChecker({'x': CheckerPublic})
    proxy = ProxyFactory(Content(), NamesChecker(('x',)))
    checkerleak.apply()
    assert own.get_permissions['__class__'] is CheckerPublic
    assert security_checker.getChecker(proxy).get_permissions[
        '__class__'] is CheckerPublic


@C_ONLY
def test_a_combined_checker_made_later_shares_the_patched_names():
    first = NamesChecker(('x',))
    checkerleak.apply()
    combined = CombinedChecker(first, NamesChecker(('y',)))
    assert combined.get_permissions is first.get_permissions
    with names_reaching_the_leaking_branch() as names:
        combined.check(Content(), '__class__')
        combined.check(Content(), 'y')
    assert names == []


def test_apply_does_nothing_without_the_c_checker(monkeypatch, caplog):
    monkeypatch.setattr(security_checker, 'Checker',
                        security_checker.CheckerPy)
    checker = security_checker.CheckerPy({'x': CheckerPublic})
    caplog.set_level(logging.INFO, logger='zope.pipeline.security.checkerleak')
    assert not checkerleak.c_checker_in_use()
    assert checkerleak.apply() == 0
    assert checker.get_permissions == {'x': CheckerPublic}
    assert caplog.messages == []


@C_ONLY
def test_make_app_applies_the_workaround(clean_zope):
    checker = NamesChecker(('x',))
    make_app()
    assert checker.get_permissions['__class__'] is CheckerPublic


# -- a whole site


@C_ONLY
def test_sample_page_requests_send_no_default_name_down_the_leaking_branch(
        make_testapp):
    """Names that are forbidden (zope.tales asks proxies for __call__)
    still reach the branch: the workaround cannot allow them."""
    from tests.functional.test_sample_site import SITE_ZCML
    from tests.functional.test_sample_site import settings
    app = make_testapp(SITE_ZCML, settings())
    for _ in range(20):
        assert app.get('/folder/page').status_int == 200

    with names_reaching_the_leaking_branch() as names:
        for _ in range(20):
            app.get('/folder/page')
    assert set(names) & set(AVAILABLE_BY_DEFAULT) == set()


def settle_metrics():
    """Drain what the metrics stage buffered (its worker does it every
    second), so the counts of blocks do not depend on when it ran."""
    for runtime in list(metrics_runtime._running):
        runtime.flush()
    gc.collect()


@C_ONLY
def test_sample_page_requests_do_not_grow_the_allocated_blocks(
        make_testapp):
    """Without the workaround each request leaks about a hundred blocks
    (two for each check of a name available by default); with it, none
    (the page's repeats are ``nocall:``, so zope.tales does not ask the
    proxied lists for a forbidden ``__call__``, which would leak three)."""
    from tests.functional.test_sample_site import SITE_ZCML
    from tests.functional.test_sample_site import settings
    app = make_testapp(SITE_ZCML, settings())
    for _ in range(50):
        app.get('/folder/page')

    def one_request():
        app.get('/folder/page')
    blocks = blocks_leaked_by(one_request, count=50, rounds=4,
                              settle=settle_metrics)
    assert blocks < 50, blocks
