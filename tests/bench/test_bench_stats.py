"""Verification of runs against the server's count, and summaries."""

from benchmarks.abparse import AbResult  # noqa: E402
from benchmarks.stats import Run  # noqa: E402
from benchmarks.stats import ServerCounts  # noqa: E402
from benchmarks.stats import median  # noqa: E402
from benchmarks.stats import ratio  # noqa: E402
from benchmarks.stats import summarize  # noqa: E402
from benchmarks.stats import verify  # noqa: E402


def ab(complete=100, failed=0, non_2xx=0, rate=500.0, mean=2.0, p50=1.5,
       p99=9.0):
    return AbResult(complete=complete, failed=failed, non_2xx=non_2xx,
                    requests_per_second=rate, mean_ms=mean,
                    percentiles={50: p50, 99: p99})


def served(total=100, s2xx=None, s3xx=0, s4xx=0, s5xx=0):
    return ServerCounts(total, total if s2xx is None else s2xx, s3xx, s4xx,
                        s5xx)


def test_a_run_the_server_counted_exactly_is_valid():
    verification = verify(ab(), 100, served())
    assert verification.valid
    assert verification.problems == []
    assert verification.describe() == 'verified'


def test_fewer_server_responses_than_ab_completed_is_invalid():
    verification = verify(ab(), 100, served(total=99))
    assert not verification.valid
    assert verification.problems == [
        'the server counted 99 responses, ab 100']


def test_more_server_responses_than_ab_completed_is_invalid():
    assert not verify(ab(), 100, served(total=101)).valid


def test_ab_completing_fewer_than_requested_is_invalid():
    verification = verify(ab(complete=90), 100, served(total=90))
    assert verification.problems == ['ab completed 90 of 100 requests']


def test_failed_requests_make_a_run_invalid():
    result = ab(failed=3)
    result.failed_detail = {'length': 3}
    verification = verify(result, 100, served())
    assert not verification.valid
    assert "ab counted 3 failed requests {'length': 3}" in (
        verification.describe())


def test_non_2xx_responses_make_a_run_invalid():
    verification = verify(ab(non_2xx=2), 100, served(s2xx=98, s5xx=2))
    assert verification.problems == [
        'ab counted 2 non-2xx responses',
        'the server sent 0 4xx and 2 5xx responses']


def test_expected_redirects_must_all_be_counted_by_the_server():
    assert verify(ab(non_2xx=100), 100, served(s2xx=0, s3xx=100),
                  redirects_expected=True).valid
    verification = verify(ab(non_2xx=100), 100, served(s2xx=1, s3xx=99),
                          redirects_expected=True)
    assert verification.problems == [
        'ab counted 100 non-2xx responses, the server 99 redirects']


def test_unexpected_redirects_make_a_run_invalid():
    verification = verify(ab(), 100, served(s2xx=90, s3xx=10))
    assert verification.problems == ['the server sent 10 redirects']


def test_a_run_without_ab_result_is_invalid():
    verification = verify(None, 100, served())
    assert not verification.valid
    assert verification.problems == ['ab printed no result']


def test_server_counts_add_and_subtract_field_by_field():
    first = ServerCounts(10, 7, 1, 1, 1)
    second = ServerCounts(5, 5, 0, 0, 0)
    assert first + second == ServerCounts(15, 12, 1, 1, 1)
    assert first - second == ServerCounts(5, 2, 1, 1, 1)


def make_run(result, valid=True):
    verification = verify(result, result.complete,
                          served(total=result.complete if valid else 0))
    return Run(result, served(), verification)


def test_a_summary_has_medians_of_rates_and_latencies():
    runs = [make_run(ab(rate=rate, mean=mean, p50=p50, p99=p99))
            for rate, mean, p50, p99 in ((100, 3, 2, 9), (300, 1, 1, 5),
                                         (200, 2, 3, 7))]
    summary = summarize(runs)
    assert (summary.requests_per_second, summary.mean_ms, summary.p50_ms,
            summary.p99_ms) == (200, 2, 2, 7)
    assert summary.runs == summary.verified_runs == 3
    assert summary.verified


def test_a_summary_sums_failures_and_is_unverified_if_one_run_is():
    runs = [make_run(ab(failed=1, non_2xx=2)), make_run(ab(), valid=False),
            Run(None, served(), verify(None, 100, served()))]
    summary = summarize(runs)
    assert summary.failed == 1
    assert summary.non_2xx == 2
    assert summary.verified_runs == 0
    assert not summary.verified
    assert 'ab printed no result' in summary.problems


def test_an_empty_summary_is_not_verified():
    summary = summarize([])
    assert not summary.verified
    assert summary.requests_per_second is None


def test_median_skips_unknown_values_and_ratio_needs_both():
    assert median([None, 1, 3]) == 2
    assert median([None]) is None
    assert ratio(50, 200) == 0.25
    assert ratio(None, 200) is None
    assert ratio(50, 0) is None
