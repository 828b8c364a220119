"""Failed-login counts per process: under ``make serve`` (mod_wsgi, two
daemon processes plus the admin process group) a login could be guessed
30 times per window where the docs say 10 (20 per client).  The
authenticate stages of every process that shares the server's run
directory (``$ZOPE_PIPELINE_RUN_DIR``, which both mod_wsgi deployments
set) now count the same failures.

The "processes" here are real ones (multiprocessing, spawned), each with
its own publisher's stage, as mod_wsgi's daemons have.
"""

import base64
import multiprocessing
import sqlite3

import pytest
from zope.component import provideAdapter
from zope.publisher.browser import TestRequest as StockTestRequest

from zope.pipeline import environ as keys
from zope.pipeline.engine.build import BuildContext
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.stages.authenticate import AuthenticateStage
from zope.pipeline.stages.authenticate import BasicAuthCredentials


def ok(environ, start_response):
    """What the stage calls unless it refuses (429): a failed login goes
    on anonymously."""
    start_response('200 OK', [])
    return [b'ok']


def new_stage():
    """An authenticate stage of a publisher of its own (its own build),
    with the default limits (10 failures per login, 20 per client)."""
    return AuthenticateStage(ok, build=BuildContext(PipelineRegistry(), {},
                                                    []))


def guess(stage, login, password, address):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    environ = {'HTTP_AUTHORIZATION': 'Basic ' + token.decode(),
               'REMOTE_ADDR': address, 'REQUEST_METHOD': 'GET',
               'PATH_INFO': '/'}
    environ[keys.REQUEST_KEY] = StockTestRequest(environ=environ)
    statuses = []
    stage(environ, lambda status, headers, exc_info=None:
          statuses.append(int(status.split()[0])))
    return statuses[0]


def guess_in_a_process(run_dir, login, guesses, first_address):
    """Run in another process: ``guesses`` wrong passwords for ``login``,
    each from another address; the statuses."""
    import os

    import bcrypt

    from zope.pipeline.security import passwords
    os.environ['ZOPE_PIPELINE_RUN_DIR'] = run_dir
    # no principal has a bcrypt hash here: the unknown-login check may
    # be cheap
    passwords.UNKNOWN_LOGIN_HASH = b'{BCRYPT}' + bcrypt.gensalt(4)
    provideAdapter(BasicAuthCredentials)
    stage = new_stage()
    return [guess(stage, login, 'guess-%d' % number,
                  '192.0.2.%d' % (first_address + number))
            for number in range(guesses)]


@pytest.fixture
def run_dir(tmp_path, monkeypatch, clean_zope,
            cheap_unknown_login_check):
    path = str(tmp_path / 'run')
    monkeypatch.setenv('ZOPE_PIPELINE_RUN_DIR', path)
    provideAdapter(BasicAuthCredentials)
    return path


def in_processes(run_dir, *jobs):
    context = multiprocessing.get_context('spawn')
    with context.Pool(len(jobs)) as pool:
        results = [pool.apply_async(guess_in_a_process, (run_dir,) + job)
                   for job in jobs]
        return [result.get(timeout=120) for result in results]


def test_login_limits_multiplied_by_the_daemon_processes(run_dir):
    # two daemon processes take 6 guesses each at one login: 10
    # (authenticate.max_failures_per_login) are checked in all, or 11
    # when the other process's guess was in flight as the 10th failed
    first, second = in_processes(run_dir, ('admin', 6, 0), ('admin', 6, 100))
    checked = (first + second).count(200)
    assert 10 <= checked <= 11
    assert (first + second).count(429) == 12 - checked
    # ... and a third process (the admin process group) refuses it too
    assert guess(new_stage(), 'admin', 'guess', '198.51.100.1') == 429
    assert guess(new_stage(), 'other', 'guess', '198.51.100.1') == 200


def test_a_client_limit_holds_across_processes(run_dir):
    stage = new_stage()
    for number in range(20):  # authenticate.max_failures_per_client
        assert guess(stage, 'user%d' % number, 'guess',
                     '203.0.113.9') == 200
    assert guess(new_stage(), 'someone', 'guess', '203.0.113.9') == 429


class LockedWhileSwitchingToWal(sqlite3.Connection):
    """A connection to a store another process is switching to WAL mode
    at the same moment: SQLite answers the first two switches "database
    is locked" at once, without waiting (seen with two mod_wsgi daemons
    opening a new store together)."""

    refusals = 2

    def execute(self, statement, *args):
        if (statement == 'PRAGMA journal_mode=WAL'
                and LockedWhileSwitchingToWal.refusals):
            LockedWhileSwitchingToWal.refusals -= 1
            raise sqlite3.OperationalError('database is locked')
        return super().execute(statement, *args)


def test_login_limits_multiplied_by_daemons_that_opened_the_store_together(
        run_dir, monkeypatch):
    # A daemon that met the other's switch to WAL counted in its own
    # memory for the rest of its life: its guesses were limited apart.
    stock_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, 'connect', lambda *args, **kw: stock_connect(
        *args, factory=LockedWhileSwitchingToWal, **kw))
    first, second = new_stage(), new_stage()
    for number in range(5):
        assert guess(second, 'admin', 'guess', '192.0.2.%d' % number) == 200
        assert guess(first, 'admin', 'guess', '192.0.2.%d' % number) == 200
    assert LockedWhileSwitchingToWal.refusals == 0
    assert guess(first, 'admin', 'guess', '192.0.2.99') == 429
    assert guess(second, 'admin', 'guess', '192.0.2.99') == 429
