"""The per-request cost of the pipeline engine itself, measured in-process.

Three WSGI applications answer the same prepared GET environ:

* ``bare``: the terminal application alone;
* ``pipeline-0``: a Publisher compiled from ZCML with the outer stage
  ``create_request`` (it makes a zope.publisher request), the switch and
  the terminal stage;
* ``pipeline-N``: the same with N pass-through inner stages (12 by default)
  between the switch and the terminal stage.

``pipeline-N`` minus ``pipeline-0`` is the cost of N stages, since both
share the outer part; divided by N it is the cost of one stage.  Making
the request costs far more than N stages, so the same difference is also
taken from the switch on (the request made once beforehand): that is the
engine alone, with much less noise.  The two pipelines are timed in
alternating batches, so a change of load on a shared machine hits both
alike; each figure is the median over the repeats.

Run it with ``python -m benchmarks.engine_overhead [--number N]
[--repeat R] [--rounds B] [--stages S]``.  Target: at most 1 microsecond
per stage.
"""

import argparse
import io
import statistics
import timeit

from zope.configuration import config
from zope.configuration import xmlconfig

from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.interfaces import REQUEST_KEY

#: The issue's pipeline: 12 pass-through stages.
STAGES = 12
#: The figure the engine must stay under, in nanoseconds per stage.
TARGET_NS_PER_STAGE = 1000

BODY = [b'terminal']
HEADERS = [('Content-Type', 'text/plain'), ('Content-Length', '8')]


class PassThrough:
    """A stage that does nothing but call the next one."""

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        return self.next_app(environ, start_response)


def terminal_app(environ, start_response):
    """The application at the end of every measured chain."""
    start_response('200 OK', HEADERS)
    return BODY


def terminal_stage(next_app, build=None):
    """Stage factory for the end of the chain: it never calls ``next_app``."""
    return terminal_app


def site_zcml(stages):
    """Return the ZCML of a site with ``stages`` pass-through stages."""
    lines = [
        '<configure xmlns="http://namespaces.zope.org/zope"',
        '           xmlns:pipeline="http://namespaces.zope.org/pipeline">',
        '  <include package="zope.pipeline" file="meta.zcml" />',
        '  <pipeline:requestFactory name="browser" methods="GET"',
        '      factory="zope.pipeline.engine.factories.browser" />',
        '  <pipeline:stage name="create_request" factory='
        '"zope.pipeline.stages.create_request.CreateRequestStage" />',
    ]
    for number in range(1, stages + 1):
        lines.append(
            '  <pipeline:stage name="pass_%d" for="zope.publisher.interfaces'
            '.IRequest" factory="benchmarks.engine_overhead.PassThrough" />'
            % number)
    lines.append(
        '  <pipeline:stage name="terminal" for="zope.publisher.interfaces'
        '.IRequest" factory="benchmarks.engine_overhead.terminal_stage" />')
    lines.append('</configure>')
    return '\n'.join(lines)


def build_publisher(stages):
    """Compile a Publisher for a site with ``stages`` pass-through stages."""
    machine = config.ConfigurationMachine()
    xmlconfig.registerCommonDirectives(machine)
    xmlconfig.string(site_zcml(stages), context=machine,
                     name='<engine_overhead %d stages>' % stages)
    return Publisher(machine.pipeline_registry)


def base_environ():
    """A GET request's environ; each call works on a copy of it."""
    return {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
            'QUERY_STRING': '', 'SERVER_NAME': 'localhost',
            'SERVER_PORT': '80', 'HTTP_HOST': 'localhost',
            'SERVER_PROTOCOL': 'HTTP/1.1', 'wsgi.url_scheme': 'http',
            'wsgi.input': io.BytesIO(b''), 'wsgi.errors': io.StringIO(),
            'wsgi.version': (1, 0), 'wsgi.multithread': False,
            'wsgi.multiprocess': False, 'wsgi.run_once': False}


def ignore_start(status, headers, exc_info=None):
    return None


def request_once(app, environ):
    """Serve one request the way a server does: call, iterate, close."""
    body = app(dict(environ), ignore_start)
    for _ in body:
        pass
    close = getattr(body, 'close', None)
    if close is not None:
        close()


def check_answers(app, environ):
    """Fail unless ``app`` reaches the terminal application."""
    answer = {}

    def start(status, headers, exc_info=None):
        answer['status'] = status

    body = app(dict(environ), start)
    chunks = list(body)
    getattr(body, 'close', lambda: None)()
    if answer.get('status') != '200 OK' or chunks != BODY:
        raise AssertionError('%r answered %r %r, not the terminal app'
                             % (app, answer.get('status'), chunks))


def time_per_request(app, environ, number):
    """Return nanoseconds per request over ``number`` requests."""
    seconds = timeit.timeit(lambda: request_once(app, environ),
                            number=number)
    return seconds * 1e9 / number


def time_alternating(first, second, environ, number, rounds):
    """Time two apps in alternating batches; return ns per request of each.

    Interleaving the batches lets a change of load on a shared machine hit
    both alike, so their difference stays meaningful.
    """
    batch = max(1, number // rounds)
    totals = [0.0, 0.0]
    for _ in range(rounds):
        for index, app in enumerate((first, second)):
            totals[index] += time_per_request(app, environ, batch)
    return totals[0] / rounds, totals[1] / rounds


def environ_with_request(publisher, environ):
    """``environ`` as the switch sees it: with a request already made."""
    registration, spec = publisher.request_types['browser']
    prepared = dict(environ)
    prepared[REQUEST_KEY] = registration.factory(prepared['wsgi.input'],
                                                 prepared)
    return prepared


def measure(stages=STAGES, number=20000, repeat=7, rounds=10):
    """Time the bare app, pipeline-0 and pipeline-``stages``.

    Returns nanoseconds per request, each the median over ``repeat``
    timings: ``bare``, ``pipeline_0``, ``pipeline_n`` (whole publishers),
    ``switch_0``, ``switch_n`` (from the switch on: the inner chain with
    the request already made), and per stage the median of the per-repeat
    differences: ``per_stage`` (whole publishers) and ``per_stage_inner``
    (inner chains: the engine alone, without request creation's noise).
    """
    if stages < 1:
        raise ValueError('measure at least one pass-through stage')
    environ = base_environ()
    empty, full = build_publisher(0), build_publisher(stages)
    for app in (terminal_app, empty, full):
        check_answers(app, environ)
    switch_environ = environ_with_request(empty, environ)
    samples = {name: [] for name in ('bare', 'pipeline_0', 'pipeline_n',
                                     'switch_0', 'switch_n')}
    for _ in range(repeat):
        samples['bare'].append(time_per_request(terminal_app, environ,
                                                number))
        for prefix, apps, env in (
                ('pipeline', (empty, full), environ),
                ('switch', (empty.switch, full.switch), switch_environ)):
            zero, many = time_alternating(apps[0], apps[1], env, number,
                                          rounds)
            samples[prefix + '_0'].append(zero)
            samples[prefix + '_n'].append(many)
    result = {name: statistics.median(values)
              for name, values in samples.items()}
    result['per_stage'] = per_stage(samples['pipeline_0'],
                                    samples['pipeline_n'], stages)
    result['per_stage_inner'] = per_stage(samples['switch_0'],
                                          samples['switch_n'], stages)
    result['stages'] = stages
    return result


def per_stage(zero, many, stages):
    """The median over repeats of (with stages - without) / stages."""
    return statistics.median((with_stages - without) / stages
                             for without, with_stages in zip(zero, many))


def report(result):
    """Return the measurement as readable lines."""
    return '\n'.join([
        'engine overhead (median of repeats, ns per request):',
        '  bare terminal app:                 %8.0f' % result['bare'],
        '  publisher,  0 pass-through stages: %8.0f' % result['pipeline_0'],
        '  publisher, %2d pass-through stages: %8.0f' % (
            result['stages'], result['pipeline_n']),
        '  from the switch,  0 stages:        %8.0f' % result['switch_0'],
        '  from the switch, %2d stages:        %8.0f' % (
            result['stages'], result['switch_n']),
        '  per stage, whole publisher:        %8.0f' % result['per_stage'],
        '  per stage, inner chain only:       %8.0f' % (
            result['per_stage_inner']),
        '  target: <= %d ns per stage' % TARGET_NS_PER_STAGE,
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks.engine_overhead',
        description=__doc__.split('\n\n')[0])
    parser.add_argument('--stages', type=int, default=STAGES)
    parser.add_argument('--number', type=int, default=20000,
                        help='requests per timing (default 20000)')
    parser.add_argument('--repeat', type=int, default=7,
                        help='timings per application (default 7)')
    parser.add_argument('--rounds', type=int, default=10,
                        help='alternating batches per timing (default 10)')
    args = parser.parse_args(argv)
    result = measure(args.stages, args.number, args.repeat, args.rounds)
    print(report(result))
    return result


if __name__ == '__main__':
    main()
