"""zope.pipeline.security.privatefiles: what counts as a private directory, and
secret files written for their owner only."""

import os

import pytest

from zope.pipeline.security import privatefiles
from zope.pipeline.security.privatefiles import UnsafePathError


def test_a_new_private_directory_is_made_for_its_owner_only(tmp_path):
    path = privatefiles.private_directory(str(tmp_path / 'state'))
    assert os.stat(path).st_mode & 0o777 == 0o700
    # An existing one that is private is accepted as it is.
    assert privatefiles.private_directory(path) == path


def test_with_parents_a_missing_directory_above_is_made_too(tmp_path):
    path = privatefiles.private_directory(
        str(tmp_path / 'run' / 'below' / 'state'), parents=True)
    for directory in (path, tmp_path / 'run' / 'below'):
        assert os.stat(directory).st_mode & 0o777 == 0o700
    # without parents, a missing parent is an error
    with pytest.raises(FileNotFoundError):
        privatefiles.private_directory(str(tmp_path / 'other' / 'state'))


def test_a_file_in_place_of_the_directory_is_refused(tmp_path):
    path = tmp_path / 'state'
    path.write_text('')
    with pytest.raises(UnsafePathError, match='is not a directory'):
        privatefiles.private_directory(str(path))


def test_a_secret_is_written_for_its_owner_only(tmp_path):
    path = str(tmp_path / 'secret')
    privatefiles.write_secret(path, 'one')
    privatefiles.write_secret(path, 'two')
    assert open(path).read() == 'two'
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ['secret']


def test_a_secret_that_cannot_be_written_leaves_no_temporary_file(
        tmp_path, monkeypatch):
    def fail(source, target):
        raise OSError('disk full')
    monkeypatch.setattr(os, 'replace', fail)
    with pytest.raises(OSError, match='disk full'):
        privatefiles.write_secret(str(tmp_path / 'secret'), 'text')
    assert os.listdir(tmp_path) == []
