"""Issue 43, point 3: root adds an administrator to a site that
`zope-pipeline serve --mod-wsgi` (run by root) serves, then restarts it
with `zope-pipeline restart`, the rolling restart.  adduser leaves the
principals file root:<the daemons' group> 0640, so the new daemon
processes (www-data) read it: the restart succeeds, every daemon process
is replaced, and the new administrator is known without any other step.
(adduser as root used to write it root:root 0600: the successors could
not read it and the restart stopped at the first one.)"""

import base64
import grp
import os
import secrets
import stat

import pytest

from zope.pipeline.serving import ownership

from tests.integration import support

pytestmark = pytest.mark.integration

#: A page only the holders of zope.pipeline.ViewMetrics see, which
#: adduser grants by default.
ADMIN_PAGE = '/@@metrics.html'


def adduser(site, login, password):
    return support.zope_pipeline(
        'adduser', site.ini, '--login', login,
        env={'ZOPE_PIPELINE_PASSWORD': password})


def as_user(port, login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return support.request(port, ADMIN_PAGE, headers={
        'Authorization': 'Basic ' + token.decode()})[0]


def test_restart_after_adduser_as_root_serves_the_new_administrator():
    support.need_mod_wsgi()
    if os.geteuid() != 0:
        pytest.skip('the owner story of root and its daemon user')
    user, group = ownership.run_as()
    passwords = {login: secrets.token_urlsafe(18)
                 for login in ('boss', 'editor')}
    with support.scratch_directory() as directory:
        # The layout of a created project: the SQLite files in var/data,
        # the principals file in var/, root's.
        site = support.Site(directory, support.SQLITE_ZCONFIG % {
            'var': os.path.join(directory, 'var', 'data')},
            {'principals_zcml': '%(here)s/var/principals.zcml'})
        principals = os.path.join(site.var, 'principals.zcml')
        done = adduser(site, 'boss', passwords['boss'])
        assert done.returncode == 0, done.stderr
        server = support.ModWsgiServer(site, processes=2, threads=2)
        with support.running(server):
            assert as_user(server.port, 'boss', passwords['boss']) == 200
            assert as_user(server.port, 'editor', passwords['editor']) == 401
            done = adduser(site, 'editor', passwords['editor'])
            assert done.returncode == 0, done.stderr
            info = os.stat(principals)
            assert (info.st_uid, grp.getgrgid(info.st_gid).gr_name,
                    stat.S_IMODE(info.st_mode)) == (0, group, 0o640)
            before = support.daemon_pids(server.port)
            restarted = support.zope_pipeline(
                'restart', site.ini, '--server-root', server.server_root,
                timeout=300)
            after = support.daemon_pids(server.port)
            editor = as_user(server.port, 'editor', passwords['editor'])
            boss = as_user(server.port, 'boss', passwords['boss'])
            log = server.log()
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert 'replaced by' in restarted.stdout
    assert len(before) == 2 and not before & after, (before, after)
    assert (editor, boss) == (200, 200)
    assert 'Traceback' not in log, log
