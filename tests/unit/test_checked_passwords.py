"""Start time does not grow with the principals: a principal's password
is checked against the known passwords once (when ``adduser`` sets it,
or when its entry first appears in a file), recorded beside the
principals file, and not checked again at each process start."""

import os

import pytest
import zope.testing.cleanup
from zope.principalregistry.principalregistry import Principal

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import adduser
from zope.pipeline.security import credentials
from zope.pipeline.security.passwords import NEW_PASSWORD_MANAGER
from zope.pipeline.security.passwords import hash_password
from zope.pipeline.serving.startup import guard_known_passwords
from zope.pipeline.serving.startup import load_application

from tests.conftest import ROOT

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
principals_zcml = ../var/principals.zcml
development = true
'''
PASSWORD = 'correct horse battery'


@pytest.fixture
def ini(tmp_path):
    """A project's layout: etc/site.ini and var/."""
    (tmp_path / 'etc').mkdir()
    (tmp_path / 'var').mkdir()
    path = tmp_path / 'etc' / 'site.ini'
    path.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    return str(path)


@pytest.fixture
def verifications(monkeypatch):
    """The password verifications made (each a bcrypt one, 0.25 s)."""
    made = []
    validate = Principal.validate

    def counted(principal, password):
        made.append(principal.getLogin())
        return validate(principal, password)
    monkeypatch.setattr(Principal, 'validate', counted)
    return made


def load(ini):
    """A new process's load of the site."""
    zope.testing.cleanup.cleanUp()
    return load_application(ini)


def start(ini):
    """What a server process does with the site: load it, check it."""
    application, publisher = load(ini)
    guard_known_passwords(application, publisher, '127.0.0.1', ini)
    return publisher


def add_user(ini, login, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    assert zope_pipeline(['adduser', ini, '--login', login]) == 0


def write_entry(ini, login, password):
    """A principal added to the file by hand (no record of its check)."""
    path = adduser.principals_path(ini)
    principals = adduser.read_principals(path)
    principals[login] = {
        'id': adduser.PRINCIPAL_PREFIX + login, 'title': login,
        'login': login, 'password': hash_password(password),
        'password_manager': NEW_PASSWORD_MANAGER, 'permissions': []}
    adduser.write_principals(path, principals)


def test_starting_checks_no_password_adduser_set(
        clean_zope, ini, monkeypatch, verifications):
    for login in ('boss', 'editor', 'writer'):
        add_user(ini, login, monkeypatch)
    start(ini)
    assert verifications == []


def test_a_hand_written_entry_is_checked_once(
        clean_zope, ini, monkeypatch, verifications):
    add_user(ini, 'boss', monkeypatch)
    write_entry(ini, 'editor', 'another long password')
    start(ini)
    assert set(verifications) == {'editor'}
    checked = len(verifications)
    start(ini)
    assert len(verifications) == checked


def test_a_hand_written_known_password_is_still_refused(
        clean_zope, ini, monkeypatch, verifications):
    add_user(ini, 'boss', monkeypatch)
    write_entry(ini, 'intern', 'changeme')
    counts = []
    for _ in range(2):  # found by its check, then by the record
        application, publisher = load(ini)
        with pytest.raises(credentials.KnownPasswordError,
                           match="'intern' has a known password"):
            guard_known_passwords(application, publisher, '192.0.2.1', ini)
        counts.append(len(verifications))
    assert set(verifications) == {'intern'} and counts[0] == counts[1]


def test_a_changed_password_is_checked_again(
        clean_zope, ini, monkeypatch, verifications):
    add_user(ini, 'boss', monkeypatch)
    write_entry(ini, 'boss', 'password')
    application, publisher = load(ini)
    with pytest.raises(credentials.KnownPasswordError):
        guard_known_passwords(application, publisher, '192.0.2.1', ini)
    assert set(verifications) == {'boss'}


def test_the_sample_administrator_is_known_and_checked_once(
        clean_zope, tmp_path, verifications):
    (tmp_path / 'etc').mkdir()
    (tmp_path / 'var').mkdir()
    ini = tmp_path / 'etc' / 'dev.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'site_zcml = %s\ndevelopment = true\n'
                   % os.path.join(ROOT, 'etc', 'site-dev.zcml'))
    for _ in range(2):
        publisher = start(str(ini))
        assert credentials.known_password_problems(
            [], publisher.checked_passwords) == [
            "the administrator 'admin' has a known password (defined in "
            "the site ZCML or its principals file)"]
    assert verifications == ['admin']  # admin/admin: found at once


def test_a_record_that_is_not_one_is_ignored(tmp_path):
    path = tmp_path / 'checked-passwords.json'
    for text in ('not json', '[1, 2]', '{"checked": [1]}',
                 '{"checked": {"a": true, "b": "yes"}}'):
        path.write_text(text)
        assert credentials.read_checked(str(path)) in ({}, {'a': True})
    assert credentials.read_checked(str(tmp_path / 'absent')) == {}


def test_a_record_that_cannot_be_written_is_left(tmp_path, caplog):
    caplog.set_level('DEBUG', 'zope.pipeline.security.credentials')
    credentials.write_checked(str(tmp_path / 'absent' / 'record'), {})
    assert 'Cannot record checked passwords' in caplog.text
    assert not (tmp_path / 'absent').exists()


def test_no_record_without_a_state_directory(tmp_path):
    assert credentials.checked_passwords_path(
        str(tmp_path / 'etc' / 'site.ini')) is None
    credentials.record_checked_entries(None, [('a', 'b', 'c')])


def test_an_overridden_principal_is_checked_every_time():
    action = {'discriminator': ('principal', 'p'),
              'args': ('p', 't', '', 'login', b'x', 'Plain Text')}
    assert credentials.defined_principals([action]) == {
        'p': ('login', 'Plain Text', b'x')}
    assert credentials.defined_principals([action, action]) == {}
    assert credentials.defined_principals(
        [('not', 'a dict'), {'discriminator': None}]) == {}
