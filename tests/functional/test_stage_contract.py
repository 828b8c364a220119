"""Every stage's declared contract (reads, reads_if_present, writes) is what
it really does: each standard chain serves requests through an environ that
records, per stage, every key read and written, and the record is compared
with the declarations."""

import collections
import contextlib
import xmlrpc.client

import pytest

from zope.pipeline.engine.contract import contract_of
from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.environ import from_server

from fixtures.testing import EDITOR
from fixtures.testing import basic_auth
from fixtures.testing import classic_app


class AccessLog:
    """Which stage read and wrote which keys; the innermost stage running
    (the top of the stack) is the one that accessed a key."""

    def __init__(self):
        self.stack = []
        self.reads = collections.defaultdict(set)
        self.writes = collections.defaultdict(set)
        self.environs = {}
        self.called = set()

    @contextlib.contextmanager
    def inside(self, name):
        self.called.add(name)
        self.stack.append(name)
        try:
            yield
        finally:
            self.stack.pop()

    def top(self):
        return self.stack[-1] if self.stack else None

    def read(self, key):
        if self.stack:
            self.reads[self.top()].add(key)

    def write(self, key):
        if self.stack:
            self.writes[self.top()].add(key)


class RecordingEnviron(dict):
    """A WSGI environ that tells its log every key read and written."""

    log = None

    def __getitem__(self, key):
        self.log.read(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.log.read(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.log.read(key)
        return super().__contains__(key)

    def __setitem__(self, key, value):
        self.log.write(key)
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.log.write(key)
        super().__delitem__(key)

    def setdefault(self, key, default=None):
        self.log.read(key)
        self.log.write(key)
        return super().setdefault(key, default)

    def pop(self, key, *default):
        self.log.write(key)
        return super().pop(key, *default)

    def update(self, *args, **kw):
        for key in dict(*args, **kw):
            self.log.write(key)
        super().update(*args, **kw)


def recording(environ, log):
    """The environ as a RecordingEnviron.  A stage that hands the next one
    a plain copy of its own (retry, per attempt) wrote what the copy
    holds differently."""
    if isinstance(environ, RecordingEnviron):
        return environ
    copy = RecordingEnviron(environ)
    copy.log = log
    original = log.environs.get(log.top())
    if original is not None:
        for key, value in dict.items(copy):
            if key not in dict.keys(original) or \
                    dict.__getitem__(original, key) is not value:
                log.write(key)
    return copy


class RecordedBody:
    """The body a stage returned: iterating and closing it is that stage's
    work."""

    def __init__(self, body, name, log):
        self.body, self.name, self.log = body, name, log

    def __iter__(self):
        with self.log.inside(self.name):
            iterator = iter(self.body)
        while True:
            with self.log.inside(self.name):
                try:
                    chunk = next(iterator)
                except StopIteration:
                    return
            yield chunk

    def close(self):
        with self.log.inside(self.name):
            close = getattr(self.body, 'close', None)
            if close is not None:
                close()


class RecordedStage:
    """A compiled stage whose environ work is logged under its name."""

    def __init__(self, name, app, log, next_app=None):
        self.name, self.app, self.log = name, app, log
        if app is not next_app:  # what the stage declares for the chain
            for declared in ('traversal_hooks', 'output_filters'):
                setattr(self, declared, getattr(app, declared, ()))

    def __call__(self, environ, start_response):
        caller = self.log.top()

        def start(*args):
            # the start_response the stage calls belongs to its caller
            with self.log.inside(caller):
                return start_response(*args)

        environ = recording(environ, self.log)
        self.log.environs[self.name] = environ
        with self.log.inside(self.name):
            body = self.app(environ, start)
        return RecordedBody(body, self.name, self.log)


@pytest.fixture
def log(monkeypatch):
    access_log = AccessLog()
    contracts = {}
    build_stage = Publisher.build_stage

    def recorded_build(publisher, registration, next_app, settings, build):
        contracts[registration.name] = contract_of(registration)
        if next_app == publisher.switch:
            # not a stage: its reads are nobody's contract
            next_app = RecordedStage('switch', next_app, access_log)
        app = build_stage(publisher, registration, next_app, settings, build)
        if app is next_app:     # a stage that is off is not in the chain
            contracts.pop(registration.name)
            return app
        return RecordedStage(registration.name, app, access_log, next_app)

    monkeypatch.setattr(Publisher, 'build_stage', recorded_build)
    access_log.contracts = contracts
    return access_log


def recorded(testapp, log):
    original = testapp.app

    def serve(environ, start_response):
        return original(recording(environ, log), start_response)

    testapp.app = serve
    return testapp


@pytest.fixture
def app(make_testapp, log):
    return recorded(classic_app(make_testapp), log)


@pytest.fixture
def redirecting_app(make_testapp, log):
    return recorded(classic_app(make_testapp, fix_relative_links={
        'mode': 'redirect'}), log)


def browse(app):
    """Requests of the three standard request types, errors included."""
    app.get('/folder/doc')                                   # browser
    app.get('/folder/doc/add.html', {'a:int': '3', 'b:int': '4'})
    app.get('/folder/doc/nothing-here', status=404)          # an error
    app.get('/folder/doc?%2B%2Bvh%2B%2B:method=1', status=400)  # ++vh++
    app.get('/folder/doc', headers=basic_auth('nobody', 'wrong'))  # login
    app.post('/folder/doc/edit.html', {'title': 'New'}, status=401,
             headers={'Origin': 'http://localhost'})         # csrf checks
    app.head('/folder/doc')
    app.get('/_metrics', status='*')                         # the endpoint
    app.get('/_ready')                                       # readiness
    app.post('/folder/doc/rpc', xmlrpc.client.dumps((), 'title'),
             content_type='text/xml')                        # xmlrpc
    app.put('/folder/doc', b'Put here.', headers=basic_auth(*EDITOR),
            content_type='text/plain', status=204)           # http
    app.request('/folder/doc', method='PATCH', body=b'', status=405)


def pipeline_keys(found):
    """The keys stages talk through; the server's are always there."""
    return {key for key in found if not from_server(key)}


def test_every_stage_reads_and_writes_only_what_it_declares(app, log):
    browse(app)

    # retry copies the results the stages inside declare back to the
    # environ of the stages outside (stages/retry.py)
    results = {key for contract in log.contracts.values()
               for key in contract.results}
    undeclared = {}
    for name, contract in log.contracts.items():
        if not contract.declared:
            continue
        read = pipeline_keys(log.reads[name]) - set(
            contract.reads + contract.reads_if_present)
        written = pipeline_keys(log.writes[name]) - set(contract.writes)
        if name == 'retry':
            written -= results
        if read or written:
            undeclared[name] = {'read': read, 'written': written}
    assert undeclared == {}


#: Declared keys the requests of ``browse`` do not reach: handle_error
#: reads them for a transient error (passed up to retry, or logged with
#: its attempt when none is left, and answered 503 with the Retry-After
#: of the retry stage).
#: fix_relative_links reads the others in its redirect mode only (the next
#: test); create_request writes powered_by with create_request.powered_by =
#: true only (tests/security/test_response_headers.py).
NOT_EXERCISED = {('create_request', 'zope.pipeline.powered_by'),
                 ('handle_error', 'zope.pipeline.retries_left'),
                 ('handle_error', 'zope.pipeline.attempt'),
                 ('handle_error', 'zope.pipeline.retry_after'),
                 ('fix_relative_links', 'zope.request'),
                 ('fix_relative_links', 'zope.response'),
                 ('fix_relative_links', 'zope.pipeline.default_view')}


def test_every_declared_key_is_really_read_or_written(app, log):
    browse(app)

    unused = set()
    for name, contract in log.contracts.items():
        for key in pipeline_keys(contract.reads + contract.reads_if_present):
            if key not in log.reads[name]:
                unused.add((name, key))
        for key in pipeline_keys(contract.writes):
            if key not in log.writes[name]:
                unused.add((name, key))
    assert unused == NOT_EXERCISED


def test_the_response_cache_reads_only_its_declared_keys(make_testapp,
                                                        log):
    app = recorded(classic_app(make_testapp, response_cache={
        'enabled': 'true'}), log)
    browse(app)
    browse(app)

    contract = log.contracts['response_cache']
    assert pipeline_keys(log.reads['response_cache']) <= set(
        contract.reads + contract.reads_if_present)
    # (the recorded chain's bodies are not lists: nothing is kept, the
    # published view is not asked, and no stored page is validated with
    # the transaction manager)
    assert {'zope.request', 'zope.pipeline.connection'} <= pipeline_keys(
        log.reads['response_cache'])


def test_fix_relative_links_reads_its_declared_keys_in_redirect_mode(
        redirecting_app, log):
    redirecting_app.get('/folder/doc', status=301)

    assert {'zope.request', 'zope.response', 'zope.pipeline.default_view'
            } <= pipeline_keys(log.reads['fix_relative_links'])


def test_the_standard_chains_were_all_recorded(app, log):
    browse(app)

    assert {'metrics', 'virtual_host', 'retry', 'create_request',
            'open_root', 'handle_error', 'csrf', 'transaction',
            'site_events', 'process_inputs', 'authenticate', 'traverse',
            'fix_relative_links', 'call'} <= log.called
