"""zope.pipeline.testing: zope.app.wsgi's test layer, publishing through
zope.pipeline (the configuration the layer loaded, its open database)."""

import pytest

pytest.importorskip('zope.app.wsgi.testlayer')

import webtest
import zope.app.wsgi
from zope.app.wsgi import testlayer
from zope.app.wsgi.testing import ErrorRaisingView
from zope.app.wsgi.testing import IndexView
from zope.component import provideAdapter
from zope.configuration.exceptions import ConfigurationError
from zope.security import checker

from zope.pipeline import testing
from zope.pipeline.app import make_publisher_for_loaded_site


@pytest.fixture
def layer():
    layer = testing.BrowserLayer(zope.app.wsgi, allowTearDown=True)
    layer.setUp()
    layer.testSetUp()
    for view, name in ((IndexView, 'index.html'),
                       (ErrorRaisingView, 'error.html')):
        provideAdapter(view, name=name)
        checker.defineChecker(view, checker.NamesChecker(
            ['browserDefault', '__call__']))
    yield layer
    checker.undefineChecker(IndexView)
    checker.undefineChecker(ErrorRaisingView)
    layer.testTearDown()
    layer.tearDown()


def connections_in_use(db):
    return len(db.pool.all) - len(db.pool.available)


def test_layer_takes_the_arguments_of_the_classic_layer(layer):
    assert isinstance(layer, testlayer.BrowserLayer)
    assert layer.allowTearDown


def test_layer_publishes_a_page_through_the_pipeline(layer):
    app = webtest.TestApp(layer.make_wsgi_app())
    response = app.get('/index.html')
    assert 'This is the index' in response.text
    assert isinstance(layer._application, testing.PipelineApplication)


def test_http_helper_sends_a_raw_request_through_the_layer(layer):
    response = testing.http(layer.make_wsgi_app(),
                            b'GET /index.html HTTP/1.1\n\n')
    assert response.getStatus() == 200
    assert b'This is the index' in response.getBody()


def test_root_folder_of_the_layer_is_the_published_root(layer):
    layer.getRootFolder()['marker'] = type(layer.getRootFolder())()
    app = webtest.TestApp(layer.make_wsgi_app())
    assert app.get('/marker/index.html').status_int == 200


def test_body_never_closed_by_the_caller_leaks_no_connection(layer):
    app = testing.PipelineApplication(layer.db)
    before = connections_in_use(layer.db)
    body = app({'REQUEST_METHOD': 'GET', 'PATH_INFO': '/index.html',
                'SERVER_NAME': 'localhost', 'SERVER_PORT': '80',
                'wsgi.url_scheme': 'http', 'wsgi.input': None},
               lambda status, headers, exc_info=None: None)
    assert b'This is the index' in b''.join(body)
    assert connections_in_use(layer.db) == before


def test_publisher_for_loaded_site_has_no_metrics_stage(layer):
    publisher = make_publisher_for_loaded_site(
        {'open_root': {'database': layer.db}})
    assert 'metrics' not in publisher.outer.names()
    assert 'open_root' in publisher.chain_for(
        publisher.request_types['browser'][1]).names()


def test_database_setting_cannot_come_from_an_ini(layer):
    with pytest.raises(ConfigurationError, match='open_root.zodb_config'):
        make_publisher_for_loaded_site({'open_root': {'database': 'x'}})


def test_classic_layers_can_be_switched_to_the_pipeline(layer):
    replaced = testing.use_pipeline_in_classic_layers()
    try:
        classic_layer = testlayer.BrowserLayer(zope.app.wsgi)
        classic_layer.db = layer.db
        app = webtest.TestApp(classic_layer.make_wsgi_app())
        assert app.get('/index.html').status_int == 200
        assert isinstance(classic_layer._application,
                          testing.PipelineApplication)
    finally:
        testlayer.WSGIPublisherApplication = replaced



def test_error_of_a_site_without_default_view_name_is_not_an_index_view(
        layer):
    # zope.app.wsgi's ftesting.zcml has no browser:defaultView: the
    # 'index.html' view registered for every object is not the error's page
    app = webtest.TestApp(layer.make_wsgi_app())
    response = app.get('/error.html', status=500)
    assert 'This is the index' not in response.text


def test_handle_errors_false_through_the_layer_raises(layer):
    app = webtest.TestApp(layer.make_wsgi_app(),
                          extra_environ={'wsgi.handleErrors': False})
    with pytest.raises(ZeroDivisionError):
        app.get('/error.html')


def test_application_takes_the_classic_arguments(layer):
    from zope.app.publication.httpfactory import HTTPPublicationRequestFactory
    app = testing.PipelineApplication(layer.db, HTTPPublicationRequestFactory,
                                      False)
    assert app.handle_errors is False
    with pytest.raises(TypeError, match='pipeline:requestFactory'):
        testing.PipelineApplication(layer.db, object)


@pytest.fixture
def site_layer():
    from tests.functional import layer_site
    layer = testing.BrowserLayer(layer_site, allowTearDown=True)
    layer.setUp()
    layer.testSetUp()
    yield layer
    layer.testTearDown()
    layer.tearDown()


def test_a_sites_own_stage_runs_in_its_tests(site_layer):
    app = webtest.TestApp(site_layer.make_wsgi_app())
    response = app.get('/', status=(200, 401, 404))
    assert response.headers['X-Stamp'] == 'layer_site'


def test_a_sites_tests_run_without_the_metrics_stages(site_layer):
    site_layer.make_wsgi_app()
    publisher = site_layer._application.publisher
    names = set(publisher.outer.names())
    for chain in publisher._chains_by_iro.values():
        names.update(chain.names())
    assert 'stamp' in names
    assert not names & testing.LEFT_OUT_IN_TESTS


def test_a_classic_sites_layer_compiles_the_standard_stages(layer):
    assert testing.stages_of_loaded_site(layer.context) is None
