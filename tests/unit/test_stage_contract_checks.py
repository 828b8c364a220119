"""The stage contract is checked when a chain compiles: a stage reading a
key no earlier stage writes, or a chain without a publishing stage, fails
the startup with a message naming what to change."""

import os

import pytest
from zope.configuration.exceptions import ConfigurationError

import zope.pipeline
from zope.pipeline.engine.contract import UNDECLARED
from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.contract import check_chain
from zope.pipeline.engine.contract import contract_of
from zope.pipeline.engine.contract import result_keys
from zope.pipeline.engine.registry import StageRegistration

from .engine_files import line_of

PIPELINE_ZCML = os.path.join(os.path.dirname(zope.pipeline.__file__),
                             'pipeline.zcml')


def standard_at(name):
    return '%s:%d' % (PIPELINE_ZCML,
                      line_of(PIPELINE_ZCML, 'name="%s"' % name) - 1)


def test_a_chain_without_open_root_fails_naming_the_reader_and_the_writer(
        build):
    with pytest.raises(ConfigurationError) as raised:
        build('without_open_root.zcml')

    # (response_cache, the first stage after open_root, asks first)
    assert str(raised.value) == (
        "Request type 'browser': stage 'response_cache' (registered at %s) "
        "reads 'zope.pipeline.connection' "
        "(zope.pipeline.environ.CONNECTION), which no stage before "
        "it writes; 'open_root' (registered at %s) would write it: register "
        "it before 'response_cache' in this chain, or remove "
        "'response_cache'."
        % (standard_at('response_cache'), standard_at('open_root')))


def test_a_chain_without_a_publishing_stage_fails(build):
    with pytest.raises(ConfigurationError) as raised:
        build('without_call.zcml')

    assert str(raised.value) == (
        "Request type 'browser': no stage publishes (declares publishes = "
        "True), so the chain would end after 'call' and answer every "
        "request with 404 Not Found; register a publishing stage for this "
        "request type.")


class Reads:
    contract = Contract(reads=('zope.pipeline.root',))


class Publishes:
    contract = Contract(publishes=True)


class Undeclared:
    """A third-party stage that declares nothing: not checked."""


def registration(name, factory, line):
    return StageRegistration(name, object, factory, info='site.zcml:%d'
                             % line)


def test_the_server_keys_count_as_written():
    class ReadsServerKeys:
        contract = Contract(reads=('PATH_INFO', 'HTTP_HOST', 'wsgi.input'))
    check_chain('Request type x', [], [
        registration('a', ReadsServerKeys, 1),
        registration('b', Publishes, 2)], [])


def test_a_stage_that_declares_nothing_may_write_and_publish():
    check_chain('Request type x', [], [
        registration('undeclared', Undeclared, 1),
        registration('reads', Reads, 2)], [])


def test_a_key_the_site_lost_is_named_with_the_standard_writer():
    reader = registration('reads', Reads, 7)
    with pytest.raises(ConfigurationError) as raised:
        check_chain("Request type 'x'", [], [
            reader, registration('b', Publishes, 8)], [reader])
    assert str(raised.value) == (
        "Request type 'x': stage 'reads' (registered at site.zcml:7) reads "
        "'zope.pipeline.root' (zope.pipeline.environ.ROOT), which no stage "
        "before it writes; 'open_root' (registered at %s) would write it: "
        "register it before 'reads' in this chain, or remove 'reads'."
        % standard_at('open_root'))


def test_a_key_no_stage_writes_says_so():
    class ReadsUnknown:
        contract = Contract(reads=('example.unknown',))
    reader = registration('reads', ReadsUnknown, 3)
    with pytest.raises(ConfigurationError) as raised:
        check_chain("Request type 'x'", [], [reader], [reader])
    assert str(raised.value) == (
        "Request type 'x': stage 'reads' (registered at site.zcml:3) reads "
        "'example.unknown', which no stage before it writes; no registered "
        "stage writes it: register one that does, or remove 'reads'.")


def test_a_contract_declared_as_separate_attributes_is_refused():
    class Former:
        """Declared as zope.pipeline did before ``Contract``: it would go
        unchecked, so it stops the startup."""
        reads = ('zope.pipeline.root',)
        publishes = True
    with pytest.raises(ConfigurationError) as raised:
        check_chain("Request type 'x'", [], [
            registration('former', Former, 4)], [])
    assert str(raised.value) == (
        "Stage 'former' (registered at site.zcml:4): its factory declares "
        'reads, publishes as attributes of their own; declare its contract '
        'once, as ``contract = zope.pipeline.engine.contract.Contract('
        'reads=..., '
        'publishes=...)``.')


def test_a_factory_without_a_contract_has_the_undeclared_one():
    assert contract_of(registration('none', Undeclared, 1)) is UNDECLARED
    assert not UNDECLARED.declared and Contract().declared


def test_results_are_keys_the_stage_writes():
    with pytest.raises(ValueError, match='zope.pipeline.view'):
        Contract(results=('zope.pipeline.view',))


def test_result_keys_are_collected_once_in_registration_order():
    class Writer:
        contract = Contract(writes=('a', 'b'), results=('b', 'a'))

    class Other:
        contract = Contract(writes=('a', 'c'), results=('a', 'c'))
    assert result_keys([registration('w', Writer, 1),
                        registration('o', Other, 2),
                        registration('u', Undeclared, 3)]) == ('b', 'a', 'c')
