"""The metrics admin page in headless Chromium, with a screenshot.

The page is served by waitress on 127.0.0.1 from the full pipeline, over
ten minutes of synthetic history (three views with changing load and
latency, retries, a stretch of unknown steps, and mod_wsgi's utilisation
beside ours).  Chromium renders it twice: once to dump the DOM it built,
once to save ``test-artifacts/metrics-page.png``.  A third rendering, of
the page's HTML saved with a measuring script added (the page itself has
none), reads every legend's box with getBoundingClientRect.
"""

import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import threading
import time
import urllib.request
import zlib

import pytest
import waitress.server
from conftest import ROOT
from conftest import need

from zope.pipeline.metrics.collector import Collector

HERE = os.path.dirname(os.path.abspath(__file__))
SCREENSHOT = os.path.join(ROOT, 'test-artifacts', 'metrics-page.png')

CHROMIUM_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu',
                  '--disable-quic', '--no-first-run',
                  '--disable-background-networking',
                  '--disable-component-update', '--disable-sync',
                  '--hide-scrollbars', '--window-size=1580,1000')

#: (view, requests per second at the peak, median latency in seconds).
VIEWS = (('Folder:index.html', 12.0, 0.008), ('Document:edit.html', 3.0,
                                              0.04),
         ('File:download', 0.6, 0.35),
         ('MemberWorkspace:QUARTERLY-REVENUE-BY-REGION.html', 0.4, 0.9))
#: Every this many requests, one ends 500 and one 404 (per view).
ERROR_EVERY = 9


class FakeClock:

    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def synthetic_history(end, steps=60, step=10.0, threads=4):
    """A collector holding ``steps`` steps of made-up load before ``end``."""
    generator = random.Random(42)
    start = math.floor(end / step) * step - steps * step
    clock = FakeClock(start)
    collector = Collector(step=step, threads=threads, clock=clock)
    for index in range(steps):
        moment = start + index * step
        if 38 <= index < 41:            # the process was stopped: unknown
            continue
        wave = 0.55 + 0.45 * math.sin(index / 7.0)
        for view, peak, median in VIEWS:
            for number in range(int(peak * wave * step)):
                begin = moment + generator.uniform(0, step - 0.5)
                duration = generator.lognormvariate(
                    math.log(median * (0.6 + wave)), 0.5)
                record = collector.begin(begin)
                record.view = view
                record.status = ('500 Internal Server Error'
                                 if number % ERROR_EVERY == 1 else
                                 '404 Not Found'
                                 if number % ERROR_EVERY == 2 else '200 OK')
                record.bytes = 2000
                record.attempt = 2 if generator.random() < 0.04 * wave else 1
                collector.finish(record, begin + duration)
        collector.advance(moment + step)
        ours = collector.utilization(moment)
        if ours is not None:
            # mod_wsgi also counts the time before and after the pipeline.
            collector.add_server_utilization(moment, moment + step,
                                             ours * 1.15 + 0.02, threads)
    return collector


def install(publisher, collector):
    """Let the publisher's metrics stage go on from ``collector``."""
    stage = publisher.outer.stages[0].app
    collector.clock = time.time
    stage.clock = time.time
    stage.collector = stage.runtime.collector = collector


@pytest.fixture
def server(clean_zope):
    from zope.pipeline.app import make_app
    publisher = make_app(os.path.join(HERE, 'site.zcml'), {
        'metrics': {'modwsgi': 'false', 'flush_interval': '3600'}})
    install(publisher, synthetic_history(time.time()))
    server = waitress.server.create_server(publisher, host='127.0.0.1',
                                           port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%s' % server.effective_port
    server.close()
    thread.join(5)


def chromium(*arguments, user_data_dir):
    executable = shutil.which('chromium') or shutil.which('chromium-browser')
    need(executable, 'Debian package chromium is not installed')
    command = [executable, *CHROMIUM_FLAGS,
               '--user-data-dir=%s' % user_data_dir, *arguments]
    return subprocess.run(command, capture_output=True, timeout=90,
                          text=True, check=True)


def png_size_and_colours(path):
    """(width, height, distinct bytes of the decoded rows) of a PNG."""
    with open(path, 'rb') as source:
        data = source.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    width, height = struct.unpack('>II', data[16:24])
    position, pixels = 8, b''
    while position < len(data):
        length, kind = struct.unpack('>I4s', data[position:position + 8])
        if kind == b'IDAT':
            pixels += data[position + 8:position + 8 + length]
        position += 12 + length
    return width, height, len(set(zlib.decompress(pixels)))


def test_the_metrics_page_renders_its_charts_in_chromium(server, tmp_path):
    url = server + '/metrics.html'
    dom = chromium('--dump-dom', url,
                   user_data_dir=str(tmp_path / 'profile-dom')).stdout
    assert dom.count('<svg') == 5
    assert dom.count('<polyline') > 20
    for label in ('Folder:index.html', 'p99 File:download', 'mod_wsgi',
                  'all views', 'p99 ' + VIEWS[-1][0]):
        assert '>%s</text>' % label in dom
    assert '<th>p50 ms</th><th>p99 ms</th>' in dom
    assert 'http-equiv="refresh"' not in dom
    os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
    if os.path.exists(SCREENSHOT):
        os.unlink(SCREENSHOT)
    chromium('--screenshot=%s' % SCREENSHOT, url,
             user_data_dir=str(tmp_path / 'profile-shot'))
    width, height, colours = png_size_and_colours(SCREENSHOT)
    assert (width, height) == (1580, 1000)
    assert colours > 50      # charts, not a blank or error page


#: Added to a saved copy of the page: the boxes of every chart, its
#: legend, the legend's entries and texts, and what the legend must not
#: cover (titles, axis labels, the plot area, the lines), as JSON.
MEASURE = """<script>
function box(element) {
  var r = element.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
          what: element.tagName + '.' + (element.getAttribute('class') || '')
                + ' ' + (element.textContent || '').slice(0, 40)};
}
var charts = [];
document.querySelectorAll('svg.chart').forEach(function (svg) {
  var legend = svg.querySelector('g.legend');
  charts.push({
    chart: box(svg),
    legend: legend ? box(legend) : null,
    entries: Array.from(svg.querySelectorAll('g.legend-entry')).map(box),
    texts: Array.from(svg.querySelectorAll('text.legend')).map(box),
    others: Array.from(svg.querySelectorAll(
      'text.title, text.tick, text.empty, rect.plot, polyline, circle'
    )).map(box)});
});
var out = document.createElement('pre');
out.id = 'layout';
out.textContent = JSON.stringify({body: box(document.body), charts: charts});
document.body.appendChild(out);
</script>"""


def overlap(one, other):
    """Whether two boxes share more than a hair's breadth of area."""
    return (min(one['right'], other['right']) - max(one['left'],
                                                    other['left']) > 0.5
            and min(one['bottom'], other['bottom'])
            - max(one['top'], other['top']) > 0.5)


def inside(one, other):
    return (one['left'] >= other['left'] - 0.5
            and one['right'] <= other['right'] + 0.5
            and one['top'] >= other['top'] - 0.5
            and one['bottom'] <= other['bottom'] + 0.5)


def measured_layout(url, tmp_path, window_size, script=MEASURE,
                    name='measured'):
    """What ``script`` (which writes JSON into ``<pre id="layout">``)
    finds in the page at ``url``, laid out by Chromium in a window of
    ``window_size`` ('WIDTH,HEIGHT')."""
    with urllib.request.urlopen(url, timeout=30) as response:
        page = response.read().decode('utf-8')
    assert '<script' not in page        # the page runs none of its own
    copy = tmp_path / ('%s-%s.html' % (name, window_size.replace(',', 'x')))
    copy.write_text(page.replace('</body>', script + '</body>'))
    dom = chromium('--window-size=%s' % window_size, '--dump-dom',
                   copy.as_uri(),
                   user_data_dir=str(tmp_path / 'profile-measure')).stdout
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(found.group(1).replace('&quot;', '"')
                      .replace('&lt;', '<').replace('&gt;', '>')
                      .replace('&amp;', '&'))


@pytest.mark.parametrize('window_size', ['1580,1000', '900,1000'])
def test_legends_lie_inside_their_charts_and_cover_nothing(
        server, tmp_path, window_size):
    layout = measured_layout(server + '/metrics.html', tmp_path,
                             window_size)
    charts = layout['charts']
    assert len(charts) == 5
    width = int(window_size.split(',')[0])
    for chart in charts:
        legend = chart['legend']
        assert legend is not None and chart['entries']
        assert inside(legend, chart['chart']), (legend, chart['chart'])
        for text in chart['texts']:            # names whole, not cut
            assert inside(text, chart['chart']), text
        for other in chart['others']:
            assert not overlap(legend, other), (legend, other)
        entries = chart['entries']
        for index, entry in enumerate(entries):
            for later in entries[index + 1:]:
                assert not overlap(entry, later), (entry, later)
    # The charts use the page's width: the widest row of charts spans
    # the body, whatever the window.
    body = layout['body']
    rows = {}
    for chart in charts:
        box = chart['chart']
        rows.setdefault(round(box['top']), []).append(box)
    widest = max(max(box['right'] for box in row)
                 - min(box['left'] for box in row) for row in rows.values())
    assert widest >= (body['right'] - body['left']) * 0.97
    assert widest >= width * 0.85


def test_the_page_reloads_itself_only_when_asked(server):
    for query, meta in (('?refresh=10', 'content="10"'),
                        ('?refresh=1', 'content="5"'),
                        ('?refresh=%3Cb%3E', None)):
        with urllib.request.urlopen(server + '/metrics.html' + query,
                                    timeout=30) as response:
            page = response.read().decode('utf-8')
        refresh = re.search(r'<meta http-equiv="refresh" ([^>]*)>', page)
        assert (refresh and refresh.group(1)) == meta
        assert '<b>' not in page
