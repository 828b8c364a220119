"""The failed-login limits hold for the whole site under mod_wsgi: the
daemon processes of `serve --mod-wsgi` (its process group and the admin
process group, which serves `@@edit`) share the counts in the server's
run directory.  They were per process: 10 guesses per login and process,
30 under `make serve`.
"""

import base64
import concurrent.futures
import os

import pytest

from zope.pipeline.serving.modwsgi_express import run_directory

from tests.integration import support
from tests.integration.test_mod_wsgi_sqlite import pids_serving

pytestmark = pytest.mark.integration

EDIT = '/folder/page/@@edit'


def guess(port, number):
    """A wrong password for admin, at the edit page (the admin process
    group) or the public page (the site's group: a failed login there
    goes on anonymously, 200)."""
    token = base64.b64encode(b'admin:guess-%d' % number).decode()
    path = (EDIT, support.PAGE)[number % 2]
    status, headers, _ = support.request(
        port, path, headers={'Authorization': 'Basic ' + token,
                             'Connection': 'close'})
    return status, headers.get('X-Pipeline-Pid')


def test_login_limit_holds_across_two_daemon_processes():
    support.need_mod_wsgi()
    with support.sqlite_site() as site:
        server = support.ModWsgiServer(site, processes=2, threads=1)
        with support.running(server):
            seen, _ = pids_serving(server.port)
            assert len(seen) == 2, seen
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                answers = list(pool.map(lambda number: guess(
                    server.port, number), range(24)))
            run = run_directory(server.server_root)
            stores = [entry for entry in os.listdir(run)
                      if entry.startswith('failed-logins-')]
    statuses = [status for status, _ in answers]
    checked = len(answers) - statuses.count(429)
    assert set(statuses) == {200, 401, 429}, answers
    # 10 (authenticate.max_failures_per_login) for the site, plus at most
    # the guesses in flight in the other threads when the 10th failed
    assert 10 <= checked <= 13, answers
    assert statuses.count(429) == 24 - checked
    assert len({pid for _, pid in answers}) >= 2, answers
    assert len(stores) == 1, stores
