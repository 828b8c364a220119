"""What the metrics stages cost per request, in process.

Two publishers are built from the same ZCML (the benchmark site's
``/folder/page``, an in-memory database): the full pipeline, and the same
without the ``metrics`` stage.  Requests go to them
alternately, one by one, in ABBA order (whichever goes first in a pair is
measurably faster or slower, and a shared machine's load changes from
second to second); each request's CPU time is taken.  Every 100 requests
the metrics publisher's collector is drained and aggregated, as its
worker does in the background, and that time is counted to it.  The
overhead is the mean of the differences (so GC pauses count) and, as a
check, the median of the paired differences.

The stage alone is also timed around a trivial application (a one-chunk
iterable body), which isolates its own cost from the page's noise.

Run: ``python -m benchmarks.metrics_overhead [--pairs N] [--json]``.
Targets: below 5% of the per-request cost and below 20 microseconds.
"""

import argparse
import json
import os
import statistics
import sys
import time

from benchmarks.inprocess import RegistryWithout
from benchmarks.inprocess import call_app
from benchmarks.inprocess import make_environ

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SITE = os.path.join(ROOT, 'benchmarks', 'minimal_site', 'site.zcml')
SETTINGS = {'open_root': {'zodb_config': '',
                          'populate': 'benchmarks.minimal_site.content.'
                                      'populate'},
            'metrics': {'modwsgi': 'false', 'flush_interval': '3600'}}
PATH = '/folder/page'
TARGET_SHARE = 0.05
TARGET_US = 20.0


def metrics_stage_of(publisher):
    (stage,) = [stage.app for stage in publisher.outer.stages
                if stage.name == 'metrics']
    return stage


def build():
    """(publisher with metrics, publisher without) of the benchmark site."""
    from zope.pipeline.app import load_zcml
    from zope.pipeline.engine.publisher import Publisher
    registry = load_zcml(SITE)
    without = RegistryWithout(registry, 'metrics')
    bare_settings = {name: values for name, values in SETTINGS.items()
                     if name != 'metrics'}
    bare = Publisher(without, bare_settings, 'the benchmark settings')
    full = Publisher(registry, SETTINGS, 'the benchmark settings')
    for publisher in (full, bare):
        status, body = call_app(publisher, PATH)
        if not status.startswith('200'):
            raise SystemExit('%s answered %s' % (PATH, status))
    return full, bare


def one_request_us(app):
    start = time.process_time()
    call_app(app, PATH)
    return (time.process_time() - start) * 1e6


def compare(full, bare, pairs, drain, drain_every=100):
    """Per-request CPU microseconds of both publishers, alternating request
    by request in ABBA order (so neither is always first), the metrics
    publisher's drain (every ``drain_every`` requests) counted to it.

    Returns the means, the mean of the paired differences (GC pauses and
    all) and their median per order, averaged over both orders.
    """
    totals = {'with': 0.0, 'without': 0.0}
    differences = {True: [], False: []}
    for number in range(pairs):
        full_first = number % 2 == 0
        if full_first:
            with_metrics = one_request_us(full)
            without = one_request_us(bare)
        else:
            without = one_request_us(bare)
            with_metrics = one_request_us(full)
        if number % drain_every == drain_every - 1:
            start = time.process_time()
            drain()
            with_metrics += (time.process_time() - start) * 1e6
        totals['with'] += with_metrics
        totals['without'] += without
        differences[full_first].append(with_metrics - without)
    return {
        'with': totals['with'] / pairs,
        'without': totals['without'] / pairs,
        'difference': (totals['with'] - totals['without']) / pairs,
        'median_difference': statistics.mean(
            statistics.median(values) for values in differences.values()),
    }


def trivial_app(environ, start_response):
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return iter([b'hello'])


def stage_alone(requests, batches):
    """(us per request of the trivial app, with the stage around it)."""
    from zope.pipeline.stages.metrics import MetricsStage
    stage = MetricsStage(trivial_app, modwsgi=False, flush_interval=3600)
    stage.runtime.running = True        # no worker: drained below
    environ = make_environ('/')
    timings = {'with': [], 'without': []}

    def run(app, drain=None):
        start = time.process_time()
        for _ in range(requests):
            body = app(dict(environ), lambda status, headers, info=None: None)
            for _chunk in body:
                pass
            close = getattr(body, 'close', None)
            if close is not None:
                close()
        if drain is not None:
            drain()
        return (time.process_time() - start) / requests * 1e6
    for _ in range(batches):
        timings['without'].append(run(trivial_app))
        timings['with'].append(run(stage, stage.collector.advance))
    return {name: statistics.median(values)
            for name, values in timings.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--pairs', type=int, default=4000,
                        help='requests to each publisher (default 4000)')
    parser.add_argument('--batches', type=int, default=9,
                        help='batches of the stage-alone timing (default 9)')
    parser.add_argument('--json', action='store_true',
                        help='print the figures as JSON')
    options = parser.parse_args(argv)
    full, bare = build()
    drain = metrics_stage_of(full).runtime.flush
    page = compare(full, bare, options.pairs, drain)
    alone = stage_alone(10000, options.batches)
    overhead = page['difference']
    result = {
        'page_us_without_metrics': round(page['without'], 2),
        'page_us_with_metrics': round(page['with'], 2),
        'overhead_us': round(overhead, 2),
        'overhead_share': round(overhead / page['without'], 4),
        'overhead_median_pair_us': round(page['median_difference'], 2),
        'stage_alone_us': round(alone['with'] - alone['without'], 2),
        'pairs': options.pairs,
        'within_targets': overhead / page['without'] < TARGET_SHARE and
        overhead < TARGET_US,
    }
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        print('GET %s, in process, %d requests to each publisher, '
              'alternating (CPU time):' % (PATH, options.pairs))
        print('  without metrics  %8.2f us/request (mean)' % page['without'])
        print('  with metrics     %8.2f us/request (mean)' % page['with'])
        print('  overhead         %8.2f us/request (mean; %.2f%%; targets: '
              '< %d%% and < %g us)' % (overhead, 100 * result[
                  'overhead_share'], TARGET_SHARE * 100, TARGET_US))
        print('  overhead         %8.2f us/request (median of the pairs)'
              % page['median_difference'])
        print('  the stage alone  %8.2f us/request (around a trivial app)'
              % result['stage_alone_us'])
    return 0 if result['within_targets'] else 1


if __name__ == '__main__':
    sys.exit(main())
