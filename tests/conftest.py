"""Fixtures shared by the whole suite."""

import gc
import os

import pytest
import zope.testing.cleanup

from zope.pipeline.zodb import storage

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def in_ci():
    return os.environ.get('CI', '').lower() in ('1', 'true', 'yes')


def need(condition, reason):
    """Skip on a laptop without the server; fail in CI (CI=true)."""
    if condition:
        return
    if in_ci():
        pytest.fail('CI=true but %s' % reason)
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def kept_umask():
    """Every test ends with the umask it began with (``zope-pipeline
    serve``, called in the test process, sets the servers' private one)."""
    umask = os.umask(0o022)
    os.umask(umask)
    yield
    os.umask(umask)


@pytest.fixture(autouse=True)
def collected_again():
    """Every test ends with the objects a loaded site froze given back to
    the garbage collector (``load_site`` and ``zope-pipeline serve``,
    called in the test process, freeze what is alive once the site is
    loaded: ``startup.kept_for_the_process``), and the collector on."""
    yield
    gc.unfreeze()
    gc.enable()


@pytest.fixture(autouse=True)
def kept_logging():
    """Every test ends with the logging configuration it began with
    (``zope-pipeline serve``, called in the test process, applies the
    ini's ``[loggers]``: a handler on the root logger writing to the
    stream stderr was during that test, closed after it, would be written
    to by every later record, the database's last at exit among them)."""
    import logging
    loggers = [logging.getLogger()] + [
        logger for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)]
    saved = [(logger, logger.level, list(logger.handlers), logger.propagate,
              logger.disabled) for logger in loggers]
    yield
    for logger, level, handlers, propagate, disabled in saved:
        logger.setLevel(level)
        logger.propagate = propagate
        logger.disabled = disabled
        # pytest's own capture handlers come and go with each phase
        for handler in list(logger.handlers):
            if handler not in handlers and not is_pytests(handler):
                logger.removeHandler(handler)
        for handler in handlers:
            if handler not in logger.handlers and not is_pytests(handler):
                logger.addHandler(handler)


def is_pytests(handler):
    return type(handler).__module__.partition('.')[0] == '_pytest'


@pytest.fixture(autouse=True)
def test_process_keeps_its_user(monkeypatch):
    """`zope-pipeline serve` run as root becomes www-data once waitress
    has bound its socket, and a command that opens a database www-data
    can change becomes www-data first (``layout.become_database_user``):
    never the test process, which would run every later test as
    www-data.  A test that serves in it patches ``serve.run_as``; one
    that runs such a command runs it as a process of its own."""
    from zope.pipeline.commands import serve
    from zope.pipeline.serving import layout

    def refuse(daemon):
        raise AssertionError('The test process would become %s: run the '
                             'command in a process of its own, or patch '
                             'serve.run_as.' % daemon.user)
    monkeypatch.setattr(serve, 'drop_privileges', refuse)
    monkeypatch.setattr(layout, 'drop_privileges', refuse)


@pytest.fixture(autouse=True, scope='session')
def speedups_as_applications_have_them():
    """zope.pipeline._speedups installed as ``make_app`` installs them
    (left out with ZOPE_PIPELINE_SPEEDUPS=0), for the tests that make no
    application too: every test sees the code a request would run."""
    from zope.pipeline import _speedups
    _speedups.apply()
    yield


@pytest.fixture
def component_speedups(monkeypatch):
    """zope.pipeline._speedups' zope_component in place for the test,
    whatever ZOPE_PIPELINE_SPEEDUPS says: tests of what it tells.  Put
    in place by ``monkeypatch``, so that a test's own patches of
    ``components`` are undone in order."""
    from zope.pipeline import components
    from zope.pipeline._speedups import zope_component
    for name in zope_component.REPLACED:
        monkeypatch.setattr(components, name, getattr(zope_component, name))


@pytest.fixture
def clean_zope():
    """A clean component registry, security and site before and after."""
    zope.testing.cleanup.cleanUp()
    yield
    storage.close_all()
    zope.testing.cleanup.cleanUp()


@pytest.fixture
def make_testapp(clean_zope):
    """Build the full pipeline from ZCML and wrap it in WebTest (which runs
    wsgiref.validate over it for every request)."""
    import webtest

    from zope.pipeline.app import DEFAULT_SITE_ZCML
    from zope.pipeline.app import make_app

    def make(site_zcml=DEFAULT_SITE_ZCML, settings=None, **extra_environ):
        publisher = make_app(site_zcml, settings)
        extra_environ.setdefault('REMOTE_ADDR', '127.0.0.1')
        return webtest.TestApp(publisher, extra_environ=extra_environ,
                               lint=True)
    return make


@pytest.fixture
def exec_calls(monkeypatch):
    """Instead of setting up a server with mod_wsgi-express and running
    Apache, `zope-pipeline serve --mod-wsgi` in the test process records
    the mod_wsgi-express command line."""
    from zope.pipeline.commands import serve
    calls = []
    monkeypatch.setattr(serve, 'set_up_server', calls.append)
    monkeypatch.setattr(serve, 'run_in_foreground', lambda command: 0)
    monkeypatch.setattr(serve, 'find_mod_wsgi_express',
                        lambda: '/usr/bin/mod_wsgi-express')
    return calls


@pytest.fixture
def bcrypt_checks(monkeypatch):
    """The passwords given to ``bcrypt.checkpw``, in order (the real check
    still runs)."""
    import bcrypt
    given = []
    checkpw = bcrypt.checkpw

    def counting_checkpw(password, hashed):
        given.append(password)
        return checkpw(password, hashed)

    monkeypatch.setattr(bcrypt, 'checkpw', counting_checkpw)
    return given


@pytest.fixture
def open_tmp():
    """A scratch directory every user may pass through (tmp_path's
    parents are root's only): for what root checks on another user's
    behalf."""
    import pathlib
    import shutil
    import tempfile
    directory = tempfile.mkdtemp(prefix='zope-pipeline-open-', dir='/tmp')
    os.chmod(directory, 0o755)
    try:
        yield pathlib.Path(directory)
    finally:
        shutil.rmtree(directory)
