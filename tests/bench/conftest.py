"""The benchmark harness's own tests: they start servers, ab and wrk, so
they run in the full suite (``make test``) and not in ``make unit``.
Every test here is marked ``bench``."""

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(HERE + os.sep):
            item.add_marker(pytest.mark.bench)
