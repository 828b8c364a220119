"""zope.pipeline._speedups: installed when the application is made, left
out by the ini's ``speedups = false`` or ZOPE_PIPELINE_SPEEDUPS=0."""

import sys
import types

import pytest
import zope.testing.cleanup
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import _speedups
from zope.pipeline.app import app_factory

from .engine_files import engine_file


@pytest.fixture
def recording_seam(monkeypatch):
    """The seam holding one module that records its calls."""
    calls = []
    module = types.ModuleType('zope.pipeline._speedups.recording')
    module.install = lambda: calls.append('install')
    module.uninstall = lambda: calls.append('uninstall')
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(_speedups, 'MODULES', ('recording',))
    was = _speedups.State.installed
    monkeypatch.setattr(_speedups.State, 'installed', False)
    yield calls
    _speedups.State.installed = was


@pytest.mark.parametrize('value, setting, expected', [
    ('', True, True), ('', False, False), ('0', True, False),
    ('off', True, False), ('False', True, False), ('1', False, True),
    ('yes', False, True)])
def test_environment_variable_wins_over_the_ini(monkeypatch, value, setting,
                                                 expected):
    monkeypatch.setenv(_speedups.ENVIRONMENT_VARIABLE, value)
    assert _speedups.wanted(setting) is expected


def test_install_and_uninstall_each_run_once(recording_seam, monkeypatch):
    monkeypatch.delenv(_speedups.ENVIRONMENT_VARIABLE, raising=False)
    assert _speedups.apply(True) is True
    assert _speedups.apply(True) is True
    assert recording_seam == ['install']
    assert _speedups.apply(False) is False
    _speedups.uninstall()
    assert recording_seam == ['install', 'uninstall']


def test_importing_the_seam_installs_nothing(recording_seam):
    import importlib
    importlib.reload(_speedups)
    assert recording_seam == []


def test_ini_speedups_false_leaves_them_out(recording_seam, monkeypatch,
                                            clean_zope):
    monkeypatch.delenv(_speedups.ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.chdir(engine_file(''))
    app_factory({}, site_zcml='specific.zcml', speedups='false')
    assert recording_seam == [] and not _speedups.State.installed
    zope.testing.cleanup.cleanUp()
    app_factory({}, site_zcml='specific.zcml')
    assert recording_seam == ['install']


def test_ini_speedups_must_be_a_boolean(tmp_path):
    with pytest.raises(ConfigurationError, match='speedups = .maybe.'):
        app_factory({'here': str(tmp_path)}, speedups='maybe')
