"""Compilation: chains are built per request type at startup, a new spec
once on first sight, and choosing a chain per request is a dict lookup."""

import functools
import io

import pytest
from zope.component import getSiteManager
from zope.component import getUtility
from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import providedBy
from zope.publisher.browser import BrowserRequest

from zope.pipeline.engine import publisher as publisher_module
from zope.pipeline.engine.factories import RequestFactory
from zope.pipeline.engine.ordering import TopologicalSorter
from zope.pipeline.engine.publisher import Chain
from zope.pipeline.engine.publisher import end_of_pipeline
from zope.pipeline.interfaces import REQUEST_KEY
from zope.pipeline.interfaces import IPipelineRegistry
from zope.pipeline.interfaces import IPublisher

from .engine_files import ROOT  # noqa: F401 - puts tests.engine on the path
from tests.engine import stages as test_stages


class IExtraLayer(Interface):
    """A layer only these tests put on requests."""


@pytest.fixture
def counted():
    test_stages.built.clear()
    yield test_stages.built
    test_stages.built.clear()


def make_request(publisher, request_type, method='GET'):
    registration, spec = publisher.request_types[request_type]
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    return registration.factory(environ['wsgi.input'], environ)


def call(app, environ):
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer['status'] = status
    body = app(environ, start_response)
    text = b''.join(body).decode()
    if hasattr(body, 'close'):
        body.close()
    return answer['status'], text


def test_chains_are_compiled_at_startup_for_every_request_type(build, counted):
    publisher = build('skins.zcml')
    assert list(publisher.request_types) == ['browser', 'xmlrpc', 'http']
    # One chain per request type, each with its own 'counting' stage.
    assert counted['counting'] == 3


def test_requests_of_known_types_build_nothing(serve, counted):
    app = serve('skins.zcml')
    assert app.get('/').text == 'browser: counting respond'
    assert app.post('/', b'<methodCall/>', content_type='text/xml').text == (
        'xmlrpc: counting respond')
    assert app.put('/', b'x').text == 'http: counting respond'
    assert app.head('/').status == '200 OK'
    assert counted['counting'] == 3


def test_new_spec_is_compiled_once_on_first_sight_then_cached(serve, counted):
    app = serve('skins.zcml')
    skinned = {'X-Skin': 'test'}
    first = app.get('/', headers=skinned)
    assert first.text == 'browser: counting generic respond'
    assert counted['counting'] == 4
    again = app.get('/', headers=skinned)
    assert again.text == 'browser: counting generic respond'
    assert app.post('/', {'a': '1'}, headers=skinned).text == again.text
    assert counted['counting'] == 4
    assert app.get('/').text == 'browser: counting respond'
    assert counted['counting'] == 4


def test_switch_does_no_lookup_sorting_or_building_per_request(
        build, counted, monkeypatch):
    publisher = build('skins.zcml')
    request = make_request(publisher, 'browser')

    def forbidden(*args, **kw):
        raise AssertionError('per-request work in the switch')
    monkeypatch.setattr(publisher.registry, 'inner_stages', forbidden)
    monkeypatch.setattr(TopologicalSorter, 'sorted', forbidden)
    getSiteManager.sethook(forbidden)
    try:
        status, text = call(publisher.switch, {REQUEST_KEY: request})
    finally:
        getSiteManager.reset()
    assert (status, text) == ('200 OK', 'None: counting respond')
    assert counted['counting'] == 3


class SubclassedRequest(BrowserRequest):
    """Another class, but the same interfaces as BrowserRequest."""


def test_specs_with_the_same_interfaces_share_one_compiled_chain(
        build, counted):
    publisher = build('skins.zcml')
    browser = make_request(publisher, 'browser')
    subclassed = RequestFactory(SubclassedRequest)(
        io.BytesIO(b''), {'REQUEST_METHOD': 'GET'})
    assert providedBy(subclassed) is not providedBy(browser)
    assert publisher.chain_for(providedBy(subclassed)) is (
        publisher.chain_for(providedBy(browser)))
    assert counted['counting'] == 3


def test_past_max_specs_chains_are_found_by_interfaces(
        build, counted, monkeypatch):
    publisher = build('skins.zcml')
    monkeypatch.setattr(publisher_module, 'MAX_SPECS', 0)
    request = make_request(publisher, 'browser')
    alsoProvides(request, IExtraLayer)
    spec = providedBy(request)
    chain = publisher.chain_for(spec)
    assert publisher.chain_for(spec) is chain
    assert spec not in publisher._chains
    assert counted['counting'] == 4


def test_chain_knows_its_stage_names_and_calls_its_first_stage(build):
    publisher = build('specific.zcml')
    registration, spec = publisher.request_types['xmlrpc']
    chain = publisher.chain_for(spec)
    assert chain.names() == ['call', 'respond']
    environ = {REQUEST_KEY: make_request(publisher, 'xmlrpc', 'POST')}
    assert call(chain, environ) == ('200 OK', 'None: xmlrpc-specific respond')
    assert [stage.settings for stage in chain.stages] == [{}, {}]


def test_chain_without_stages_ends_in_not_found():
    chain = Chain([], end_of_pipeline)
    assert call(chain, {}) == ('404 Not Found', 'Not Found')


def test_publisher_registers_its_registry_before_building_stages(build):
    publisher = build('specific.zcml')
    assert IPublisher.providedBy(publisher)
    assert getUtility(IPipelineRegistry) is publisher.registry
    assert publisher.outer.names() == ['create_request']


def test_publisher_serves_through_its_outer_chain(build):
    publisher = build('specific.zcml')
    environ = {'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    assert call(publisher, environ) == ('200 OK', 'browser: generic respond')


class Declaring:
    """A stage there for what it declares: it records being called."""

    def __init__(self, next_app, passes, called):
        self.next_app = next_app
        self.passes_through = passes
        self.called = called
        self.output_filters = (self.filter,)
        self.traversal_hooks = (self.hook,)

    def filter(self, response, body):
        return body

    def hook(self, request, ob):
        pass

    def __call__(self, environ, start_response):
        self.called.append(environ)
        return self.next_app(environ, start_response)


@pytest.fixture
def declaring(monkeypatch):
    """Builds the stage 'call' of specific.zcml as a ``Declaring`` stage
    with ``passes_through`` set to the value the test gives."""
    made = {'called': [], 'passes': True}
    build_stage = publisher_module.Publisher.build_stage

    def build_declaring(publisher, registration, next_app, settings, build):
        if registration.name != 'call':
            return build_stage(publisher, registration, next_app, settings,
                               build)
        made[build.request_type] = build
        return Declaring(next_app, made['passes'], made['called'])

    monkeypatch.setattr(publisher_module.Publisher, 'build_stage',
                        build_declaring)
    return made


def browser_chain(publisher):
    return publisher.chain_for(publisher.request_types['browser'][1])


def first_called(chain):
    """The stage a chain calls first (through its bound ``__call__``)."""
    return getattr(chain.app, '__self__', chain.app)


def test_a_stage_that_passes_through_is_not_called_but_declares(
        build, declaring):
    """``passes_through = True``: the stage before it (here the switch)
    calls the stage after it; its output filters and traversal hooks are
    assembled and it is still listed in its chain."""
    publisher = build('specific.zcml')
    chain = browser_chain(publisher)
    assert chain.names() == ['call', 'respond']
    passing = chain.stages[0].app
    assert first_called(chain) is chain.stages[1].app
    environ = {REQUEST_KEY: make_request(publisher, 'browser')}
    assert call(chain, environ) == ('200 OK', 'None: respond')
    assert declaring['called'] == []
    assert declaring['browser'].output_filters == [passing.filter]
    assert declaring['browser'].traversal_hooks == [passing.hook]


@pytest.mark.parametrize('passes', [False, 1, 'yes', None])
def test_a_stage_passes_through_only_when_it_says_true(
        build, declaring, passes):
    """Any other value (a truthy one, an attribute forwarded by a wrapper
    that means something else) keeps the stage in the calls."""
    declaring['passes'] = passes
    publisher = build('specific.zcml')
    chain = browser_chain(publisher)
    assert first_called(chain) is chain.stages[0].app
    environ = {REQUEST_KEY: make_request(publisher, 'browser')}
    call(chain, environ)
    assert declaring['called'] == [environ]


def test_a_stage_that_declares_nothing_is_called(build):
    publisher = build('specific.zcml')
    chain = browser_chain(publisher)
    assert not hasattr(chain.stages[0].app, 'passes_through')
    assert first_called(chain) is chain.stages[0].app


class Calling:
    def __call__(self, environ, start_response):
        return ['class']


def test_a_stage_is_called_through_its_own_bound_call():
    """``call_link``: what calling the instance would run, the type's
    ``__call__``, bound to it (an ``__call__`` in the instance's dict is
    not what calling it runs, so it is not used either)."""
    stage = Calling()
    stage.__call__ = lambda environ, start_response: ['instance']
    link = publisher_module.call_link(stage)
    assert link.__self__ is stage
    assert link.__func__ is Calling.__call__
    assert link({}, None) == stage({}, None) == ['class']


@pytest.mark.parametrize('app', [
    end_of_pipeline, len, functools.partial(end_of_pipeline),
    Calling().__call__], ids=['function', 'builtin', 'partial', 'method'])
def test_what_has_no_python_call_of_its_class_is_called_as_it_is(app):
    assert publisher_module.call_link(app) is app


def test_every_stage_of_a_chain_calls_the_next_through_its_bound_call(
        build):
    publisher = build('specific.zcml')
    chain = browser_chain(publisher)
    first, second = [stage.app for stage in chain.stages]
    assert chain.app == first.__call__
    assert first.next_app == second.__call__
