"""transaction: commit before the response starts, abort on errors, doom,
the classic annotation, commit-time conflicts retried, and the classic
``transaction`` module API working on the request's transaction."""

import logging

import pytest
import transaction
import webtest

from . import inner


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


def touched(path=('folder', 'doc')):
    def getter(root):
        ob = root
        for name in path:
            ob = ob[name]
        return ob.touched
    return inner.read(getter)


class StartResponseSpy:
    """Middleware recording in ``seen`` when the response starts."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        def spy(status, headers, exc_info=None):
            inner.seen.append({'event': 'start_response', 'status': status})
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.app(environ, spy)


def test_commit_happens_before_start_response(app):
    spied = webtest.TestApp(StartResponseSpy(app.app), lint=True)
    spied.post('/folder/doc/@@touch')
    order = [record['event'] for record in inner.seen
             if record.get('event') in ('commit', 'start_response')]
    assert order == ['commit', 'start_response']
    assert inner.event_records('commit')[0]['committed'] is True
    assert touched() == 1


def test_error_aborts_the_transaction(app):
    app.post('/folder/doc/@@fail?kind=boom', status=500)
    assert inner.view_records('fail')
    assert touched() == 0


def test_doomed_transaction_commits_nothing_and_the_response_is_still_200(
        app):
    response = app.post('/folder/doc/@@doom', status=200)
    assert response.text == 'doomed'
    assert touched() == 0


def test_transaction_is_annotated_with_principal_path_and_request_type(app):
    app.post('/folder/doc/@@touch',
             headers=inner.basic_auth('alice', 'alicepw'))
    record = inner.last_transaction()
    assert record.user == b'zope.alice'
    assert record.description == b'/folder/doc/@@touch'
    assert record.extension['request_type'] == 'browser'
    assert record.extension['request_method'] == 'POST'


def test_anonymous_transaction_is_annotated_with_the_unauthenticated_id(app):
    app.post('/folder/doc/@@touch')
    assert inner.last_transaction().user == b'zope.anybody'


def test_transaction_note_from_a_view_is_kept_with_the_path(app):
    app.post('/folder/doc/@@touch', {'note': 'touched by hand'})
    description = inner.last_transaction().description
    # the view's note first, the path the transaction stage adds after it
    assert description == b'touched by hand\n/folder/doc/@@touch'


def test_conflict_at_commit_is_retried_and_client_sees_one_response(
        app, caplog):
    caplog.set_level(logging.INFO, logger='zope.pipeline.retry')
    response = app.post('/folder/doc/@@conflict-at-commit')
    assert response.text == 'attempt 2 touched 1'
    assert [seen['attempt']
            for seen in inner.view_records('conflict-at-commit')] == [1, 2]
    data_manager = [record['data_manager'] for record in inner.seen
                    if 'data_manager' in record]
    assert 'tpc_abort' in data_manager
    assert data_manager[-1] == 'finish'
    assert data_manager.count('finish') == 1
    assert touched() == 1
    retried = [record.getMessage() for record in caplog.records
               if record.name == 'zope.pipeline.retry']
    assert len(retried) == 1
    assert 'ConflictError' in retried[0]


def test_thread_transaction_is_the_request_transaction_during_the_view(app):
    before = transaction.manager.manager
    app.get('/folder/doc/@@connection')
    [seen] = inner.view_records('connection')
    assert seen['thread_transaction'] is seen['request_transaction']
    assert transaction.manager.manager is before


def test_thread_transaction_manager_is_restored_after_an_error(app):
    before = transaction.manager.manager
    app.get('/folder/doc/@@fail?kind=boom', status=500)
    assert transaction.manager.manager is before


def test_transaction_without_a_principal_is_annotated_without_a_user():
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.transactions import annotate
    request = TestRequest()
    txn = transaction.TransactionManager().begin()
    annotate(txn, {'zope.request': request, 'REQUEST_METHOD': 'GET',
                   'zope.pipeline.request_type': 'browser'})
    assert txn.user == ''
    assert txn.extension['request_type'] == 'browser'
    txn.abort()
