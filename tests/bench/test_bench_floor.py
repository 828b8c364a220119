"""benchmarks.floor: the least Zope work of the view-checked page, part by
part (counted by callgrind; here each part runs in process)."""

import pytest

from benchmarks import floor
from benchmarks.peers import page


@pytest.mark.parametrize('part', sorted(floor.PARTS))
def test_each_part_of_the_floor_runs_on_the_view_checked_site(
        clean_zope, part):
    floor.run_part(part, 2, 1)


def test_the_floor_app_serves_the_peers_page(clean_zope):
    status, body = floor.run_part('floor', 1, 0)
    assert status == '200 OK'
    assert page.page_problems(body) == []


def test_the_floor_counted_inside_valgrind_exits_0_on_the_page(clean_zope):
    assert floor.main(['--inside', 'floor', '--calls', '1',
                       '--warmup', '0']) == 0


def test_the_floor_refuses_a_view_that_is_not_public(clean_zope,
                                                     monkeypatch):
    monkeypatch.setattr(floor, 'PERMISSION', 'zope.ManageContent')
    with pytest.raises(AssertionError, match='not public'):
        floor.run_part('floor', 1, 0)


def test_a_part_is_counted_by_callgrind_inside_operator_call():
    command = floor.valgrind_command('/tmp/out', 'template', 50, 10)
    assert command[:5] == ['valgrind', '--tool=callgrind',
                           '--collect-atstart=no',
                           '--toggle-collect=_operator_call',
                           '--callgrind-out-file=/tmp/out']
    assert command[-8:] == ['-m', 'benchmarks.floor', '--inside',
                            'template', '--calls', '50', '--warmup', '10']


def test_the_table_prints_each_part_asked_for(monkeypatch, capsys):
    monkeypatch.setattr(floor, 'count',
                        lambda part, calls, warmup: len(part) * 1000)
    assert floor.main(['--parts', 'floor, template']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ['floor', '5000'], ['template', '8000']]


def test_an_unknown_part_is_refused():
    with pytest.raises(SystemExit, match='unknown parts: nonsense'):
        floor.main(['--parts', 'floor,nonsense'])
