"""www-data -> root through `serve`'s ownership repair: root walks the
daemon-owned storage directory (var/data) to give what is in it to
www-data.  www-data can change that tree while root walks it: swap a
directory it listed for a symbolic link to a directory of root's, or link
in one of root's files.  Nothing outside the tree may change owner or
mode.

The race is made deterministic: the directory listing of the walk is
hooked, and the swap happens between the listing and the descent (where
``renameat2(RENAME_EXCHANGE)`` timed with inotify put it).
"""

import os
import stat

import pytest

from zope.pipeline.serving import layout

from tests.conftest import need


@pytest.fixture
def www_data():
    need(os.geteuid() == 0, 'giving files to www-data needs root')
    return layout.daemon_of('www-data', 'www-data')


@pytest.fixture
def roots_directory(tmp_path):
    """A directory of root's, files in it, none the daemon's."""
    directory = tmp_path / 'roots'
    directory.mkdir(mode=0o755)
    for index in range(16):
        path = directory / ('secret-%d' % index)
        path.write_text('root only')
        os.chmod(path, 0o644)
    return directory


def owners_and_modes(directory):
    return {entry.name: (entry.stat(follow_symlinks=False).st_uid,
                         stat.S_IMODE(entry.stat(follow_symlinks=False)
                                      .st_mode))
            for entry in os.scandir(directory)}


def storage_with_subdirectory(tmp_path, daemon):
    """var/data, the daemon's, with blobs/ and a file in it."""
    data = tmp_path / 'var' / 'data'
    (data / 'blobs').mkdir(parents=True)
    (data / 'blobs' / 'blob').write_text('')
    (data / 'main.sqlite3').write_text('')
    for path in (data, data / 'blobs', data / 'blobs' / 'blob',
                 data / 'main.sqlite3'):
        os.chown(path, daemon.uid, daemon.gid)
    return data


def swap_after_listing(monkeypatch, directory, name, target):
    """Once ``directory`` has been listed, replace its entry ``name`` by
    a symbolic link to ``target`` (what the daemon user would do)."""
    real_scandir = os.scandir
    wanted = os.stat(directory)
    swapped = []

    class Listing:
        def __init__(self, entries):
            self.entries = entries

        def __iter__(self):
            return iter(self.entries)

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self.close()

        def close(self):
            pass

    def scandir(path='.'):
        with real_scandir(path) as listing:
            entries = list(listing)
        if not swapped and os.path.samestat(os.stat(path), wanted):
            os.rename(os.path.join(directory, name),
                      os.path.join(directory, name + '.moved'))
            os.symlink(target, os.path.join(directory, name))
            swapped.append(name)
        return Listing(entries)

    monkeypatch.setattr(os, 'scandir', scandir)
    return swapped


def test_a_directory_swapped_for_a_link_mid_walk_gives_away_nothing(
        tmp_path, www_data, roots_directory, monkeypatch):
    data = storage_with_subdirectory(tmp_path, www_data)
    before = owners_and_modes(roots_directory)
    swapped = swap_after_listing(monkeypatch, str(data), 'blobs',
                                 str(roots_directory))
    layout.make_private_tree(str(data), www_data)
    assert swapped == ['blobs']
    assert owners_and_modes(roots_directory) == before
    assert os.lstat(roots_directory).st_uid == 0
    # What is really in the tree is the daemon's, and private.
    assert owners_and_modes(data)['main.sqlite3'] == (www_data.uid, 0o600)
    assert os.lstat(data).st_uid == www_data.uid


def test_a_link_to_roots_directory_at_any_depth_is_not_followed(
        tmp_path, www_data, roots_directory):
    data = storage_with_subdirectory(tmp_path, www_data)
    before = owners_and_modes(roots_directory)
    os.symlink(str(roots_directory), str(data / 'top-link'))
    os.symlink(str(roots_directory), str(data / 'blobs' / 'deep-link'))
    os.symlink(str(roots_directory / 'secret-0'), str(data / 'file-link'))
    layout.make_private_tree(str(data), www_data)
    assert owners_and_modes(roots_directory) == before
    assert owners_and_modes(data / 'blobs')['blob'] == (www_data.uid, 0o600)


def test_a_hard_link_to_a_file_of_root_is_not_given_away(
        tmp_path, www_data, roots_directory, capsys):
    data = storage_with_subdirectory(tmp_path, www_data)
    os.link(str(roots_directory / 'secret-1'), str(data / 'linked'))
    layout.make_private_tree(str(data), www_data)
    assert owners_and_modes(roots_directory)['secret-1'] == (0, 0o644)
    assert 'has 2 names' in capsys.readouterr().err


def test_files_root_left_in_the_storage_become_the_daemons(
        tmp_path, www_data):
    """The repair itself still works: root's own files in the storage
    (one name each) are given to the daemon user, made private."""
    data = storage_with_subdirectory(tmp_path, www_data)
    (data / 'main.sqlite3-wal').write_text('')
    os.chmod(data / 'main.sqlite3-wal', 0o644)
    (data / 'blobs' / 'more').mkdir(mode=0o755)
    layout.make_private_tree(str(data), www_data)
    assert owners_and_modes(data)['main.sqlite3-wal'] == (www_data.uid,
                                                          0o600)
    assert owners_and_modes(data / 'blobs')['more'] == (www_data.uid, 0o700)
