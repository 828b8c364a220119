"""zope.pipeline.serving.startup: a site loads once per process and never half;
a
process that cannot serve answers 503 and says why once in the log."""

import gc
import logging
import os

import pytest
import webtest

from zope.pipeline.serving import startup

BROKEN_ZCML = '''\
<configure xmlns="http://namespaces.zope.org/zope">
  <include package="zope.pipeline" file="site.zcml" />
  <utility component="no.such.module.thing" provides="no.such.IThing" />
</configure>
'''

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
'''


@pytest.fixture(autouse=True)
def forget_sites():
    startup._sites.clear()
    yield
    startup._sites.clear()


def write_ini(tmp_path, zcml_text=BROKEN_ZCML):
    zcml = tmp_path / 'site.zcml'
    zcml.write_text(zcml_text)
    ini = tmp_path / 'site.ini'
    ini.write_text(INI % zcml)
    return str(ini)


def test_a_site_that_cannot_load_answers_503_and_loads_only_once(
        clean_zope, tmp_path, caplog, monkeypatch):
    ini = write_ini(tmp_path)
    loads = []
    real = startup.load_application
    monkeypatch.setattr(startup, 'load_application',
                        lambda *args: loads.append(args) or real(*args))
    with caplog.at_level(logging.ERROR, 'zope.pipeline.serving.startup'):
        first = startup.load_site(ini)
        # mod_wsgi imports the WSGI script again after a failure.
        second = startup.load_site(ini)
    assert first is second
    assert len(loads) == 1
    response = webtest.TestApp(first).get('/folder/page', status=503)
    assert 'Site unavailable' in response.text
    assert 'no.such' not in response.text
    assert response.headers['Retry-After'] == str(startup.RETRY_AFTER)
    assert response.headers['X-Content-Type-Options'] == 'nosniff'
    errors = [record for record in caplog.records
              if 'cannot serve' in record.getMessage()]
    assert len(errors) == 1
    assert 'touch the WSGI script' in errors[0].getMessage()
    assert ini in errors[0].getMessage()


class FlakyDatabase:
    """Refuses to open ``failures`` times, then opens."""

    config_path = '/etc/zodb.conf'

    def __init__(self, failures, error=None):
        self.failures = failures
        self.error = error or RuntimeError('Access denied')
        self.attempts = 0

    def get(self):
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        return 'db'


class Clock:

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def site(environ, start_response):
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [b'served']


class Loaded:
    """An object made while loading (a plain class: the collector tracks
    its instances)."""


def test_what_a_process_loads_is_frozen_and_the_collector_back_on():
    gc.unfreeze()
    with startup.kept_for_the_process():
        assert not gc.isenabled()  # no collection while loading
        loaded = Loaded()
    assert gc.isenabled()
    # in the permanent generation: in none a collection walks
    assert gc.is_tracked(loaded)
    assert not any(any(alive is loaded for alive in gc.get_objects(number))
                   for number in range(3))


def test_a_collector_that_was_off_stays_off_after_loading():
    gc.disable()
    with startup.kept_for_the_process():
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_load_site_freezes_the_loaded_site(clean_zope, tmp_path):
    gc.unfreeze()
    startup.load_site(write_ini(tmp_path))
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_requests_get_503_until_the_database_opens_then_the_site(caplog):
    database = FlakyDatabase(failures=3)
    clock = Clock()
    guard = startup.OpeningDatabases(
        site, [database], lambda error: 'explained: %s' % error,
        interval=5, clock=clock, first_error=RuntimeError('Access denied'))
    app = webtest.TestApp(guard)
    with caplog.at_level(logging.ERROR, 'zope.pipeline.serving.startup'):
        # Within the interval of the failure at the start: no attempt.
        app.get('/', status=503)
        assert database.attempts == 0
        clock.now += 5
        app.get('/', status=503)
        app.get('/', status=503)
        assert database.attempts == 1
        clock.now += 5
        app.get('/', status=503)
        clock.now += 5
        app.get('/', status=503)
        clock.now += 5
        assert app.get('/').text == 'served'
        assert app.get('/').text == 'served'
    assert database.attempts == 4
    # The same error as at the start (already logged there): not again.
    assert [record.getMessage() for record in caplog.records
            if record.levelno >= logging.ERROR] == []


def test_a_different_error_is_logged_once(caplog):
    database = FlakyDatabase(failures=10, error=KeyError('other'))
    clock = Clock()
    guard = startup.OpeningDatabases(
        site, [database], lambda error: 'explained: %r' % error,
        interval=1, clock=clock, first_error=RuntimeError('Access denied'))
    app = webtest.TestApp(guard)
    with caplog.at_level(logging.ERROR, 'zope.pipeline.serving.startup'):
        for _ in range(4):
            clock.now += 1
            app.get('/', status=503)
    assert [record.getMessage() for record in caplog.records] == [
        "explained: KeyError('other')"]


class MySQLError(Exception):
    pass


MySQLError.__module__ = 'MySQLdb._exceptions'


@pytest.mark.parametrize('code, advice', [
    (1045, 'MySQL refused the user and password'),
    (1049, 'does not exist yet: create it with `zope-pipeline init-db '
           '/srv/etc/deploy-mysql.ini`'),
    (1234, 'check the ZConfig file /etc/zodb.conf'),
])
def test_the_log_says_what_to_change(code, advice):
    try:
        try:
            raise MySQLError(code, 'message')
        except MySQLError as cause:
            raise RuntimeError('wrapped') from cause
    except RuntimeError as error:
        text = startup.explain_open_error(
            error, '/srv/etc/deploy-mysql.ini', [FlakyDatabase(0)])
    assert advice in text
    assert 'Process %d cannot open its database' % os.getpid() in text


def test_waitress_names_what_to_change_when_the_database_refuses(
        clean_zope, tmp_path, monkeypatch):
    from zope.pipeline.cli import main as zope_pipeline
    from zope.pipeline.commands import serve

    def refuse(publisher):
        raise MySQLError(1045, 'Access denied')
    monkeypatch.setattr(serve, 'open_databases', refuse)
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    ini = write_ini(tmp_path, BROKEN_ZCML.replace(
        '<utility component="no.such.module.thing" '
        'provides="no.such.IThing" />', ''))
    with pytest.raises(SystemExit) as caught:
        zope_pipeline(['serve', ini])
    message = str(caught.value)
    assert 'MySQL refused the user and password' in message
    assert '`zope-pipeline init-db %s`' % ini in message
    assert 'Requests are answered' not in message
