"""zope.pipeline.testing: functional tests of a Zope application, published
through zope.pipeline.

A drop-in for ``zope.app.wsgi.testlayer``: ``BrowserLayer`` takes the same
arguments (``package, zcml_file='ftesting.zcml', name=None, features=None,
allowTearDown=False``), loads the same ZCML into the same stacked
DemoStorage database, and offers ``make_wsgi_app()``, ``getRootFolder()``,
``db``, ``setup_middleware()`` and the classic ``setUp``/``testSetUp``/
``testTearDown``; the module offers the same helpers (``http()``,
``FakeResponse``, ``encodeMultipartFormdata()``, the XML-RPC transport,
the middlewares: zope.app.wsgi's own objects).
``zope.testbrowser.wsgi.Browser`` and WebTest work on what
``make_wsgi_app()`` returns.  Only the publisher differs: requests go
through zope.pipeline's standard stages (``PipelineApplication``), whose
``requestFactory``, ``handleErrors`` and ``db`` are what layers reach into
on the classic application.

Test-only: this module imports ``zope.app.wsgi.testlayer`` (and through
it zope.app.appsetup and WebTest), the ``compat`` extra of zope.pipeline.
Nothing in zope.pipeline imports it, so zope.app.publication and
zope.app.wsgi stay out of the run-time dependencies.

The body contract: a WSGI server calls ``close()`` on every body it gets
(PEP 3333), and zope.pipeline gives a request's ZODB connection back to the
pool only then (at once when the body is a list).  Test middlewares often
do not (``zope.app.wsgi.testlayer.TransactionMiddleware`` iterates the body
with ``yield from``, which never closes it), so ``PipelineApplication``
reads the whole body and closes it before returning it as a list.
"""

# zope.app.wsgi.testlayer's helpers are re-exported (F401): the same objects
from zope.app.wsgi import testlayer
from zope.app.wsgi.testlayer import AuthorizationMiddleware  # noqa: F401
from zope.app.wsgi.testlayer import FakeResponse  # noqa: F401
from zope.app.wsgi.testlayer import FakeSocket  # noqa: F401
from zope.app.wsgi.testlayer import NotInBrowserLayer  # noqa: F401
from zope.app.wsgi.testlayer import TransactionMiddleware  # noqa: F401
from zope.app.wsgi.testlayer import XMLRPCServerProxy  # noqa: F401
from zope.app.wsgi.testlayer import XMLRPCTestTransport  # noqa: F401
from zope.app.wsgi.testlayer import auth_header  # noqa: F401
from zope.app.wsgi.testlayer import encodeMultipartFormdata  # noqa: F401
from zope.app.wsgi.testlayer import http  # noqa: F401
from zope.app.wsgi.testlayer import is_wanted_header  # noqa: F401

from zope.pipeline import environ as keys
from zope.pipeline.app import PIPELINE_ZCML
from zope.pipeline.app import make_publisher_for_loaded_site
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.http.wsgi import close_iterable


def settings_with_database(db, settings=None):
    """Stage settings with ``open_root.database`` set to ``db`` (an open
    ``ZODB.DB``, or a callable returning the one each request uses)."""
    merged = {stage: dict(values) for stage, values in
              (settings or {}).items()}
    merged.setdefault('open_root', {})['database'] = db
    return merged


#: The request factory the classic application used by default.
CLASSIC_DEFAULT_FACTORY = 'HTTPPublicationRequestFactory'


class RequestFactory:
    """``PipelineApplication.requestFactory``: what layers reach into on
    the classic application's ``HTTPPublicationRequestFactory``.

    ``_db`` is the database the application's next request opens: layers
    that give each test a database of its own set it in ``testSetUp``, or
    make a new factory, ``type(app.requestFactory)(db)``, and assign it to
    ``app.requestFactory``.  ``_publication_cache`` is the classic cache
    of publication objects (each held the database), which those layers
    clear in ``testTearDown``; zope.pipeline makes ``request.publication``
    for each request, from the request's connection, so nothing is cached
    in it and clearing it is all there is to do.  Request types are chosen
    by the pipeline (``pipeline:requestFactory``), so this factory makes no
    request itself.
    """

    def __init__(self, db):
        self._db = db
        self._publication_cache = {}


def request_factory_class(factory):
    """The class of ``requestFactory`` for the classic ``factory``
    argument: ``RequestFactory`` for None and the classic default,
    ``factory`` itself when it is a ``RequestFactory`` (a layer's
    ``type(app.requestFactory)``).  Any other is refused: the pipeline
    would silently not use it."""
    if isinstance(factory, type) and issubclass(factory, RequestFactory):
        return factory
    if factory is None or getattr(factory, '__name__', None) == \
            CLASSIC_DEFAULT_FACTORY:
        return RequestFactory
    raise TypeError(
        'PipelineApplication cannot use the request factory %r: zope.pipeline '
        'chooses request types with pipeline:requestFactory registrations '
        '(see pipeline.zcml)' % (factory,))


class PipelineApplication:
    """What ``zope.app.wsgi.WSGIPublisherApplication(db)`` is, through
    zope.pipeline: a WSGI application publishing from the open ZODB ``db``
    with the configuration already loaded in this process.

    ``factory`` is there for the classic signature ``(db, factory,
    handle_errors)``: request types come from ``pipeline:requestFactory``
    registrations, so only zope.app.publication's default
    ``HTTPPublicationRequestFactory`` (or None, or this module's
    ``RequestFactory``) is accepted.  As on the classic application,
    ``requestFactory._db`` is the database each request opens, read at
    each request (``requestFactory`` and its ``_db`` may be replaced
    between requests; ``db`` is the same database), and ``handleErrors``
    (``handle_errors``) is the default of ``wsgi.handleErrors`` (False lets
    exceptions reach the caller, as the classic publisher did), read at
    each request too.  ``settings`` are stage settings
    (``{'handle_error': {'debug': True}}``); ``pipeline_zcml`` names the
    stages (the standard ones).  Bodies are read and closed here (see the
    module docstring).
    """

    def __init__(self, db=None, factory=None, handle_errors=True,
                 settings=None, pipeline_zcml=PIPELINE_ZCML, registry=None):
        self.requestFactory = request_factory_class(factory)(db)
        self.handleErrors = handle_errors
        self.publisher = make_publisher_for_loaded_site(
            settings_with_database(self.database, settings), pipeline_zcml,
            'the settings of PipelineApplication', registry)

    @property
    def db(self):
        return self.requestFactory._db

    @property
    def handle_errors(self):
        return self.handleErrors

    def database(self):
        """The database the next request opens (the open_root stage calls
        this for each request)."""
        db = self.requestFactory._db
        if db is None:
            raise ValueError(
                'PipelineApplication has no database to publish from: give '
                'it one, PipelineApplication(db), or set '
                'requestFactory._db')
        return db

    def __call__(self, environ, start_response):
        environ.setdefault(keys.HANDLE_ERRORS, self.handleErrors)
        body = self.publisher(environ, start_response)
        try:
            return list(body)
        finally:
            close_iterable(body)


#: Stages of a loaded site that its tests run without: request metrics
#: measure the server rather than the application, and would start a worker
#: thread for every publisher a test makes.
LEFT_OUT_IN_TESTS = frozenset(('metrics', 'metrics_endpoint'))


def stages_of_loaded_site(context):
    """The stages and request factories that the layer's loaded ZCML
    registered (a site that includes zope.pipeline's ``site.zcml`` or
    ``configure.zcml``, and its own stages), less ``LEFT_OUT_IN_TESTS``;
    None when it registered none (a classic site: then the standard
    ``pipeline.zcml`` is compiled)."""
    loaded = getattr(context, 'pipeline_registry', None)
    if loaded is None or not loaded.stages:
        return None
    registry = PipelineRegistry()
    for registration in loaded.stages:
        if registration.name not in LEFT_OUT_IN_TESTS:
            registry.add_stage(registration)
    for registration in loaded.request_factories:
        registry.add_request_factory(registration)
    return registry


class BrowserLayer(testlayer.BrowserLayer):
    """``zope.app.wsgi.testlayer.BrowserLayer`` publishing through
    zope.pipeline (same constructor, same middlewares around the
    application: the transaction commit and sync, basic auth encoding).

    When the layer's ZCML registers stages (the site includes
    zope.pipeline's ``site.zcml`` and maybe stages of its own), those are
    the chains its tests publish through, less the metrics stages
    (``LEFT_OUT_IN_TESTS``); a classic site's tests get the standard
    stages of ``pipeline.zcml``."""

    #: Stage settings of the publishers this layer makes.
    settings = None

    def tearDown(self):
        """With ``allowTearDown``, close the database the layer still has
        open (the one its ZCML was set up in, when no test ran), then undo
        the configuration as the classic layer does (zope.testing's
        ``cleanUp``).  Without it, refuse as the classic layer does:
        zope.testrunner then says "Tear down ... not supported" and runs
        any other layer in a process of its own (the classic default, for
        suites whose layers leave what ``cleanUp`` cannot undo, such as
        interfaces a ``<class>`` directive declared)."""
        if self.allowTearDown:
            self._close_db()
        super().tearDown()

    def make_wsgi_app(self, setup_middleware=lambda app: app):
        self._application = PipelineApplication(
            self.db, settings=self.settings,
            registry=stages_of_loaded_site(getattr(self, 'context', None)))
        return testlayer.AuthorizationMiddleware(
            testlayer.TransactionMiddleware(
                self.getRootFolder,
                self.setup_middleware(setup_middleware(self._application))))


def use_pipeline_in_classic_layers():
    """Make every ``zope.app.wsgi.testlayer.BrowserLayer`` publish through
    zope.pipeline: the layers of an existing suite, unchanged, then test
    zope.pipeline (what ``tests/compat`` does).  Returns the replaced
    application class."""
    replaced = testlayer.WSGIPublisherApplication
    testlayer.WSGIPublisherApplication = PipelineApplication
    return replaced
