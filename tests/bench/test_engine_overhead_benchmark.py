"""The engine micro-benchmark runs (tiny counts, no timing asserted)."""

import pytest

from benchmarks import engine_overhead  # noqa: E402


def test_benchmark_pipelines_reach_the_terminal_app(clean_zope):
    environ = engine_overhead.base_environ()
    for stages in (0, 3):
        publisher = engine_overhead.build_publisher(stages)
        engine_overhead.check_answers(publisher, environ)
        registration, spec = publisher.request_types['browser']
        assert publisher.chain_for(spec).names() == [
            'pass_%d' % number for number in range(1, stages + 1)] + [
            'terminal']


def test_benchmark_measures_and_reports_with_tiny_counts(clean_zope, capsys):
    result = engine_overhead.main(['--stages', '2', '--number', '4',
                                   '--repeat', '2', '--rounds', '2'])
    assert set(result) == {'bare', 'pipeline_0', 'pipeline_n', 'switch_0',
                           'switch_n', 'per_stage', 'per_stage_inner',
                           'stages'}
    assert result['stages'] == 2
    assert all(result[name] > 0 for name in ('bare', 'pipeline_0',
                                             'pipeline_n', 'switch_0',
                                             'switch_n'))
    out = capsys.readouterr().out
    assert 'per stage, whole publisher:' in out
    assert 'per stage, inner chain only:' in out
    assert 'publisher,  2 pass-through stages:' in out


def test_per_stage_is_the_median_of_the_differences():
    assert engine_overhead.per_stage([10, 20, 30], [40, 20, 90], 3) == 10


def test_benchmark_needs_at_least_one_stage(clean_zope):
    with pytest.raises(ValueError, match='at least one'):
        engine_overhead.measure(stages=0, number=1, repeat=1)


def test_check_answers_refuses_an_app_that_misses_the_terminal():

    def other(environ, start_response):
        start_response('404 Not Found', [])
        return [b'']
    with pytest.raises(AssertionError, match='not the terminal app'):
        engine_overhead.check_answers(other, engine_overhead.base_environ())
