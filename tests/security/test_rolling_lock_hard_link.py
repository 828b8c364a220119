"""The rolling restarts' lock: root (`zope-pipeline restart`, a daemon
process started by root) opens ``<run dir>/rolling.lock`` and gives it to
the run directory's owner, the daemon user, who can put any name in that
directory.  A hard link there to a file of root's was given to the
daemon user: `/etc/shadow`, say, where the kernel lets the link be made
(``fs.protected_hardlinks = 0``)."""

import os

import pytest
from conftest import need

from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.serving import rolling

#: The daemon user's uid and gid in these tests (nobody's).
DAEMON = 65534


def test_restart_as_root_gives_a_hard_linked_root_file_to_the_daemon_user(
        tmp_path):
    need(os.geteuid() == 0, 'the lock is given away only by root')
    run_dir = tmp_path / 'run'
    run_dir.mkdir(mode=0o700)
    os.chown(run_dir, DAEMON, DAEMON)
    secret = tmp_path / 'shadow'
    secret.write_text('root:$6$...\n')
    os.chmod(secret, 0o600)
    # what the daemon user would make in its own directory
    os.link(secret, run_dir / rolling.LOCK_NAME)
    with pytest.raises(UnsafePathError, match='not a file of its own'):
        rolling.take_turn(str(run_dir))
    assert os.stat(secret).st_uid == 0
    assert os.stat(secret).st_gid == 0


def test_a_lock_file_the_daemon_user_made_keeps_its_owner(tmp_path):
    need(os.geteuid() == 0, 'the lock is given away only by root')
    run_dir = tmp_path / 'run'
    run_dir.mkdir(mode=0o700)
    os.chown(run_dir, DAEMON, DAEMON)
    lock_path = run_dir / rolling.LOCK_NAME
    lock_path.write_text('')
    os.chown(lock_path, DAEMON + 1, DAEMON + 1)
    rolling.take_turn(str(run_dir)).close()
    assert os.stat(lock_path).st_uid == DAEMON + 1
    made = tmp_path / 'made'
    made.mkdir(mode=0o700)
    os.chown(made, DAEMON, DAEMON)
    rolling.take_turn(str(made)).close()
    assert os.stat(made / rolling.LOCK_NAME).st_uid == DAEMON
