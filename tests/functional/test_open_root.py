"""open_root: a connection per request with its own explicit transaction
manager, the root application by name, the connection back in the pool as
soon as the body is done, and the database a ZConfig file describes
(RelStorage on SQLite, or on MariaDB)."""

import pytest
import webtest
from conftest import need
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.zodb import storage

from . import inner
from .inner import mariadb


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


def probes():
    return [record for record in inner.seen if record.get('probe')]


def call(publisher, path):
    """Call the WSGI application directly; return (statuses, body)."""
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)
        return statuses.append

    environ = webtest.TestRequest.blank(path).environ
    return statuses, publisher(environ, start_response)


def touched_doc(root):
    return root['folder']['doc'].touched


def test_each_request_gets_a_connection_and_explicit_transaction_manager(
        app):
    app.get('/folder/doc/@@connection')
    app.get('/folder/doc/@@connection')
    first, second = probes()
    for probe, view in zip(probes(), inner.view_records('connection')):
        assert view['connection'] is probe['connection']
        assert probe['manager'].explicit is True
        assert probe['connection_manager'] is probe['manager']
    assert first['manager'] is not second['manager']


def test_root_application_is_found_by_open_root_root_name(
        make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path, open_root__root_name='Custom')
    app.get('/folder/doc/@@whoami')
    [probe] = probes()
    assert list(probe['root_mapping']) == ['Custom']
    assert probe['root'] is probe['root_mapping']['Custom']


def test_connection_is_back_in_the_pool_before_a_list_body_is_read(app):
    statuses, body = call(app.app, '/folder/doc/@@connection')
    [probe] = probes()
    assert statuses == ['200 Ok']
    assert probe['connection'].opened is None
    assert inner.in_pool(inner.database(), probe['connection'])
    assert b''.join(body).startswith(b'connection ')
    body.close()


def test_streamed_body_keeps_the_connection_open_until_close(app):
    statuses, body = call(app.app, '/folder/doc/@@stream')
    [probe] = probes()
    connection = probe['connection']
    assert connection.opened is not None
    assert b''.join(body) == (b'chunk 0 touched 0\nchunk 1 touched 0\n'
                              b'chunk 2 touched 0\n')
    assert [chunk['connection_open']
            for chunk in inner.view_records('stream')] == [True] * 3
    assert connection.opened is not None
    assert not inner.in_pool(inner.database(), connection)
    body.close()
    assert connection.opened is None
    assert inner.in_pool(inner.database(), connection)


def test_streamed_body_passes_wsgi_validation(app):
    response = app.get('/folder/doc/@@stream')
    assert response.body.count(b'chunk') == 3
    [probe] = probes()
    assert probe['connection'].opened is None


def test_connection_is_released_when_the_request_fails(app):
    app.get('/folder/doc/@@fail?kind=boom', status=500)
    [probe] = probes()
    assert probe['connection'].opened is None
    assert inner.in_pool(inner.database(), probe['connection'])


def test_zodb_config_naming_relstorage_on_sqlite_serves_and_persists(
        make_testapp, tmp_path):
    config = inner.sqlite_config(tmp_path)
    app = inner.build(make_testapp, tmp_path, open_root__zodb_config=config)
    app.post('/folder/doc/@@touch')
    app.post('/folder/doc/@@touch')
    assert storage.database_for(config).created_root is True
    assert (tmp_path / 'data').is_dir()
    storage.close_all()
    # opened again from its files: the content is there, not made again
    assert inner.read(touched_doc, config) == 2
    assert storage.database_for(config).created_root is False


def test_missing_zodb_config_file_is_a_configuration_error_at_startup(
        make_testapp, tmp_path):
    missing = tmp_path / 'nowhere.conf'
    with pytest.raises(ConfigurationError) as caught:
        inner.build(make_testapp, tmp_path,
                    open_root__zodb_config=str(missing))
    assert str(caught.value) == (
        'The ZODB configuration file %s (open_root.zodb_config) does not '
        'exist.' % missing)


def test_root_factory_that_cannot_be_imported_is_a_configuration_error(
        make_testapp, tmp_path):
    with pytest.raises(ConfigurationError) as caught:
        inner.build(make_testapp, tmp_path,
                    open_root__root_factory='no.such.module.factory')
    assert "Cannot import 'no.such.module.factory' named by " \
        "open_root.root_factory" in str(caught.value)


@pytest.mark.integration
def test_relstorage_on_mariadb_serves_and_commits(make_testapp, tmp_path):
    need(mariadb.available(), 'MariaDB is not running on this machine')
    with mariadb.scratch_database() as name:
        config = inner.mysql_config(tmp_path, name)
        try:
            app = inner.build(make_testapp, tmp_path,
                              open_root__zodb_config=config)
            app.post('/folder/doc/@@touch', {'note': 'on MariaDB'},
                     headers=inner.basic_auth('alice', 'alicepw'))
            assert app.get('/folder/doc/@@whoami').json['site_label'] == \
                'root'
            assert inner.read(touched_doc, config) == 1
        finally:
            storage.close_all()


def test_connection_is_closed_even_when_abort_fails():
    from zope.pipeline.stages.open_root import release

    class Connection:
        closed = False

        def close(self):
            self.closed = True

    class Manager:
        def abort(self):
            raise RuntimeError('a data manager failed to abort')

    connection = Connection()
    with pytest.raises(RuntimeError):
        release(connection, Manager())
    assert connection.closed
