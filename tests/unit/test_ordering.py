"""The sorter and its errors, alone and on real ZCML registrations."""

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.engine.ordering import CycleError
from zope.pipeline.engine.ordering import OrderingError
from zope.pipeline.engine.ordering import PartError
from zope.pipeline.engine.ordering import TopologicalSorter
from zope.pipeline.engine.ordering import UnknownNameError
from zope.pipeline.engine.ordering import where

from .engine_files import at


def sort(*items, absent=frozenset()):
    sorter = TopologicalSorter()
    for name, before, after in items:
        sorter.add(name, before.split(), after.split())
    return sorter.sorted(absent)


# -- the sorter alone

def test_unconstrained_items_keep_registration_order():
    assert sort(('c', '', ''), ('a', '', ''), ('b', '', '')) == ['c', 'a', 'b']


def test_explicit_order_breaks_ties_instead_of_add_order():
    sorter = TopologicalSorter()
    sorter.add('late', order=5)
    sorter.add('early', order=1)
    assert sorter.sorted() == ['early', 'late']


def test_before_holds_back_its_target_and_keeps_other_ties_in_order():
    # 'a' must wait for 'c'; 'b', registered before 'c', is ready first.
    assert sort(('a', '', ''), ('b', '', ''), ('c', 'a', '')) == [
        'b', 'c', 'a']


def test_after_moves_an_item_behind_later_registrations():
    assert sort(('a', '', 'c'), ('b', '', ''), ('c', '', '')) == [
        'b', 'c', 'a']


def test_ready_items_are_taken_by_registration_order_not_by_name():
    # 'z' and 'y' both become ready when 'gate' is placed: 'z' came first.
    assert sort(('gate', '', ''), ('z', '', 'gate'), ('y', '', 'gate')) == [
        'gate', 'z', 'y']


def test_constraint_naming_an_absent_item_is_ignored():
    assert sort(('a', 'elsewhere', ''), ('b', '', 'elsewhere'),
                absent={'elsewhere'}) == ['a', 'b']


def test_constraint_naming_an_unknown_item_fails_with_its_name():
    sorter = TopologicalSorter()
    sorter.add('a', after=['ghost'], info='config.zcml line 3\nmore')
    with pytest.raises(UnknownNameError) as caught:
        sorter.sorted()
    assert str(caught.value) == (
        "Stage 'a', registered at config.zcml line 3, says after='ghost', "
        "but no stage named 'ghost' is registered.")
    assert caught.value.missing == 'ghost'


def test_ordering_errors_are_configuration_errors():
    assert issubclass(CycleError, OrderingError)
    assert issubclass(UnknownNameError, OrderingError)
    assert issubclass(PartError, OrderingError)
    assert issubclass(OrderingError, ConfigurationError)


def test_two_item_cycle_is_reported_from_the_first_registered():
    sorter = TopologicalSorter('things')
    sorter.add('b', before=['a'])
    sorter.add('a', before=['b'])
    with pytest.raises(CycleError) as caught:
        sorter.sorted()
    assert caught.value.cycle == ['b', 'a']
    assert str(caught.value) == (
        "Cannot order the things: they form a cycle, each running before "
        "the next: b -> a -> b.\n"
        "  'b' before='a', registered at <unknown>\n"
        "  'a' before='b', registered at <unknown>")


def test_cycle_behind_an_item_registered_earlier_is_still_found():
    sorter = TopologicalSorter()
    sorter.add('tail', after=['m'])
    sorter.add('k', after=['n'])
    sorter.add('m', after=['k'])
    sorter.add('n', after=['m'])
    with pytest.raises(CycleError) as caught:
        sorter.sorted()
    assert caught.value.cycle == ['k', 'm', 'n']


def test_self_cycle():
    sorter = TopologicalSorter()
    sorter.add('narcissus', before=['narcissus'])
    with pytest.raises(CycleError) as caught:
        sorter.sorted()
    assert caught.value.cycle == ['narcissus']


class FakeInfo:
    file = '/site/configure.zcml'
    line = 12


def test_where_gives_file_and_line_of_a_configuration_info():
    assert where(FakeInfo()) == '/site/configure.zcml:12'


def test_where_falls_back_to_the_first_line_of_the_text_or_unknown():
    assert where('  File "x.zcml", line 3\n  <stage />') == (
        'File "x.zcml", line 3')
    assert where(None) == '<unknown>'
    assert where('') == '<unknown>'


# -- on registrations loaded from real ZCML files

def test_zcml_ties_go_by_registration_order_and_constraints_win(build):
    publisher = build('ordering.zcml')
    assert publisher.request_types
    for _registration, spec in publisher.request_types.values():
        assert publisher.chain_for(spec).names() == [
            'second', 'third', 'first', 'fourth', 'respond']


def test_zcml_request_goes_through_stages_in_the_sorted_order(serve):
    response = serve('ordering.zcml').get('/')
    assert response.text == 'browser: second third first fourth respond'


def test_zcml_cycle_fails_with_the_cycle_from_its_earliest_registration(
        build):
    with pytest.raises(CycleError) as caught:
        build('cycle.zcml')
    assert str(caught.value) == (
        "Cannot order the stages for request type 'browser': they form a "
        "cycle, each running before the next: c -> a -> b -> c.\n"
        "  'c' after='b', registered at %s\n"
        "  'a' after='c', registered at %s\n"
        "  'b' after='a', registered at %s" % (
            at('cycle.zcml', 'name="c"'), at('cycle.zcml', 'name="a"'),
            at('cycle.zcml', 'name="b"')))


def test_zcml_cycle_of_outer_stages_names_the_outer_stages(build):
    with pytest.raises(CycleError) as caught:
        build('outer_cycle.zcml')
    assert str(caught.value) == (
        "Cannot order the outer stages: they form a cycle, each running "
        "before the next: x -> y -> x.\n"
        "  'x' before='y', registered at %s\n"
        "  'y' before='x create_request', registered at %s" % (
            at('outer_cycle.zcml', 'name="x"'),
            at('outer_cycle.zcml', 'name="y"')))


def test_zcml_unknown_stage_name_fails_naming_the_registration(build):
    with pytest.raises(UnknownNameError) as caught:
        build('unknown.zcml')
    assert str(caught.value) == (
        "Stage 'lonely', registered at %s, says after='missing', but no "
        "stage named 'missing' is registered."
        % at('unknown.zcml', 'name="lonely"'))


def test_zcml_inner_stage_before_an_outer_stage_is_a_contradiction(build):
    with pytest.raises(PartError) as caught:
        build('inner_before_outer.zcml')
    assert str(caught.value) == (
        "Stage 'early' is an inner stage (registered at %s) but says "
        "before='gate'; 'gate' is an outer stage (registered at %s), and "
        "every outer stage runs before every inner stage." % (
            at('inner_before_outer.zcml', 'name="early"'),
            at('inner_before_outer.zcml', 'name="gate"')))


def test_zcml_outer_stage_after_an_inner_stage_names_every_registration(
        build):
    with pytest.raises(PartError) as caught:
        build('outer_after_inner.zcml')
    assert str(caught.value) == (
        "Stage 'late' is an outer stage (registered at %s) but says "
        "after='deep'; 'deep' is an inner stage (registered at %s, %s), and "
        "every outer stage runs before every inner stage." % (
            at('outer_after_inner.zcml', 'name="late"'),
            at('outer_after_inner.zcml', 'IBrowserRequest'),
            at('outer_after_inner.zcml', 'IXMLRPCRequest')))
