"""The authenticate stage's failed logins: counted once per request (not
per retried attempt), in one store per publisher."""

import base64
import logging

import pytest
from zope.component import provideAdapter
from zope.publisher.browser import TestRequest as StockTestRequest

from zope.pipeline import environ as keys
from zope.pipeline.engine.build import BuildContext
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.stages.authenticate import SHARED_NAME
from zope.pipeline.stages.authenticate import AuthenticateStage
from zope.pipeline.stages.authenticate import BasicAuthCredentials


def ok(environ, start_response):
    start_response('200 OK', [])
    return [b'ok']


def environ_for(attempt):
    token = base64.b64encode(b'someone:wrong').decode()
    environ = {'HTTP_AUTHORIZATION': 'Basic ' + token,
               'REMOTE_ADDR': '192.0.2.1', keys.ATTEMPT: attempt}
    environ[keys.REQUEST_KEY] = StockTestRequest(environ=environ)
    return environ


@pytest.fixture
def stage(clean_zope):
    provideAdapter(BasicAuthCredentials)
    return AuthenticateStage(ok, max_failures_per_client=2,
                             max_failures_per_login=0)


def test_a_retried_attempt_does_not_count_the_failure_again(stage, caplog):
    with caplog.at_level(logging.WARNING, 'zope.pipeline.authenticate'):
        for attempt in (1, 2, 3):
            stage(environ_for(attempt), lambda *args: None)
    assert len(caplog.records) == 1
    assert stage.throttle.retry_after('192.0.2.1', 'someone') == 0


def test_the_chains_of_one_publisher_share_the_failed_logins():
    shared = {}
    first = AuthenticateStage(ok, build=BuildContext(
        PipelineRegistry(), {}, [], shared=shared))
    second = AuthenticateStage(ok, build=BuildContext(
        PipelineRegistry(), {}, [], 'xmlrpc', None, shared))
    assert first.throttle.failed is second.throttle.failed is \
        shared[SHARED_NAME]
    other_window = AuthenticateStage(ok, failure_window=60,
                                     build=BuildContext(
                                         PipelineRegistry(), {}, [],
                                         shared=shared))
    assert other_window.throttle.failed.window == 60


def test_without_limits_there_is_no_throttle():
    stage = AuthenticateStage(ok, max_failures_per_client=0,
                              max_failures_per_login=0)
    assert stage.throttle is None
