"""``benchmarks.hitcost``: a hit's CPU in process, warm and evicted."""

from benchmarks import hitcost


def test_a_stored_page_and_the_ceiling_are_timed_warm_and_evicted(
        clean_zope):
    results = hitcost.measure('sqlite', requests=3, rounds=1, evict_mb=1)
    assert sorted(results) == [('evicted', 'cached'), ('evicted', 'ceiling'),
                               ('warm', 'cached'), ('warm', 'ceiling')]
    assert all(value > 0 for value in results.values())


def test_the_medians_are_printed_per_app_and_kind(monkeypatch, capsys):
    asked = []

    def measure(*args):
        asked.append(args)
        return {(kind, name): 1.5 for kind in ('warm', 'evicted')
                for name in ('cached', 'ceiling')}
    monkeypatch.setattr(hitcost, 'measure', measure)
    assert hitcost.main(['--requests', '2', '--rounds', '1',
                         '--evict-mb', '1']) == 0
    assert asked == [('sqlite', 2, 1, 1)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith('CPU µs per request, sqlite')
    assert [line.split() for line in lines[2:]] == [
        ['cached', '1.5', '1.5'], ['ceiling', '1.5', '1.5']]
