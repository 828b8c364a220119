"""What the metrics stages cost per request, in process.

Two publishers are built from the same ZCML (the benchmark site's
``/folder/page``, an in-memory database): the full pipeline, and the same
without the ``metrics`` and ``metrics_view`` stages.  They are timed in
pairs of batches, in alternating order (CPU time of this process, so the
background work counts wherever it runs); after each batch the metrics
publisher's collector is drained and aggregated, as its worker would do,
inside the timing.  The overhead is the median of the paired differences,
which a shared machine's changing load disturbs less than the difference
of the medians.

The stage alone is also timed around a trivial application (a one-chunk
iterable body), which isolates its own cost from the page's noise.

Run: ``python -m benchmarks.metrics_overhead [--requests N] [--batches B]``.
Targets: below 5% of the per-request cost and below 20 microseconds.
"""

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.inprocess import RegistryWithout  # noqa: E402
from benchmarks.inprocess import call_app  # noqa: E402
from benchmarks.inprocess import make_environ  # noqa: E402

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
    from zope.pipeline.publisher import Publisher
    registry = load_zcml(SITE)
    without = RegistryWithout(RegistryWithout(registry, 'metrics'),
                              'metrics_view')
    bare_settings = {name: values for name, values in SETTINGS.items()
                     if name != 'metrics'}
    bare = Publisher(without, bare_settings, 'the benchmark settings')
    full = Publisher(registry, SETTINGS, 'the benchmark settings')
    for publisher in (full, bare):
        status, body = call_app(publisher, PATH)
        if not status.startswith('200'):
            raise SystemExit('%s answered %s' % (PATH, status))
    return full, bare


def batch_us(app, requests, drain=None):
    """CPU microseconds per request of one batch (drain included)."""
    start = time.process_time()
    for _ in range(requests):
        call_app(app, PATH)
    if drain is not None:
        drain()
    return (time.process_time() - start) / requests * 1e6


def compare(full, bare, requests, batches, drain):
    """Medians of each variant and of the paired differences (a batch
    with metrics minus the batch without it just before or after)."""
    timings = {'with': [], 'without': [], 'difference': []}
    for batch in range(batches):
        if batch % 2:
            with_metrics = batch_us(full, requests, drain)
            without = batch_us(bare, requests)
        else:
            without = batch_us(bare, requests)
            with_metrics = batch_us(full, requests, drain)
        timings['with'].append(with_metrics)
        timings['without'].append(without)
        timings['difference'].append(with_metrics - without)
    return {name: statistics.median(values)
            for name, values in timings.items()}


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
    parser.add_argument('--requests', type=int, default=300,
                        help='requests per batch (default 300)')
    parser.add_argument('--batches', type=int, default=31,
                        help='pairs of batches (default 31)')
    parser.add_argument('--json', action='store_true',
                        help='print the figures as JSON')
    options = parser.parse_args(argv)
    full, bare = build()
    drain = metrics_stage_of(full).runtime.flush
    page = compare(full, bare, options.requests, options.batches, drain)
    alone = stage_alone(options.requests * 10, options.batches)
    overhead = page['difference']
    result = {
        'page_us_without_metrics': round(page['without'], 2),
        'page_us_with_metrics': round(page['with'], 2),
        'overhead_us': round(overhead, 2),
        'overhead_share': round(overhead / page['without'], 4),
        'stage_alone_us': round(alone['with'] - alone['without'], 2),
        'requests_per_batch': options.requests,
        'batches': options.batches,
        'within_targets': overhead / page['without'] < TARGET_SHARE and
        overhead < TARGET_US,
    }
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        print('GET %s, in process, medians over %d pairs of batches of %d '
              'requests (CPU time):' % (PATH, options.batches,
                                        options.requests))
        print('  without metrics  %8.2f us/request' % page['without'])
        print('  with metrics     %8.2f us/request' % page['with'])
        print('  overhead         %8.2f us/request (%.2f%%; targets: < %d%% '
              'and < %g us)' % (overhead, 100 * result['overhead_share'],
                                TARGET_SHARE * 100, TARGET_US))
        print('  the stage alone  %8.2f us/request (around a trivial app)'
              % result['stage_alone_us'])
    return 0 if result['within_targets'] else 1


if __name__ == '__main__':
    sys.exit(main())
