"""transaction: commit before the response starts, abort on errors, doom,
the classic annotation, commit-time conflicts retried, and the classic
``transaction`` module API working on the request's transaction."""

import logging

import pytest
import transaction
import webtest
import ZODB

from . import inner
from .inner.views import AFTER
from .inner.views import BEFORE


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


# -- code that commits, aborts or begins the transaction itself, as code
# written for the classic publisher does (zope.pluggableauth's logout
# commits): it goes on in a new transaction, which the stage commits

def test_view_that_commits_itself_answers_200_and_its_change_is_kept(app):
    response = app.post('/folder/doc/@@commit-itself')
    assert response.text == 'committed, then nothing'
    assert touched() == BEFORE


def test_view_that_commits_itself_gets_its_later_changes_committed(app):
    app.post('/folder/doc/@@commit-itself', {'then': 'change'})
    assert touched() == BEFORE + AFTER


def test_transaction_committed_after_a_views_own_commit_is_annotated(app):
    app.post('/folder/doc/@@commit-itself', {'then': 'change'},
             headers=inner.basic_auth('alice', 'alicepw'))
    record = inner.last_transaction()
    assert record.user == b'zope.alice'
    assert record.description == b'/folder/doc/@@commit-itself'
    assert record.extension['request_type'] == 'browser'


def test_view_that_dooms_after_committing_keeps_only_what_it_committed(app):
    response = app.post('/folder/doc/@@commit-itself', {'then': 'doom'})
    assert response.text == 'committed, then doom'
    assert touched() == BEFORE


def test_view_that_fails_after_committing_gets_500_for_its_own_error(
        app, caplog):
    caplog.set_level(logging.ERROR, logger='zope.pipeline.error')
    app.post('/folder/doc/@@commit-itself', {'then': 'fail'}, status=500)
    [logged] = [record for record in caplog.records if record.exc_info]
    assert str(logged.exc_info[1]) == 'failed after committing'
    assert touched() == BEFORE


def test_view_that_aborts_after_committing_reads_what_it_committed(app):
    response = app.post('/folder/doc/@@commit-itself', {'then': 'abort'})
    assert response.text == 'committed, then abort: touched %d' % BEFORE
    assert touched() == BEFORE


def test_view_that_aborts_itself_gets_only_its_later_changes_committed(app):
    response = app.post('/folder/doc/@@abort-itself')
    assert response.text == 'aborted, then changed'
    assert touched() == AFTER


def test_view_that_begins_a_transaction_itself_loses_what_it_did_before(
        app):
    response = app.post('/folder/doc/@@begin-itself')
    assert response.text == 'began, then changed'
    assert touched() == AFTER


def test_conflict_at_the_final_commit_after_a_views_own_commit_is_retried(
        app):
    response = app.post('/folder/doc/@@commit-itself', {'then': 'conflict'})
    assert response.text == 'committed, then conflict'
    assert [seen['attempt'] for seen in
            inner.view_records('commit-itself')] == [1, 2]
    # each attempt's own commit stays (as in the classic publisher, which
    # retried the same way); the second attempt's later change too
    assert touched() == BEFORE + BEFORE + AFTER


def test_streamed_body_that_commits_while_iterated_gets_its_change_kept(
        app):
    response = app.post('/folder/doc/@@stream-that-changes', {'commit': '1'})
    assert response.text == 'changed while streaming\n'
    assert touched() == BEFORE


def test_streamed_body_that_changes_without_committing_commits_nothing(app):
    response = app.post('/folder/doc/@@stream-that-changes')
    assert response.text == 'changed while streaming\n'
    assert touched() == 0


def test_wsgi_app_that_commits_before_start_response_is_answered():
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.open_root import OpenRootStage
    from zope.pipeline.stages.transactions import TransactionStage

    def commits_then_changes(environ, start_response):
        root = environ['zope.pipeline.connection'].root()
        root['before'] = 1
        transaction.commit()
        root['after'] = 2
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'ok']

    db = ZODB.DB(None)
    app = OpenRootStage(TransactionStage(commits_then_changes), database=db)
    environ = {'zope.request': TestRequest(), 'REQUEST_METHOD': 'POST',
               'PATH_INFO': '/'}
    started = []
    body = app(environ, lambda status, headers, exc_info=None:
               started.append(status))
    assert (started, body) == (['200 OK'], [b'ok'])
    with db.transaction() as connection:
        assert dict(connection.root()) == {'before': 1, 'after': 2}
    db.close()


def test_request_syncs_its_connection_once_and_once_more_per_own_commit(
        app, monkeypatch):
    from ZODB.Connection import Connection
    app.get('/folder/doc/@@whoami')  # the database is opened and populated
    syncs = []
    new_transaction = Connection.newTransaction

    def counted(connection, txn, sync=True):
        syncs.append(sync)
        return new_transaction(connection, txn, sync)

    monkeypatch.setattr(Connection, 'newTransaction', counted)
    app.post('/folder/doc/@@touch')
    # the stage's begin; nothing when the connection opens, nor after the
    # stage's commit
    assert syncs == [True]
    del syncs[:]
    app.post('/folder/doc/@@commit-itself', {'then': 'change'})
    # and one for the transaction the view's commit began
    assert syncs == [True, True]
    del syncs[:]
    app.post('/folder/doc/@@stream-that-changes', {'commit': '1'})
    # and one for the transaction the streamed body's commit began
    assert syncs == [True, True]
