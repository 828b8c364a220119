"""What the pipeline costs per request, in process (no HTTP, no server).

The site's ZCML is loaded with an in-memory database; ``/folder/page`` is
rendered through the full pipeline, through the same view called directly
(a request, the view looked up by its default name, called), and through
pipelines built without one stage each, so a stage's cost is the pipeline
with it minus the pipeline without it.  Variants are timed in alternating
batches (the machine may be shared) and the median batch is kept.  A
cProfile profile of the full pipeline is written beside the results.

Run as ``python -m benchmarks.inprocess SITE_ZCML --settings JSON``; it
prints its results as JSON (the harness runs it in a fresh process so the
ZCML it loads stays out of the harness).
"""

import argparse
import cProfile
import io
import json
import logging
import pstats
import sys
import time
from wsgiref.util import FileWrapper

from zope.pipeline.engine.registry import PipelineRegistry


def make_environ(path, method='GET'):
    return {
        'REQUEST_METHOD': method, 'PATH_INFO': path, 'SCRIPT_NAME': '',
        'QUERY_STRING': '', 'SERVER_NAME': '127.0.0.1', 'SERVER_PORT': '80',
        'SERVER_PROTOCOL': 'HTTP/1.1', 'REMOTE_ADDR': '127.0.0.1',
        'HTTP_HOST': '127.0.0.1', 'wsgi.url_scheme': 'http',
        'wsgi.input': io.BytesIO(b''), 'wsgi.errors': sys.stderr,
        'wsgi.version': (1, 0), 'wsgi.multithread': False,
        'wsgi.multiprocess': False, 'wsgi.run_once': False,
    }


#: The keys mod_wsgi passes in daemon mode (mod_wsgi-express, Apache
#: 2.4) for ``ab``'s GET of the peers' page, besides ``make_environ``'s:
#: what a served request's environ holds that an in-process one lacks.
#: The numbers and times are placeholders of the same types (captured
#: 2026-11-26 from mod_wsgi 6.1 in this project's virtualenv).
MODWSGI_KEYS = {
    'HTTP_USER_AGENT': 'ApacheBench/2.3', 'HTTP_ACCEPT': '*/*',
    'SERVER_SOFTWARE': 'Apache', 'SERVER_ADDR': '127.0.0.1',
    'DOCUMENT_ROOT': '/tmp/mod_wsgi-localhost:8000:0/htdocs',
    'REQUEST_SCHEME': 'http', 'CONTEXT_PREFIX': '',
    'CONTEXT_DOCUMENT_ROOT': '/tmp/mod_wsgi-localhost:8000:0/htdocs',
    'SERVER_ADMIN': '[no address given]',
    'SCRIPT_FILENAME': '/tmp/mod_wsgi-localhost:8000:0/htdocs/folder',
    'REMOTE_PORT': '39048', 'SERVER_PROTOCOL': 'HTTP/1.0',
    'mod_wsgi.script_name': '/folder', 'mod_wsgi.path_info': '/page',
    'mod_wsgi.process_group': 'localhost:8000',
    'mod_wsgi.application_group': '',
    'mod_wsgi.callable_object': 'handle_request',
    'mod_wsgi.request_handler': 'wsgi-handler',
    'mod_wsgi.handler_script': '/tmp/mod_wsgi-localhost:8000:0/handler.wsgi',
    'mod_wsgi.listener_host': '', 'mod_wsgi.listener_port': '8000',
    'mod_wsgi.server_pid': '8013', 'mod_wsgi.request_id': '6u/KSFNmuII',
    'wsgi.multithread': False, 'wsgi.input_terminated': True,
    'apache.version': (2, 4, 62), 'mod_wsgi.version': (6, 1, 1),
    'mod_wsgi.thread_id': 1,
}


def modwsgi_environ(path, method='GET'):
    """``make_environ(path, method)`` with the keys mod_wsgi adds, its
    ``REQUEST_URI`` and a ``wsgi.file_wrapper`` class among them."""
    environ = make_environ(path, method)
    environ.update(MODWSGI_KEYS)
    # the instants mod_wsgi stamps a request with (seconds since the
    # epoch): received, queued, taken by the daemon, by the application
    now = time.time()
    environ.update({'mod_wsgi.request_start': now,
                    'mod_wsgi.queue_start': now,
                    'mod_wsgi.daemon_start': now,
                    'mod_wsgi.application_start': now})
    environ['REQUEST_URI'] = path
    environ['wsgi.file_wrapper'] = FileWrapper
    return environ


#: ``--environ`` choices: how an in-process request's environ is made.
ENVIRONS = {'minimal': make_environ, 'modwsgi': modwsgi_environ}


def call_app(app, path, environ_factory=make_environ, headers=None):
    """(status, body) of one request through a WSGI application; the
    response's headers are put into the ``headers`` list when one is
    given."""
    statuses = []

    def start_response(status, response_headers, exc_info=None):
        statuses.append(status)
        if headers is not None:
            headers[:] = response_headers
        return lambda data: None

    body = app(environ_factory(path), start_response)
    try:
        data = b''.join(body)
    finally:
        close = getattr(body, 'close', None)
        if close is not None:
            close()
    return (statuses[-1] if statuses else None), data


class RegistryWithout(PipelineRegistry):
    """A copy of a registry without the registrations of one stage.

    The removed name still counts as a known stage, so the before/after
    constraints that mention it stay satisfiable.
    """

    def __init__(self, original, name):
        super().__init__()
        self.stages = [registration for registration in original.stages
                       if registration.name != name]
        self.request_factories = list(original.request_factories)
        self.known_names = original.stage_names()

    def stage_names(self):
        return set(self.known_names)


def per_request_us(function, iterations):
    """CPU microseconds of this process per call, over ``iterations`` calls
    (CPU time, not wall time: other processes on a shared machine do not
    count)."""
    start = time.process_time()
    for _ in range(iterations):
        function()
    return (time.process_time() - start) / iterations * 1e6


def time_paired(reference, variants, iterations, batches, log=None):
    """Time each variant right after a batch of ``reference``.

    Returns (reference samples, {variant: samples}, {variant: reference
    minus variant, per pair}): the paired differences cancel most of the
    drift of a shared machine.
    """
    reference_samples = []
    samples = {name: [] for name in variants}
    differences = {name: [] for name in variants}
    for batch in range(batches):
        for name, function in variants.items():
            before = per_request_us(reference, iterations)
            value = per_request_us(function, iterations)
            reference_samples.append(before)
            samples[name].append(value)
            differences[name].append(before - value)
        if log is not None:
            log('batch %d of %d' % (batch + 1, batches))
    return reference_samples, samples, differences


def quartiles(values):
    """(first quartile, median, third quartile) of batch timings."""
    ordered = sorted(values)
    last = len(ordered) - 1
    return tuple(ordered[round(last * share)] for share in (0.25, 0.5, 0.75))


def spread(values):
    """(median, half the interquartile range) of batch timings."""
    first, middle, third = quartiles(values)
    return middle, (third - first) / 2


class Bench:
    """The site loaded once, with its publisher and database."""

    def __init__(self, site_zcml, app_settings, path):
        from zope.pipeline.app import load_zcml
        from zope.pipeline.engine.settings import split_settings
        self.path = path
        self.registry = load_zcml(site_zcml)
        _, self.settings = split_settings(app_settings)
        self.settings.setdefault('open_root', {})['zodb_config'] = ''
        self.full = self.publisher(self.registry)
        self.status, self.body = call_app(self.full, path)
        if not self.status.startswith('200'):
            raise SystemExit('The full pipeline answered %s for %s:\n%s' % (
                self.status, path, self.body[:2000].decode('utf-8',
                                                           'replace')))

    def publisher(self, registry, settings=None):
        from zope.pipeline.engine.publisher import Publisher
        return Publisher(registry, self.settings if settings is None
                         else settings, 'the benchmark settings')

    def browser_chain(self):
        """The inner chain a GET of the page goes through."""
        from zope.interface import providedBy
        environ = make_environ(self.path)
        registration = self.registry.choose_request_factory(environ)
        request = registration.factory(environ['wsgi.input'], environ)
        try:
            return self.full.chain_for(providedBy(request))
        finally:
            request.close()

    def stage_names(self):
        """(name, outer?) of every stage a GET of the page goes through."""
        outer = [(stage.name, True) for stage in self.full.outer.stages]
        inner = [(stage.name, False) for stage in self.browser_chain().stages]
        return outer + inner

    def request(self, environ_factory=make_environ):
        return call_app(self.full, self.path, environ_factory)

    def variant_without(self, name):
        """(callable, note) for the pipeline without ``name``; callable is
        None when the page cannot be served without it."""
        settings = {stage: values for stage, values in self.settings.items()
                    if stage != name}
        try:
            publisher = self.publisher(RegistryWithout(self.registry, name),
                                       settings)
            status, body = call_app(publisher, self.path)
        except Exception as error:  # reported, not hidden
            return None, 'required (%s: %s)' % (type(error).__name__, error)
        finally:
            self.restore_registry()
        if not status.startswith('200'):
            return None, 'required (the page answers %s without it)' % status
        note = '' if body == self.body else 'the body differs without it'
        return (lambda: call_app(publisher, self.path)), note

    def restore_registry(self):
        from zope.component import provideUtility

        from zope.pipeline.interfaces import IPipelineRegistry
        provideUtility(self.registry, IPipelineRegistry)

    # -- the view, called directly

    def open_root_database(self):
        for stage in self.browser_chain().stages:
            if stage.name == 'open_root':
                return stage.app.database, stage.app.root_name
        raise SystemExit('The browser pipeline has no open_root stage.')

    def direct_view(self, proxied=True):
        """A callable rendering the page's default view with no pipeline:
        a request, a security interaction and the local site (the view may
        need both), the view looked up by its default name and called.

        ``proxied``: the context and view in security proxies, as traversal
        hands them to the pipeline's call stage (what Zope's security costs
        is then part of the view, not of the pipeline).
        """
        from zope.component import getMultiAdapter
        from zope.component.hooks import setSite
        from zope.location.interfaces import ISite
        from zope.publisher.browser import TestRequest
        from zope.publisher.defaultview import getDefaultViewName
        from zope.security.checker import ProxyFactory
        from zope.security.management import endInteraction
        from zope.security.management import newInteraction

        database, root_name = self.open_root_database()
        connection = database.get().open()
        root = connection.root()[root_name]
        context = root
        for name in self.path.strip('/').split('/'):
            context = context[name]
        site = root if ISite.providedBy(root) else None
        view_name = getDefaultViewName(context, TestRequest())
        wrap = ProxyFactory if proxied else (lambda ob: ob)
        context = wrap(context)
        principal = unauthenticated_principal()

        def render():
            request = TestRequest()
            request.setPrincipal(principal)
            newInteraction(request)
            setSite(site)
            try:
                view = wrap(getMultiAdapter((context, request),
                                            name=view_name))
                body = view()
            finally:
                setSite(None)
                endInteraction()
            return body.encode('utf-8') if isinstance(body, str) else body

        self.direct_body = render()
        return render


def unauthenticated_principal():
    """The principal an anonymous request gets (None without one)."""
    from zope.authentication.interfaces import IAuthentication
    from zope.component import queryUtility
    authentication = queryUtility(IAuthentication)
    if authentication is None:
        return None
    return authentication.unauthenticatedPrincipal()


def profile(function, iterations, path, top=40):
    """Profile ``iterations`` calls; write the report to ``path``."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(iterations):
        function()
    profiler.disable()
    output = io.StringIO()
    output.write('cProfile of %d requests through the full pipeline\n\n'
                 % iterations)
    for key in ('cumulative', 'tottime'):
        output.write('=== sorted by %s ===\n' % key)
        pstats.Stats(profiler, stream=output).strip_dirs().sort_stats(
            key).print_stats(top)
    with open(path, 'w') as report:
        report.write(output.getvalue())


def measure(site_zcml, app_settings, path, iterations, batches,
            profile_path=None, log=None):
    bench = Bench(site_zcml, app_settings, path)
    variants = {}
    stages = []
    for name, outer in bench.stage_names():
        function, note = bench.variant_without(name)
        stages.append({'name': name, 'outer': outer, 'note': note})
        if function is not None:
            variants['without ' + name] = function
    variants['direct'] = bench.direct_view(proxied=True)
    variants['direct unproxied'] = bench.direct_view(proxied=False)
    # templates compiled, caches filled
    time_paired(bench.request, variants, 10, 1)
    full, samples, differences = time_paired(bench.request, variants,
                                             iterations, batches, log)
    for stage in stages:
        key = 'without ' + stage['name']
        stage['without_us'] = spread(samples[key])[0] if key in samples \
            else None
        stage['cost_us'], stage['spread_us'] = (
            spread(differences[key]) if key in samples else (None, None))
    if profile_path:
        profile(bench.request, iterations * 2, profile_path)
    return {
        'path': path, 'iterations': iterations, 'batches': batches,
        'full_us': spread(full)[0],
        'direct_us': spread(samples['direct'])[0],
        'direct_unproxied_us': spread(samples['direct unproxied'])[0],
        'overhead_us': spread(differences['direct'])[0],
        # half the interquartile range of the full pipeline's batches
        'noise_us': spread(full)[1],
        'page_bytes': len(bench.body),
        'direct_bytes': len(bench.direct_body), 'stages': stages,
        'profile': profile_path,
    }


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('site_zcml')
    parser.add_argument('--settings', default='{}',
                        help='the app settings (ini keys) as JSON')
    parser.add_argument('--path', default='/folder/page')
    parser.add_argument('--iterations', type=int, default=300)
    parser.add_argument('--batches', type=int, default=7)
    parser.add_argument('--profile', help='where to write the profile')
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    # variants without a stage fail on purpose; their errors are expected
    logging.disable(logging.CRITICAL)
    try:
        result = measure(args.site_zcml, json.loads(args.settings),
                         args.path, args.iterations, args.batches,
                         args.profile,
                         log=lambda text: print(text, file=sys.stderr))
    finally:
        logging.disable(logging.NOTSET)
    print(json.dumps(result))
    return 0


if __name__ == '__main__':  # pragma: no cover - run by the harness
    raise SystemExit(main())
