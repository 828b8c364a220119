"""The pytest fixture the outer-stage tests share (imported by them)."""

import pytest

from . import reset
from . import settings
from . import site_zcml


@pytest.fixture
def outer_app(make_testapp, tmp_path):
    """``outer_app(retry__attempts='2', ...)`` -> a WebTest app of the full
    pipeline with this package's views and stages; plan and records are
    emptied before and after."""
    reset()

    def make(extra_environ=None, **values):
        return make_testapp(site_zcml(tmp_path), settings(**values),
                            **(extra_environ or {}))
    yield make
    reset()
