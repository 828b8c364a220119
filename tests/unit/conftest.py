"""Fixtures of the engine tests: compile and serve the test sites."""

import pytest

from .engine_files import engine_file


@pytest.fixture
def build(clean_zope):
    """Compile the Publisher of a test site in tests/engine."""
    from zope.pipeline.app import make_app

    def build(name, settings=None):
        return make_app(engine_file(name), settings)
    return build


@pytest.fixture
def serve(build):
    """A WebTest app (wsgiref.validate included) over a test site."""
    import webtest

    def serve(name, settings=None, **extra_environ):
        return webtest.TestApp(build(name, settings), lint=True,
                               extra_environ=extra_environ)
    return serve
