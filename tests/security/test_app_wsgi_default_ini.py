"""etc/app.wsgi without ZOPE_PIPELINE_INI: it never falls back to the
development ini (debug headers, the sample administrator); it answers
503 and the log says which variable to set."""

import logging
import os
import runpy

import webtest

from zope.pipeline.serving import startup

from tests.conftest import ROOT

APP_WSGI = os.path.join(ROOT, 'etc', 'app.wsgi')


def test_app_wsgi_without_an_ini_does_not_serve_the_development_site(
        clean_zope, monkeypatch, caplog):
    monkeypatch.delenv('ZOPE_PIPELINE_INI', raising=False)
    monkeypatch.setenv('ZOPE_PIPELINE_RUN_DIR', '/nonexistent')
    startup._sites.clear()
    with caplog.at_level(logging.ERROR, 'zope.pipeline.serving.startup'):
        namespace = runpy.run_path(APP_WSGI)
    response = webtest.TestApp(namespace['application']).get(
        '/folder/page', status='*')
    assert response.status_int == 503
    assert 'X-Pipeline-Pid' not in response.headers
    assert 'ZOPE_PIPELINE_INI is not set' in caplog.text
