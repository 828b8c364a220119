"""State and lock files another local user prepared in a shared directory
(/tmp), and symbolic links that would make root change the owner of
something else: refused, never followed."""

import os
import pwd
import sys
import tempfile
import types

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.serving import layout
from zope.pipeline.zodb import storage

ZCONFIG = '''\
<zodb main>
  <mappingstorage />
</zodb>
'''


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):
    """A world-writable sticky directory standing for /tmp."""
    shared = tmp_path / 'tmp'
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.setattr(tempfile, 'tempdir', str(shared))
    monkeypatch.delenv('ZOPE_PIPELINE_RUN_DIR', raising=False)
    return shared


def test_a_symlink_planted_at_the_first_open_lock_creates_nothing(
        shared_tmp, tmp_path):
    config = tmp_path / 'zodb.conf'
    config.write_text(ZCONFIG)
    victim = tmp_path / 'victim'
    # Every name the lock could have had in the shared directory.
    import hashlib
    digest = hashlib.sha256(os.path.realpath(str(config)).encode(
        'utf-8')).hexdigest()[:16]
    os.symlink(str(victim), str(shared_tmp / (
        'zope.pipeline-open-%s.lock' % digest)))
    with storage.first_open_lock(str(config)):
        pass
    assert not os.path.lexists(victim)
    assert [name for name in os.listdir(shared_tmp)
            if not os.path.islink(shared_tmp / name)] == []


@pytest.fixture
def under_mod_wsgi(monkeypatch):
    module = types.ModuleType('mod_wsgi')
    module.process_group = 'zope-pipeline'
    module.threads_per_process = 2
    module.request_metrics = lambda: {}
    monkeypatch.setitem(sys.modules, 'mod_wsgi', module)
    return module


def metrics_stage():
    from zope.pipeline.stages.metrics import MetricsStage
    return MetricsStage(lambda environ, start_response: [], modwsgi=False)


def expected_directory():
    from zope.pipeline.metrics.group import group_directory
    return group_directory('')[0]


def test_a_metrics_directory_planted_as_a_symlink_is_refused(
        clean_zope, shared_tmp, tmp_path, under_mod_wsgi):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir(mode=0o700)
    os.symlink(str(elsewhere), expected_directory())
    with pytest.raises(ConfigurationError, match='symbolic link'):
        metrics_stage()
    assert os.listdir(elsewhere) == []


def test_a_metrics_directory_writable_by_others_is_refused(
        clean_zope, shared_tmp, under_mod_wsgi):
    directory = expected_directory()
    os.mkdir(directory)
    os.chmod(directory, 0o777)
    with pytest.raises(ConfigurationError,
                       match='writable by its group or by others'):
        metrics_stage()
    assert os.listdir(directory) == []


def test_a_metrics_directory_of_another_user_is_refused(
        clean_zope, shared_tmp, under_mod_wsgi, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip('giving a directory to another user needs root')
    directory = expected_directory()
    os.mkdir(directory, 0o700)
    nobody = pwd.getpwnam('nobody')
    os.chown(directory, nobody.pw_uid, nobody.pw_gid)
    # As a daemon process's user (mod_wsgi never runs them as root).
    monkeypatch.setattr(os, 'geteuid', lambda: 1000)
    with pytest.raises(ConfigurationError, match='belongs to user %d'
                       % nobody.pw_uid):
        metrics_stage()


def test_the_metrics_directory_is_made_in_the_run_directory(
        clean_zope, shared_tmp, tmp_path, under_mod_wsgi, monkeypatch):
    run = tmp_path / 'run'
    monkeypatch.setenv('ZOPE_PIPELINE_RUN_DIR', str(run))
    stage = metrics_stage()
    directory = stage.runtime.state.directory
    assert os.path.dirname(directory) == str(run)
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert os.listdir(shared_tmp) == []


def test_serve_as_root_does_not_chown_through_a_symlinked_cache(tmp_path):
    if os.geteuid() != 0:
        pytest.skip('serve gives directories away only as root')
    victim = tmp_path / 'etc-like'
    victim.mkdir()
    (victim / 'shadow-like').write_text('secret')
    var = tmp_path / 'var'
    var.mkdir()
    os.symlink(str(victim), str(var / 'relstorage-cache'))
    with pytest.raises(SystemExit, match='symbolic link'):
        layout.make_private_tree(str(var / 'relstorage-cache'),
                                 layout.daemon_of('nobody', 'nogroup'))
    assert os.stat(victim).st_uid == 0
    assert os.stat(victim / 'shadow-like').st_uid == 0
