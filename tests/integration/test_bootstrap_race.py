"""Two processes open a new database at the same moment (as two mod_wsgi
daemon processes starting together do): exactly one creates the root
application with the sample content, and both then see that one."""

import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from tests.integration import support

pytestmark = pytest.mark.integration

CONTENDERS = 2


def race(config_path):
    start_at = time.time() + 3
    processes = [subprocess.Popen(
        [sys.executable, '-m', 'tests.integration.race_worker', config_path,
         str(start_at)], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for _ in range(CONTENDERS)]
    results = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    return results


def assert_one_root(results):
    assert [result['created'] for result in results].count(True) == 1
    assert len({result['oid'] for result in results}) == 1
    assert [result['items'] for result in results] == [10] * CONTENDERS


def test_bootstrap_race_on_sqlite_creates_exactly_one_root():
    with support.sqlite_site() as site:
        results = race(site.zconfig)
        assert os.path.exists(os.path.join(site.var, 'main.sqlite3'))
    assert_one_root(results)


def create_empty_database(site):
    """The database and its user, without tables (init-db would also open
    it and so create them and the root)."""
    from zope.pipeline.commands import init_db
    target = init_db.mysql_target(site.zconfig)
    admin = support.mysql_admin()
    try:
        init_db.execute(admin, init_db.create_statements(
            target, ['localhost', '127.0.0.1'], site.password))
    finally:
        admin.close()


def test_bootstrap_race_on_an_empty_mysql_database_creates_one_root():
    support.need_mysql()
    with support.scratch_directory() as directory, \
            support.mysql_database() as database:
        site = support.mysql_site(directory, database)
        create_empty_database(site)
        assert_one_root(race(site.zconfig))
