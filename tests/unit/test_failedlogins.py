"""zope.pipeline.security.failedlogins: failures per key over a sliding window,
bounded in keys and in failures per key."""

from zope.pipeline.security.failedlogins import FailedLogins


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_key_is_refused_after_limit_failures_until_the_oldest_expires():
    clock = Clock()
    failed = FailedLogins(window=60, clock=clock)
    for _ in range(3):
        assert failed.retry_after('k', 3) == 0
        failed.fail('k', 3)
        clock.now += 10
    # failures at 1000, 1010, 1020; now 1030: the oldest expires at 1060
    assert failed.retry_after('k', 3) == 30
    clock.now = 1059.5
    assert failed.retry_after('k', 3) == 1
    clock.now = 1060
    assert failed.retry_after('k', 3) == 0
    failed.fail('k', 3)
    # failures at 1010, 1020, 1060: refused until 1070
    assert failed.retry_after('k', 3) == 10


def test_only_the_last_limit_failures_of_a_key_are_kept():
    clock = Clock()
    failed = FailedLogins(window=60, clock=clock)
    for _ in range(1000):
        failed.fail('k', 5)
    assert len(failed._failures['k']) == 5
    failed.fail('k', 2)
    assert len(failed._failures['k']) == 2


def test_limit_zero_never_counts_nor_refuses():
    failed = FailedLogins(window=60)
    failed.fail('k', 0)
    assert len(failed) == 0
    assert failed.retry_after('k', 0) == 0


def test_reset_forgets_a_key():
    failed = FailedLogins(window=60)
    failed.fail('k', 1)
    assert failed.retry_after('k', 1) > 0
    failed.reset('k')
    failed.reset('never-failed')
    assert failed.retry_after('k', 1) == 0


def test_keys_are_bounded_the_least_recently_failed_go_first():
    failed = FailedLogins(window=60, max_keys=3)
    for key in ('a', 'b', 'c', 'a', 'd'):
        failed.fail(key, 1)
    assert list(failed._failures) == ['c', 'a', 'd']


def test_a_key_whose_failures_left_the_window_is_dropped():
    clock = Clock()
    failed = FailedLogins(window=60, clock=clock)
    failed.fail('old', 5)
    clock.now += 61
    failed.fail('new', 5)
    assert list(failed._failures) == ['new']
