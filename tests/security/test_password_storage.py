"""Stored passwords: one round of salted SHA-1 (``{SSHA}``) is guessed at
billions a second from a stolen principals file, so new passwords are
bcrypt hashes (zope.password's BCRYPT manager); existing ``{SSHA}``
entries still log in, and running ``zope-pipeline adduser`` again for
their login rehashes them."""

import base64
import os
import subprocess

import pytest
import webtest
from zope.password.password import SSHAPasswordManager

from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import adduser

from tests.conftest import ROOT

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %s
principals_zcml = var/principals.zcml
open_root.populate = zope.pipeline.sample.content.populate
'''
PASSWORD = 'correct horse battery'
OLD_PASSWORD = 'an old ssha password'
#: What an older adduser wrote: the password manager SSHA.
OLD_ENTRY = '''\
<configure xmlns="http://namespaces.zope.org/zope">
  <principal id="zope.pipeline.principals.old" title="old" login="old"
      password_manager="SSHA" password="%s" />
  <grant permission="zope.ManageContent"
         principal="zope.pipeline.principals.old" />
</configure>
'''


@pytest.fixture
def ini(tmp_path, monkeypatch):
    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', PASSWORD)
    path = tmp_path / 'site.ini'
    path.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    return str(path)


def principals_file(ini):
    return os.path.join(os.path.dirname(ini), 'var', 'principals.zcml')


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


def edit_status(ini, login, password):
    import zope.testing.cleanup

    from zope.pipeline.commands import load_publisher
    from zope.pipeline.zodb import storage
    zope.testing.cleanup.cleanUp()
    try:
        app = webtest.TestApp(load_publisher(ini),
                              extra_environ={'REMOTE_ADDR': '127.0.0.1'})
        return app.get('/folder/page/@@edit', status='*',
                       extra_environ=basic(login, password)).status_int
    finally:
        storage.close_all()
        zope.testing.cleanup.cleanUp()


def test_new_passwords_are_hashed_with_bcrypt(clean_zope, ini):
    assert zope_pipeline(['adduser', ini, '--login', 'boss']) == 0
    boss = adduser.read_principals(principals_file(ini))['boss']
    assert boss['password_manager'] == 'BCRYPT'
    assert boss['password'].startswith('{BCRYPT}$2b$12$')
    with open(principals_file(ini)) as stream:
        assert '{SSHA}' not in stream.read()
    assert edit_status(ini, 'boss', PASSWORD) == 200
    assert edit_status(ini, 'boss', 'wrong') == 401


def test_the_sample_administrator_is_hashed_with_bcrypt():
    with open(os.path.join(ROOT, 'src', 'zope', 'pipeline', 'sample',
                           'admin.zcml')) as stream:
        text = stream.read()
    assert 'password_manager="BCRYPT"' in text
    assert 'password="{BCRYPT}$2b$12$' in text
    assert 'SSHA' not in text


def test_existing_ssha_entries_still_log_in_and_adduser_rehashes_them(
        clean_zope, ini, monkeypatch):
    os.makedirs(os.path.dirname(principals_file(ini)))
    old_hash = SSHAPasswordManager().encodePassword(OLD_PASSWORD)
    with open(principals_file(ini), 'w') as stream:
        stream.write(OLD_ENTRY % old_hash.decode('ascii'))
    os.chmod(principals_file(ini), 0o600)
    assert zope_pipeline(['adduser', ini, '--login', 'boss']) == 0
    principals = adduser.read_principals(principals_file(ini))
    assert principals['old']['password_manager'] == 'SSHA'
    assert edit_status(ini, 'old', OLD_PASSWORD) == 200
    assert edit_status(ini, 'boss', PASSWORD) == 200

    monkeypatch.setenv('ZOPE_PIPELINE_PASSWORD', OLD_PASSWORD)
    assert zope_pipeline(['adduser', ini, '--login', 'old']) == 0
    old = adduser.read_principals(principals_file(ini))['old']
    assert old['password_manager'] == 'BCRYPT'
    assert old['password'].startswith('{BCRYPT}')
    assert edit_status(ini, 'old', OLD_PASSWORD) == 200


#: An 84-byte passphrase (bcrypt takes at most 72 bytes).
LONG_PASSPHRASE = ('correct horse battery staple ' * 2
                   + 'and a long tail of words..')


@pytest.mark.parametrize('passphrase, fits', [
    (LONG_PASSPHRASE, False),
    (LONG_PASSPHRASE[:72], True),
    ('é' * 37, False),  # 37 characters, 74 bytes of UTF-8
], ids=['84-bytes', '72-bytes', '74-bytes-of-utf8'])
def test_adduser_with_a_passphrase_too_long_for_bcrypt(tmp_path, passphrase,
                                                       fits):
    """bcrypt refuses passwords over 72 bytes: adduser says so in one
    line, without a traceback, and writes nothing."""
    from tests.unit.test_cli import console_script
    path = tmp_path / 'site.ini'
    path.write_text(INI % os.path.join(ROOT, 'etc', 'site.zcml'))
    done = subprocess.run(
        [console_script(), 'adduser', str(path), '--login', 'boss'],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, ZOPE_PIPELINE_PASSWORD=passphrase))
    if fits:
        assert done.returncode == 0, done.stderr
        assert os.path.exists(principals_file(str(path)))
        return
    assert done.returncode == 1
    assert 'Traceback' not in done.stderr
    assert done.stderr.strip().splitlines() == [
        'The password must be at most 72 bytes long (UTF-8): bcrypt does '
        'not take longer ones (this one has %d).'
        % len(passphrase.encode('utf-8'))]
    assert not os.path.exists(principals_file(str(path)))
