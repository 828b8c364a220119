"""zope.pipeline.serving.layout: who can change a path (each directory on its
way,
each symbolic link), and the refusals that keep root's files out of the
daemon user's reach."""

import os
import pwd
import stat

import pytest

from zope.pipeline.serving import layout

from tests.conftest import need

#: The daemon user of these tests: nobody (no file here is its own unless
#: a test gives it one).
NOBODY = layout.Daemon('nobody', 'nogroup', 65534, 65534,
                       frozenset({65534}))


def make(path, mode=0o755):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, mode)
    return str(path)


def test_a_directory_anyone_may_write_on_the_way_is_found(tmp_path):
    make(tmp_path / 'open', 0o777)
    target = make(tmp_path / 'open' / 'server')
    assert layout.first_changeable(target, NOBODY) == str(tmp_path / 'open')


def test_a_group_writable_directory_counts_for_the_daemons_group(tmp_path):
    directory = make(tmp_path / 'shared', 0o775)
    info = os.lstat(directory)
    group_member = layout.Daemon('nobody', 'nogroup', 65534, 65534,
                                 frozenset({info.st_gid}))
    assert layout.can_change(info, group_member)
    assert not layout.can_change(info, NOBODY._replace(
        groups=frozenset({info.st_gid + 1})))


def test_a_sticky_directory_protects_what_the_daemon_does_not_own(
        tmp_path):
    make(tmp_path / 'tmp', 0o1777)
    kept = make(tmp_path / 'tmp' / 'roots')
    assert layout.first_changeable(kept, NOBODY) is None
    if os.geteuid() == 0:
        os.chown(kept, NOBODY.uid, NOBODY.gid)
        assert layout.first_changeable(kept, NOBODY) == \
            str(tmp_path / 'tmp')


def test_the_path_itself_counts(tmp_path):
    path = tmp_path / 'envvars'
    path.write_text('')
    os.chmod(path, 0o666)
    assert layout.first_changeable(str(path), NOBODY) == str(path)
    os.chmod(path, 0o644)
    assert layout.first_changeable(str(path), NOBODY) is None


def test_a_symbolic_link_is_followed_and_its_target_checked(tmp_path):
    make(tmp_path / 'open', 0o777)
    target = make(tmp_path / 'open' / 'real')
    safe = make(tmp_path / 'safe')
    os.symlink(target, os.path.join(safe, 'link'))
    assert layout.first_changeable(os.path.join(safe, 'link', 'x'),
                                   NOBODY) == str(tmp_path / 'open')
    closed = make(tmp_path / 'closed')
    os.symlink(closed, os.path.join(safe, 'fine'))
    (tmp_path / 'closed' / 'file').write_text('')
    assert layout.first_changeable(os.path.join(safe, 'fine', 'file'),
                                   NOBODY) is None


def test_a_broken_or_looping_link_stops_the_walk(tmp_path):
    safe = make(tmp_path / 'safe')
    os.symlink(os.path.join(safe, 'nowhere'), os.path.join(safe, 'broken'))
    assert layout.first_changeable(os.path.join(safe, 'broken', 'x'),
                                   NOBODY) is None
    os.symlink('loop', os.path.join(safe, 'loop'))
    assert layout.first_changeable(os.path.join(safe, 'loop'), NOBODY) == \
        os.path.join(safe, 'loop')


def test_what_does_not_exist_is_decided_by_its_parent(tmp_path):
    make(tmp_path / 'open', 0o777)
    assert layout.first_changeable(str(tmp_path / 'open' / 'new'),
                                   NOBODY) == str(tmp_path / 'open')
    assert layout.first_changeable(str(tmp_path / 'new'), NOBODY) is None


def test_what_the_daemon_can_change_is_refused_naming_it(tmp_path):
    make(tmp_path / 'open', 0o777)
    path = str(tmp_path / 'open' / 'httpd.conf')
    with pytest.raises(SystemExit) as raised:
        layout.refuse_changeable([path], NOBODY)
    assert 'nobody can change %s, and root reads or runs %s' % (
        tmp_path / 'open', path) in str(raised.value)


def test_a_storage_directory_must_not_hold_what_root_reads(tmp_path):
    var = str(tmp_path / 'var')
    layout.refuse_storage_holding([var + '/data'], [var + '/mod_wsgi-80'],
                                  NOBODY)
    with pytest.raises(SystemExit, match='is given to nobody'):
        layout.refuse_storage_holding([var], [var + '/mod_wsgi-80'],
                                      NOBODY)


def test_a_database_above_its_new_directory_is_named(tmp_path):
    data = tmp_path / 'var' / 'data'
    layout.refuse_database_left_above([str(data)])
    make(tmp_path / 'var')
    (tmp_path / 'var' / 'main.sqlite3').write_text('')
    with pytest.raises(SystemExit, match='mkdir -m 0700'):
        layout.refuse_database_left_above([str(data)])
    make(data)
    (data / 'main.sqlite3').write_text('')
    layout.refuse_database_left_above([str(data)])


def test_a_storage_tree_is_made_private(tmp_path):
    data = make(tmp_path / 'data', 0o755)
    make(tmp_path / 'data' / 'blobs', 0o755)
    (tmp_path / 'data' / 'main.sqlite3').write_text('')
    os.chmod(tmp_path / 'data' / 'main.sqlite3', 0o644)
    os.symlink('/etc/passwd', os.path.join(data, 'link'))
    layout.make_private_tree(data)
    modes = {name: stat.S_IMODE(os.lstat(os.path.join(data, name)).st_mode)
             for name in ('blobs', 'main.sqlite3')}
    assert modes == {'blobs': 0o700, 'main.sqlite3': 0o600}
    assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
    assert stat.S_IMODE(os.stat('/etc/passwd').st_mode) == 0o644


def test_a_file_of_another_user_is_left_alone(tmp_path, monkeypatch):
    path = tmp_path / 'data' / 'theirs'
    path.parent.mkdir(mode=0o755)
    path.write_text('')
    os.chmod(path, 0o644)
    monkeypatch.setattr(os, 'geteuid', lambda: os.stat(path).st_uid + 1)
    layout.make_private_tree(str(path.parent), None)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o755


def test_a_file_replaced_while_the_tree_is_walked_is_left_alone(
        tmp_path, monkeypatch):
    """Between the listing and the open, the file became another one (or
    a link): whatever is there now is not the file listed."""
    data = tmp_path / 'data'
    data.mkdir()
    (data / 'file').write_text('')
    (data / 'other').write_text('')
    os.chmod(data / 'other', 0o644)
    real_open = os.open

    def swapping_open(name, flags, *args, **kwargs):
        if name == 'file':
            os.replace(data / 'other', data / 'file')
        return real_open(name, flags, *args, **kwargs)
    monkeypatch.setattr(os, 'open', swapping_open)
    layout.make_private_tree(str(data), None)
    assert stat.S_IMODE(os.stat(data / 'file').st_mode) == 0o644


def test_links_in_place_of_the_site_files_are_refused(tmp_path):
    target = make(tmp_path / 'elsewhere')
    for name in ('storage', 'var', 'secret'):
        os.symlink(target, str(tmp_path / name))
    with pytest.raises(SystemExit, match='symbolic link'):
        layout.make_private_tree(str(tmp_path / 'storage'))
    with pytest.raises(SystemExit, match='symbolic link'):
        layout.prepare_state_directory(str(tmp_path / 'var'), None,
                                       [str(tmp_path / 'var' / 'data')])
    with pytest.raises(SystemExit, match='symbolic link'):
        layout.share_secret(str(tmp_path / 'secret'), NOBODY)


def test_the_state_directory_is_left_alone_unless_the_site_is_in_it(
        tmp_path):
    var = make(tmp_path / 'var', 0o755)
    layout.prepare_state_directory(var, None, [str(tmp_path / 'other')])
    assert stat.S_IMODE(os.stat(var).st_mode) == 0o755
    layout.prepare_state_directory(var, None, [var + '/data'])
    assert stat.S_IMODE(os.stat(var).st_mode) == 0o700


def test_a_server_root_given_on_the_command_line_is_refused_not_removed(
        tmp_path):
    root = make(tmp_path / 'apache', 0o777)
    with pytest.raises(SystemExit, match='can change the server root'):
        layout.prepare_server_root(root, NOBODY, generated=False)
    assert os.path.isdir(root)


def test_a_generated_server_root_that_is_a_link_is_replaced(tmp_path):
    target = make(tmp_path / 'elsewhere')
    (tmp_path / 'elsewhere' / 'keep').write_text('')
    root = str(tmp_path / 'var' / 'mod_wsgi-80')
    make(tmp_path / 'var')
    os.symlink(target, root)
    layout.prepare_server_root(root, NOBODY, generated=True)
    assert not os.path.islink(root) and os.path.isdir(root)
    assert os.listdir(target) == ['keep']


def test_the_daemons_own_directories_in_the_server_root_are_its(tmp_path):
    root = make(tmp_path / 'apache')
    make(tmp_path / 'apache' / 'run', 0o777)
    import socket
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(os.path.join(root, 'wsgi.1.sock'))
        os.chmod(os.path.join(root, 'wsgi.1.sock'), 0o777)
        assert not layout.changeable_server_root(root, NOBODY)
    make(tmp_path / 'apache' / 'htdocs', 0o777)
    assert layout.changeable_server_root(root, NOBODY)


def test_the_principals_file_is_checked_before_root_loads_it(tmp_path):
    make(tmp_path / 'open', 0o777)
    (tmp_path / 'open' / 'principals.zcml').write_text('<configure/>')
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'principals_zcml = open/principals.zcml\n')
    layout.check_before_loading(str(ini), 'main', None)
    with pytest.raises(SystemExit, match='principals.zcml'):
        layout.check_before_loading(str(ini), 'main', NOBODY)
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    layout.check_before_loading(str(ini), 'main', NOBODY)


def test_not_root_has_no_daemon():
    assert layout.daemon_of(None, None) is None
    daemon = layout.daemon_of('www-data', 'www-data')
    assert daemon.uid == pwd.getpwnam('www-data').pw_uid
    assert daemon.gid in daemon.groups


def test_the_root_directory_itself_is_walked():
    assert layout.first_changeable('/', NOBODY) is None


def test_a_secret_of_the_daemon_user_is_taken_back_readable_by_its_group(
        tmp_path, capsys):
    if os.geteuid() != 0:
        pytest.skip('giving a file to root needs root')
    www_data = layout.daemon_of('www-data', 'www-data')
    path = tmp_path / 'principals.zcml'
    path.write_text('<configure/>')
    os.chown(path, www_data.uid, www_data.gid)
    os.chmod(path, 0o600)
    layout.share_secret(str(path), www_data)
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == \
        (0, www_data.gid, 0o640)
    assert 'belonged to www-data' in capsys.readouterr().out
    layout.share_secret(str(path), www_data)
    assert capsys.readouterr().out == ''


def test_waitress_as_root_binds_before_it_drops(monkeypatch):
    from zope.pipeline.commands import serve
    dropped = []

    def drop(daemon):
        dropped.append((daemon, [sock.getsockname()[0]
                                 for sock in bound]))
    bound = []
    real_socket = __import__('socket').socket

    def recording_socket(*args):
        sock = real_socket(*args)
        bound.append(sock)
        return sock
    monkeypatch.setattr('socket.socket', recording_socket)
    monkeypatch.setattr(serve, 'drop_privileges', drop)
    options = serve.bind_then_drop(
        {'host': '127.0.0.1', 'port': 0, 'threads': 4}, NOBODY)
    try:
        assert options == {'threads': 4, 'sockets': bound}
        # The address was bound when the privileges were dropped.
        assert dropped == [(NOBODY, ['127.0.0.1'])]
    finally:
        for sock in bound:
            sock.close()


def test_a_state_directory_that_is_the_storage_is_the_daemons(
        tmp_path, monkeypatch):
    """A ZConfig keeping SQLite in var/ itself, served by waitress: var/
    is a storage directory, made private as one (not taken back)."""
    var = make(tmp_path / 'var', 0o755)
    monkeypatch.setattr(layout, 'storage_directories', lambda publisher: [
        var])
    monkeypatch.setattr(layout, 'root_paths', lambda *args: [])
    prepared = []
    monkeypatch.setattr(layout, 'prepare_state_directory',
                        lambda *args: prepared.append(args))
    layout.prepare_site_files(str(tmp_path / 'etc' / 'site.ini'), None,
                              None)
    assert prepared == []
    assert stat.S_IMODE(os.stat(var).st_mode) == 0o700


# -- commands that open the database, run by root

SQLITE_ZCONFIG = '''\
%%import relstorage
<zodb main>
  <relstorage>
    <sqlite3>
      data-dir %s
    </sqlite3>
  </relstorage>
</zodb>
'''

MYSQL_ZCONFIG = '''\
%%import relstorage
<zodb main>
  <relstorage>
    <mysql>
      db site
      user site
      %s
    </mysql>
  </relstorage>
</zodb>
'''


def sqlite_site(tmp_path, data_owner=None):
    """A site in ``tmp_path``: its ini, its var/data (given to
    ``data_owner``, a Daemon)."""
    data = make(tmp_path / 'var' / 'data', 0o700)
    if data_owner is not None:
        os.chown(data, data_owner.uid, data_owner.gid)
    return site_ini(tmp_path, SQLITE_ZCONFIG % data)


def site_ini(tmp_path, zconfig):
    (tmp_path / 'zodb.conf').write_text(zconfig)
    ini = tmp_path / 'site.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'open_root.zodb_config = %(here)s/zodb.conf\n')
    return str(ini)


@pytest.fixture
def as_root(monkeypatch):
    """Root, whose drop is recorded (never made: the test process keeps
    its user)."""
    need(os.geteuid() == 0, 'files of other users need root')
    dropped = []
    monkeypatch.setattr(layout, 'drop_privileges', dropped.append)
    monkeypatch.setattr(os, 'umask', lambda mask: 0o022)
    return dropped


def test_a_database_only_root_can_change_is_opened_as_root(tmp_path,
                                                           as_root):
    assert layout.become_database_user(sqlite_site(tmp_path)) is None
    assert as_root == []


def test_a_database_in_memory_or_not_root_changes_nothing(
        tmp_path, as_root, monkeypatch):
    ini = tmp_path / 'memory.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n')
    assert layout.become_database_user(str(ini)) is None
    assert layout.become_database_user(str(tmp_path / 'none.ini')) is None
    monkeypatch.setattr(os, 'geteuid', lambda: 1000)
    assert layout.become_database_user(sqlite_site(tmp_path, NOBODY)) is \
        None
    assert as_root == []


def test_root_becomes_the_owner_of_the_database(open_tmp, as_root, capsys):
    ini = sqlite_site(open_tmp, NOBODY)
    (open_tmp / 'script.py').write_text('')
    daemon = layout.become_database_user(
        ini, reads=[str(open_tmp / 'script.py'),
                    str(open_tmp / 'not-yet.log')])
    assert (daemon.user, daemon.uid) == ('nobody', NOBODY.uid)
    assert as_root == [daemon]
    assert 'running as nobody' in capsys.readouterr().err


def test_two_users_who_can_change_the_database_are_refused(
        open_tmp, as_root):
    ini = sqlite_site(open_tmp, NOBODY)
    www_data = pwd.getpwnam('www-data')
    os.chown(open_tmp / 'var', www_data.pw_uid, www_data.pw_gid)
    with pytest.raises(SystemExit, match='www-data, nobody can all '
                       'change.*runuser -u USER --'):
        layout.become_database_user(ini)
    assert as_root == []


def test_a_database_of_a_uid_without_a_name_is_refused(tmp_path, as_root):
    ini = sqlite_site(tmp_path, NOBODY._replace(uid=54321, gid=54321))
    with pytest.raises(SystemExit, match='uid 54321, which has no user'):
        layout.become_database_user(ini)
    assert as_root == []


def test_an_ini_the_database_user_can_change_is_refused(open_tmp, as_root):
    ini = sqlite_site(open_tmp, NOBODY)
    os.chmod(ini, 0o666)
    with pytest.raises(SystemExit, match='nobody can change %s' % ini):
        layout.become_database_user(ini)
    assert as_root == []


def test_what_the_database_user_cannot_read_is_refused_with_the_command(
        open_tmp, as_root, monkeypatch):
    ini = sqlite_site(open_tmp, NOBODY)
    with open(ini, 'a') as stream:
        stream.write('principals_zcml = principals.zcml\n')
    (open_tmp / 'principals.zcml').write_text('<configure/>')
    os.chmod(open_tmp / 'principals.zcml', 0o600)
    monkeypatch.setattr('sys.argv', ['zope-pipeline', 'explain', ini, '/'])
    with pytest.raises(SystemExit) as raised:
        layout.become_database_user(ini)
    assert 'nobody cannot read %s' % (open_tmp / 'principals.zcml') in \
        str(raised.value)
    assert 'runuser -u nobody -- zope-pipeline explain %s /' % ini in \
        str(raised.value)
    assert as_root == []


def test_without_a_www_data_user_only_owners_count(tmp_path, as_root,
                                                   monkeypatch):
    from zope.pipeline.serving import ownership
    monkeypatch.setattr(ownership, 'DEFAULT_USER', 'no-such-user-here')
    assert layout.become_database_user(sqlite_site(tmp_path)) is None


def test_who_can_read_a_network_databases_credentials_can_change_it(
        open_tmp, as_root):
    """MySQL: the option file serve shares with the daemon's group (root's,
    0640), or the ZConfig file when it holds the password."""
    www_data = layout.daemon_of_uid(pwd.getpwnam('www-data').pw_uid,
                                    pwd.getpwnam('www-data').pw_gid)
    option_file = open_tmp / 'my.cnf'
    option_file.write_text('[client]\npassword = x\n')
    os.chmod(option_file, 0o600)
    site_ini(open_tmp, MYSQL_ZCONFIG % ('read_default_file %s'
                                       % option_file))
    config = str(open_tmp / 'zodb.conf')
    assert layout.database_users(config, www_data) == []
    os.chown(option_file, 0, www_data.gid)
    os.chmod(option_file, 0o640)
    assert [user.user for user in layout.database_users(config, www_data)] \
        == ['www-data']
    site_ini(open_tmp, MYSQL_ZCONFIG % 'passwd x')
    assert layout.database_paths(config)[1] == [config]
    os.chmod(config, 0o600)
    assert layout.database_users(config, www_data) == []


def test_a_uid_or_gid_without_a_name():
    assert layout.daemon_of_uid(54321, 0) is None
    assert layout.daemon_of_uid(0, 54321).group == '54321'
    assert layout.group_members(54321) == []
