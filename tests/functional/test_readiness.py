"""The balancer's readiness answer (the ``readiness`` stage): 200 while
the process serves, 503 while its server is out of rotation, a database
is closed or does not open, and from what answers before the pipeline
(a site that did not load, databases that refused to open at the start);
one word, no credentials, any Host."""

import pytest
import webtest
from conftest import need
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import environ as keys
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.serving.startup import OpeningDatabases
from zope.pipeline.serving.startup import Unavailable
from zope.pipeline.stages import readiness
from zope.pipeline.stages.readiness import ReadinessStage
from zope.pipeline.zodb import storage

from . import inner
from .test_storage_outage import MySQLdb
from .test_storage_outage import unreachable_config


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    directory = tmp_path / 'run'
    directory.mkdir()
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(directory))
    return str(directory)


def assert_ready(app):
    response = app.get('/_ready', status=200)
    assert response.text == 'ready\n'
    assert response.content_type == 'text/plain'
    assert response.headers['Cache-Control'] == 'no-store'
    return response


def assert_not_ready(app):
    response = app.get('/_ready', status=503)
    assert response.text == 'not ready\n'
    assert response.headers['Retry-After'] == '1'
    assert response.headers['Cache-Control'] == 'no-store'
    return response


def test_a_serving_process_answers_ready_with_one_word(make_testapp,
                                                       run_dir):
    app = make_testapp()
    response = assert_ready(app)
    # Nothing about the software or the site: the word and the headers
    # every response carries.
    assert sorted(response.headers) == [
        'Cache-Control', 'Content-Length', 'Content-Security-Policy',
        'Content-Type', 'X-Content-Type-Options', 'X-Frame-Options']
    assert app.head('/_ready', status=200).body == b''


def test_the_answer_needs_no_credentials_and_no_known_host(make_testapp):
    app = make_testapp(HTTP_HOST='198.18.1.2:8080',
                       REMOTE_ADDR='198.18.1.1')
    assert_ready(app)
    # The same request for a page is refused: the host is not the site's.
    app.get('/', status=400)


def test_the_first_answer_opens_the_database(make_testapp):
    app = make_testapp()
    [database] = storage.process_databases()
    assert not database.is_open()
    assert_ready(app)
    assert database.is_open()


def test_a_server_out_of_rotation_answers_not_ready_and_still_serves(
        make_testapp, run_dir, tmp_path):
    app = inner.build(make_testapp, tmp_path)
    assert_ready(app)
    readiness.leave_rotation(run_dir)
    assert_not_ready(app)
    assert app.head('/_ready', status=503).body == b''
    # The requests the balancer still sends (in flight, or a client on
    # its own) are served.
    app.get('/folder/doc/@@whoami', status=200)
    readiness.join_rotation(run_dir)
    assert_ready(app)
    readiness.join_rotation(run_dir)   # twice: nothing to remove


def test_a_closed_database_answers_not_ready_and_stays_closed(
        make_testapp):
    app = make_testapp()
    assert_ready(app)
    [database] = storage.process_databases()
    database.close()     # what the process's shutdown does
    assert_not_ready(app)
    assert not database.is_open()


def test_a_database_that_does_not_open_answers_not_ready_until_it_does(
        make_testapp, tmp_path):
    need(MySQLdb is not None, 'mysqlclient (the mysql extra) is missing')
    config = unreachable_config(tmp_path)
    app = inner.build(make_testapp, tmp_path, open_root__zodb_config=config)
    assert_not_ready(app)
    # The server answers again (here: the file names another one).
    with open(inner.sqlite_config(tmp_path)) as source:
        text = source.read()
    with open(config, 'w') as target:
        target.write(text)
    assert_ready(app)


class RefusingDatabase:
    """A database whose server refuses every opening."""

    def get(self):
        raise ValueError('refused')


@pytest.mark.parametrize('answering', [
    lambda: Unavailable('a broken ini'),
    # tried again at once (interval 0): the database still refuses
    lambda: OpeningDatabases(None, [RefusingDatabase()], str, interval=0,
                             first_error=ValueError('refused'))])
def test_what_answers_before_the_pipeline_answers_not_ready(answering):
    # A site that did not load, databases that refused to open at the
    # start (zope.pipeline.serving.startup): 503 for every path, this one
    # too.
    app = webtest.TestApp(answering())
    assert app.get('/_ready', status=503).headers['Retry-After']


def test_other_methods_and_paths_go_on_down_the_pipeline(make_testapp):
    app = make_testapp()
    app.post('/_ready', status=404)
    app.get('/_ready/more', status=404)


def test_the_path_is_a_setting(make_testapp):
    app = make_testapp(settings={'readiness': {'path': '/healthz'}})
    assert_ready_at = app.get('/healthz', status=200)
    assert assert_ready_at.text == 'ready\n'
    app.get('/_ready', status=404)


def test_a_path_without_a_slash_is_refused_naming_the_key():
    with pytest.raises(ConfigurationError, match=r'readiness\.path'):
        ReadinessStage(None, path='healthz')


def test_the_answers_are_not_metered():
    seen = []

    def site(environ, start_response):
        raise AssertionError('answered by the stage')

    stage = ReadinessStage(site)

    def recording(environ, start_response):
        body = stage(environ, start_response)
        seen.append(environ.get(keys.UNMETERED))
        return body
    webtest.TestApp(recording).get('/_ready')
    assert seen == [True]
