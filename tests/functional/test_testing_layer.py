"""zope.pipeline.testing: zope.app.wsgi's test layer, publishing through
zope.pipeline (the configuration the layer loaded, its open database)."""

import contextlib

import pytest

pytest.importorskip('zope.app.wsgi.testlayer')

import webtest
import ZODB
import zope.app.wsgi
import zope.testbrowser.wsgi
from zope.app.wsgi import testlayer
from zope.app.wsgi.testing import ErrorRaisingView
from zope.app.wsgi.testing import IndexView
from zope.component import provideAdapter
from zope.configuration.exceptions import ConfigurationError
from zope.security import checker
from zope.site.folder import Folder
from zope.site.folder import rootFolder

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


def test_layer_torn_down_before_any_test_closes_its_database():
    """The last layer of a run is torn down (a created project's layer
    allows it): the database its ZCML was set up in is closed then, even
    when no test opened one of its own."""
    layer = testing.BrowserLayer(zope.app.wsgi, allowTearDown=True)
    layer.setUp()
    storage = layer.db.storage
    layer.tearDown()
    assert not storage.opened()
    assert layer.db is None


def test_layer_without_allow_tear_down_refuses_as_the_classic_one():
    layer = testing.BrowserLayer(zope.app.wsgi)
    layer.setUp()
    try:
        with pytest.raises(NotImplementedError):
            layer.tearDown()
    finally:
        layer.allowTearDown = True
        layer.tearDown()


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


def test_application_takes_the_type_of_its_own_request_factory(layer):
    class LayersFactory(testing.RequestFactory):
        pass
    app = testing.PipelineApplication(layer.db, LayersFactory)
    assert type(app.requestFactory) is LayersFactory
    assert app.requestFactory._db is layer.db


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


# -- what layers reach into on the classic application: requestFactory (its
# _db and _publication_cache), handleErrors, db; the module's helpers

def serve_index_views():
    """Register zope.app.wsgi's test views in the layer's registry."""
    for view, name in ((IndexView, 'index.html'),
                       (ErrorRaisingView, 'error.html')):
        provideAdapter(view, name=name)
        checker.defineChecker(view, checker.NamesChecker(
            ['browserDefault', '__call__']))


def forget_index_views():
    checker.undefineChecker(IndexView)
    checker.undefineChecker(ErrorRaisingView)


def swapping_the_database_per_test(base):
    """z3c.preference's layer over ``base``: one application for the
    layer (zope.testbrowser's ``Layer``), each test's database given to
    it in ``testSetUp``, publications forgotten in ``testTearDown``."""

    class SwapsTheDatabasePerTest(zope.testbrowser.wsgi.Layer, base):

        def testSetUp(self):
            super().testSetUp()
            self._application.requestFactory._db = self.db

        def testTearDown(self):
            self._application.requestFactory._publication_cache.clear()
            super().testTearDown()

        make_wsgi_app = base.make_wsgi_app

    return SwapsTheDatabasePerTest


def application_class(base):
    """The application class of a layer over ``base``: the classic layer's
    (zope.pipeline's after ``use_pipeline_in_classic_layers``), or
    zope.pipeline's."""
    if issubclass(base, testing.BrowserLayer):
        return testing.PipelineApplication
    return testlayer.WSGIPublisherApplication


def replacing_the_request_factory_per_test(base):
    """The layer of older zope.app.wsgi releases over ``base``: the
    application made with a stand-in database, its request factory
    replaced by a new one of the same type for each test's database."""

    class ReplacesTheRequestFactoryPerTest(zope.testbrowser.wsgi.Layer,
                                           base):

        def make_wsgi_app(self):
            self._application = application_class(base)(object())
            return testlayer.AuthorizationMiddleware(
                testlayer.TransactionMiddleware(self.getRootFolder,
                                                self._application))

        def testSetUp(self):
            super().testSetUp()
            factory = type(self._application.requestFactory)
            self._application.requestFactory = factory(self.db)

    return ReplacesTheRequestFactoryPerTest


def publish_in_two_tests(layer):
    """Run two tests in ``layer``: each adds a folder named after it to
    its database, then asks for both folders' index through the
    application the layer made once; return the statuses per test."""
    layer.setUp()
    try:
        serve_index_views()
        app = webtest.TestApp(zope.testbrowser.wsgi.Layer.get_app())
        statuses = []
        for name in ('first', 'second'):
            layer.testSetUp()
            try:
                root = layer.getRootFolder()
                root[name] = type(root)()
                statuses.append([
                    app.get('/%s/index.html' % folder,
                            expect_errors=True).status_int
                    for folder in ('first', 'second')])
            finally:
                layer.testTearDown()
    finally:
        forget_index_views()
        layer.tearDown()
    return statuses


@contextlib.contextmanager
def publisher(mode):
    """zope.app.wsgi's layers publish through ``mode``: 'classic' or
    'pipeline' (``use_pipeline_in_classic_layers``, as tests/compat)."""
    replaced = testlayer.WSGIPublisherApplication
    if mode == 'pipeline':
        testing.use_pipeline_in_classic_layers()
    try:
        yield
    finally:
        testlayer.WSGIPublisherApplication = replaced


#: Each test sees its own database: its folder, not the other's.
EACH_TEST_ITS_OWN_DATABASE = [[200, 404], [404, 200]]

LAYER_SHAPES = (swapping_the_database_per_test,
                replacing_the_request_factory_per_test)


@pytest.mark.parametrize('mode', ['classic', 'pipeline'])
@pytest.mark.parametrize('shape', LAYER_SHAPES)
def test_layer_that_swaps_the_database_per_test_publishes_from_the_new_one(
        shape, mode):
    with publisher(mode):
        layer = shape(testlayer.BrowserLayer)(zope.app.wsgi,
                                              allowTearDown=True)
        assert publish_in_two_tests(layer) == EACH_TEST_ITS_OWN_DATABASE


@pytest.mark.parametrize('shape', LAYER_SHAPES)
def test_pipeline_layer_that_swaps_the_database_per_test_publishes_from_it(
        shape):
    layer = shape(testing.BrowserLayer)(zope.app.wsgi, allowTearDown=True)
    assert publish_in_two_tests(layer) == EACH_TEST_ITS_OWN_DATABASE


def test_application_reads_its_request_factorys_database_at_each_request(
        layer):
    app = testing.PipelineApplication(layer.db)
    assert app.requestFactory._db is app.db is layer.db
    browser = webtest.TestApp(app)
    browser.get('/only-there/index.html', status=404)
    other = ZODB.DB(None)
    try:
        with other.transaction() as connection:
            connection.root()['Application'] = root = rootFolder()
            root['only-there'] = Folder()
        app.requestFactory._db = other
        assert app.db is other
        browser.get('/only-there/index.html', status=200)
    finally:
        other.close()


def test_application_without_a_database_says_how_to_give_it_one(layer):
    app = testing.PipelineApplication()
    with pytest.raises(ValueError, match=r'requestFactory\._db'):
        webtest.TestApp(app).get('/index.html')


def test_handle_errors_set_on_the_application_applies_to_its_next_request(
        layer):
    app = testing.PipelineApplication(layer.db)
    webtest.TestApp(app).get('/error.html', status=500)
    app.handleErrors = False
    with pytest.raises(ZeroDivisionError):
        webtest.TestApp(app).get('/error.html')


def test_module_offers_every_helper_of_the_classic_test_layer_module():
    helpers = [name for name, value in vars(testlayer).items()
               if not name.startswith('_') and
               getattr(value, '__module__', None) == testlayer.__name__
               and name != 'BrowserLayer']
    assert 'FakeResponse' in helpers
    assert {name: getattr(testing, name, None) for name in helpers} == \
        {name: getattr(testlayer, name) for name in helpers}
