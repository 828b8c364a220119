"""A mod_wsgi daemon whose database refuses it at its start (a wrong
password, or before `zope-pipeline init-db`): its requests get 503 with a
page saying the site is unavailable, the log says once per process what
to change, the site's ZCML never runs twice (no DuplicateId), and once
the password is right the same processes serve, without a restart."""

import os
import re
import time

import pytest

from zope.pipeline.commands.init_db import write_option_file

from tests.integration import support


def rewrite_password(path, password):
    """Write the option file again, keeping its owner and mode (root's,
    readable by the server's group, as `zope-pipeline serve` made it)."""
    info = os.stat(path)
    write_option_file(path, password)
    os.chown(path, info.st_uid, info.st_gid)
    os.chmod(path, info.st_mode)

pytestmark = pytest.mark.integration


class StartingServer(support.ModWsgiServer):
    """Up as soon as it answers at all (here: 503)."""

    def ready(self, status):
        return status in (200, 503)


def test_a_daemon_refused_by_the_database_answers_503_and_recovers():
    support.need_mod_wsgi()
    support.need_mysql()
    with support.scratch_directory() as directory, \
            support.mysql_database() as database:
        site = support.mysql_site(directory, database)
        result = support.init_db(site, database)
        assert result.returncode == 0, result.stderr
        write_option_file(site.option_file, 'not-the-password')
        server = StartingServer(site, processes=2, threads=2)
        with support.running(server):
            answers = [support.request(server.port, support.PAGE)
                       for _ in range(6)]
            log = server.log()
            rewrite_password(site.option_file, database['password'])
            deadline = time.monotonic() + 60
            statuses = set()
            while time.monotonic() < deadline and statuses != {200}:
                statuses = {support.request(server.port, support.PAGE)[0]
                            for _ in range(6)}
                time.sleep(0.5)
            log = server.log()
    assert {status for status, headers, body in answers} == {503}, log
    status, headers, body = answers[0]
    assert 'Site unavailable' in body
    assert 'Traceback' not in body and 'Access denied' not in body
    assert headers['Retry-After']
    assert 'DuplicateId' not in log
    refusals = re.findall(r'Process (\d+) cannot open its database '
                          r'\(OperationalError: .*Access denied', log)
    # Once per process, however many requests it answered meanwhile.
    assert refusals and len(refusals) == len(set(refusals)), log
    assert 'zope-pipeline init-db' in log
    assert 'read_default_file' in log
    assert statuses == {200}, log
