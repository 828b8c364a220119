"""www-data -> root through a storage the root guard could not read.

A command root runs on a site (``pack``, ``run``, ``shell``...) becomes
the user who can change the database before it unpickles anything
(serving.layout.become_database_user).  It judged a storage by its own
ZConfig section: a ``<demostorage>`` (or ``<blobstorage>``) wrapping a
file storage www-data writes showed no file, and a ``<zeoclient>``
(anyone who reaches the ZEO server writes its pickles) showed nothing
at all, so root opened them as root."""

import os
import pwd

import pytest

from zope.pipeline.serving import layout

from tests.unit.test_layout import as_root  # noqa: F401 - a fixture
from tests.unit.test_layout import site_ini


def test_root_unpickles_a_demostorage_over_www_datas_file_storage(
        open_tmp, as_root):
    www_data = pwd.getpwnam('www-data')
    data = open_tmp / 'data'
    data.mkdir()
    os.chown(data, www_data.pw_uid, www_data.pw_gid)
    ini = site_ini(open_tmp, '<zodb>\n  <demostorage>\n    <filestorage>\n'
                         '      path %s/Data.fs\n    </filestorage>\n'
                         '  </demostorage>\n</zodb>\n' % data)
    daemon = layout.become_database_user(ini)
    assert daemon is not None and daemon.user == 'www-data'
    assert as_root == [daemon]


def test_root_unpickles_a_zeo_database_whoever_reaches_it_writes(
        open_tmp, as_root):
    ini = site_ini(open_tmp, '<zodb>\n  <zeoclient>\n    server 127.0.0.1:9\n'
                         '  </zeoclient>\n</zodb>\n')
    daemon = layout.become_database_user(ini)
    assert daemon is not None and daemon.user == 'www-data'
    assert as_root == [daemon]


def test_without_a_daemon_user_a_zeo_database_is_refused(
        open_tmp, as_root, monkeypatch):
    from zope.pipeline.serving import ownership
    monkeypatch.setattr(ownership, 'DEFAULT_USER', 'no-such-user-here')
    monkeypatch.setattr(layout, 'DEFAULT_USER', 'no-such-user-here')
    ini = site_ini(open_tmp, '<zodb>\n  <zeoclient>\n    server 127.0.0.1:9\n'
                         '  </zeoclient>\n</zodb>\n')
    with pytest.raises(SystemExit, match='Root cannot tell who can change '
                                         r'the database .*ZEOClient'):
        layout.become_database_user(ini)
    assert as_root == []
