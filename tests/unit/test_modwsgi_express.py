"""zope.pipeline.modwsgi_express: the WSGI script `serve --mod-wsgi`
writes for its daemon processes."""

import os
import runpy

import pytest

from zope.pipeline import modwsgi_express
from zope.pipeline import startup
from zope.pipeline.privatefiles import RUN_DIR_VARIABLE


@pytest.fixture
def loaded(monkeypatch):
    """What the script asked ``load_site`` for, and the run directory
    the environment named when it did (no site is loaded)."""
    calls = []

    def load_site(ini, name, listen):
        calls.append((ini, name, listen, os.environ.get(RUN_DIR_VARIABLE)))
        return 'the application'

    monkeypatch.setattr(startup, 'load_site', load_site)
    # set first, so that what the script sets is undone after the test
    monkeypatch.setenv(RUN_DIR_VARIABLE, '')
    monkeypatch.delenv(RUN_DIR_VARIABLE)
    return calls


def test_the_daemons_script_names_the_servers_run_directory(tmp_path,
                                                             loaded):
    script = modwsgi_express.write_wsgi_script(
        str(tmp_path), '/srv/etc/deploy.ini', 'main', '/srv/var/run',
        '127.0.0.1:8080')
    namespace = runpy.run_path(script)
    assert namespace['application'] == 'the application'
    assert loaded == [('/srv/etc/deploy.ini', 'main', '127.0.0.1:8080',
                       '/srv/var/run')]


def test_a_run_directory_the_environment_names_is_kept(tmp_path, loaded,
                                                        monkeypatch):
    monkeypatch.setenv(RUN_DIR_VARIABLE, '/elsewhere')
    script = modwsgi_express.write_wsgi_script(
        str(tmp_path), '/srv/etc/deploy.ini', 'main', '/srv/var/run',
        '127.0.0.1:8080')
    runpy.run_path(script)
    assert loaded[0][3] == '/elsewhere'
