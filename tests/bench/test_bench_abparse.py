"""Reading ab's output: captured runs of ab 2.3 against waitress."""

import os

import pytest

from benchmarks.abparse import AbOutputError  # noqa: E402
from benchmarks.abparse import parse_ab_output  # noqa: E402
from benchmarks.abparse import parse_percentile_csv  # noqa: E402
from benchmarks.abparse import parse_percentile_table  # noqa: E402

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       'bench_samples')


def sample(name):
    with open(os.path.join(SAMPLES, name)) as captured:
        return captured.read()


def test_a_clean_run_gives_counts_rate_mean_and_percentiles():
    result = parse_ab_output(sample('ok.txt'))
    assert result.complete == 50
    assert result.failed == 0
    assert result.non_2xx == 0
    assert result.keep_alive == 0
    assert result.document_length == 100
    assert result.requests_per_second > 0
    assert result.mean_ms > 0
    assert set(result.percentiles) == {50, 66, 75, 80, 90, 95, 98, 99, 100}
    assert result.p50 == result.percentile(50)
    assert result.p50 <= result.p99 <= result.percentiles[100]


def test_the_mean_is_the_per_request_time_not_the_one_across_requests():
    text = sample('ok.txt')
    result = parse_ab_output(text)
    assert ('Time per request:       %.3f [ms] (mean)\n' % result.mean_ms
            in text)


def test_keep_alive_requests_are_counted_and_the_csv_percentiles_win():
    csv_text = sample('ok-k200.csv')
    result = parse_ab_output(sample('ok-k200.txt'), csv_text)
    assert result.keep_alive == 200
    assert len(result.percentiles) == 101
    assert result.percentiles == parse_percentile_csv(csv_text)
    assert result.p50 != int(result.p50)  # fractional, from the CSV


def test_a_csv_read_past_its_end_by_ab_is_ignored_for_the_table():
    """ab -n 50 -e: the 99% row of the CSV is garbage (0.257 ms, below the
    median); the printed table is used instead."""
    csv_text = sample('ok-k.csv')
    assert parse_percentile_csv(csv_text)[99] < parse_percentile_csv(
        csv_text)[50]
    result = parse_ab_output(sample('ok-k.txt'), csv_text)
    assert result.keep_alive == 50
    assert result.percentiles == parse_percentile_table(sample('ok-k.txt'))
    assert result.p99 == 22


def test_failures_and_non_2xx_responses_are_read_with_their_kinds():
    result = parse_ab_output(sample('flaky.txt'))
    assert result.complete == 50
    assert result.failed == 40
    assert result.non_2xx == 10
    assert result.failed_detail == {'connect': 0, 'receive': 0,
                                    'length': 40, 'exceptions': 0}


def test_refused_connections_count_as_complete_but_failed():
    result = parse_ab_output(sample('refused.txt'))
    assert result.complete == 10
    assert result.failed == 15
    assert result.failed_detail['receive'] == 10


def test_an_aborted_run_has_no_result():
    with pytest.raises(AbOutputError, match='complete'):
        parse_ab_output(sample('aborted.txt'))


def test_a_summary_without_rate_is_an_error():
    text = sample('ok.txt').replace('Requests per second', 'Requests/s')
    with pytest.raises(AbOutputError, match='requests per second'):
        parse_ab_output(text)


def test_output_without_percentile_table_has_no_percentiles():
    assert parse_percentile_table('Complete requests: 3\n') == {}


def test_percentile_csv_rows_become_integer_percents():
    csv_text = 'Percentage served,Time in ms\n0,0.5\n50,1.25\n100,9\n\n'
    assert parse_percentile_csv(csv_text) == {0: 0.5, 50: 1.25, 100: 9.0}
