"""The pipeline page (@@pipeline.html) and a created project's pages in
headless Chromium: layout checks, not pixels.

Each page is rendered once to save a screenshot in test-artifacts/, and
once as a saved copy with a measuring script added (the pages run none of
their own), which reports the boxes Chromium laid out (as
test_metrics_page.py does for the charts).
"""

import os
import pathlib
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
import waitress.server

from tests.browser.test_metrics_page import chromium
from tests.browser.test_metrics_page import measured_layout
from tests.browser.test_metrics_page import png_size_and_colours
from tests.conftest import ROOT
from tests.integration.support import scratch_directory

HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.path.join(ROOT, 'test-artifacts')
WIDTH = 1280

#: Added to a saved copy of a page: the page's width, and the box of
#: every stage, of its chain's section and of what it holds, as JSON.
MEASURE = """<script>
function box(element) {
  var r = element.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
          width: r.width, height: r.height};
}
var stages = Array.from(document.querySelectorAll('li.stage')).map(
  function (element) {
    var section = element.closest('section');
    return {id: element.id, number: +element.dataset.number,
            part: element.classList.contains('outer') ? 'outer' : 'inner',
            section: section.id || section.className, box: box(element),
            container: box(section),
            overflows: element.scrollWidth > element.clientWidth + 1,
            border: getComputedStyle(element).borderLeftColor,
            background: getComputedStyle(element).backgroundColor};
  });
var body = getComputedStyle(document.body);
var out = document.createElement('pre');
out.id = 'layout';
out.textContent = JSON.stringify({
  scrollWidth: document.documentElement.scrollWidth,
  clientWidth: document.documentElement.clientWidth,
  sections: Array.from(document.querySelectorAll('section.chain')).map(
    function (section) { return {id: section.id, className: section.className,
                                 box: box(section)}; }),
  stages: stages,
  body: {margin: body.marginLeft, background: body.backgroundColor,
         font: body.fontFamily},
  content: Array.from(document.body.querySelectorAll('h1, p, ul, li, a')).map(
    function (element) { return {tag: element.tagName, box: box(element)}; })
});
document.body.appendChild(out);
</script>"""


def measured(url, tmp_path, name, width=WIDTH):
    """The layout Chromium gives the page at ``url`` in a window
    ``width`` pixels wide."""
    return measured_layout(url, tmp_path, '%d,1000' % width, MEASURE, name)


def screenshot(url, tmp_path, name, height):
    """Save the page at ``WIDTH`` x ``height`` in test-artifacts/."""
    path = os.path.join(ARTIFACTS, name)
    os.makedirs(ARTIFACTS, exist_ok=True)
    if os.path.exists(path):
        os.unlink(path)
    chromium('--window-size=%d,%d' % (WIDTH, height), '--screenshot=%s' % path,
             url, user_data_dir=str(tmp_path / 'profile-shot'))
    width, shot_height, colours = png_size_and_colours(path)
    assert (width, shot_height) == (WIDTH, height)
    assert colours > 50      # a laid-out page, not a blank or error page


def inside(one, other):
    return (one['left'] >= other['left'] - 0.5
            and one['right'] <= other['right'] + 0.5
            and one['top'] >= other['top'] - 0.5
            and one['bottom'] <= other['bottom'] + 0.5)


# -- the pipeline page


@pytest.fixture
def sample(clean_zope):
    """The sample site (etc/site.zcml) served by waitress on loopback:
    (its URL, the chains its publisher describes)."""
    from zope.pipeline.app import make_app
    publisher = make_app(os.path.join(HERE, 'sample.zcml'), {
        'metrics': {'modwsgi': 'false', 'flush_interval': '3600'}})
    server = waitress.server.create_server(publisher, host='127.0.0.1',
                                           port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield ('http://127.0.0.1:%s' % server.effective_port,
           publisher.describe())
    server.close()
    thread.join(5)


def test_the_pipeline_page_shows_every_chain_as_boxes_in_chromium(
        sample, tmp_path):
    url, described = sample
    url += '/@@pipeline.html'
    screenshot(url, tmp_path, 'pipeline-page.png', 3000)
    layout = measured(url, tmp_path, 'pipeline')
    # Readable at 1280 pixels without scrolling sideways.
    assert layout['scrollWidth'] <= WIDTH, layout['scrollWidth']
    stages = {stage['id']: stage for stage in layout['stages']}
    sections = {section['id'] for section in layout['sections']}
    request_types = described['request_types']
    assert len(request_types) >= 3
    for name, info in request_types.items():
        assert 'request-type-%s' % name in sections
        outer = [stages['outer-%s' % stage['name']]
                 for stage in info['stages'] if stage['part'] == 'outer']
        inner = [stages['%s-%s' % (name, stage['name'])]
                 for stage in info['stages'] if stage['part'] == 'inner']
        assert outer and inner
        # Every stage of the compiled chain, numbered in its order, has a
        # visible box inside its chain's section, its content inside it.
        chain = outer + inner
        assert [stage['number'] for stage in chain] == list(
            range(1, len(chain) + 1))
        for stage in chain:
            assert stage['box']['width'] > 50 and stage['box']['height'] > 20
            assert inside(stage['box'], stage['container']), stage
            assert stage['box']['right'] <= WIDTH
            assert not stage['overflows'], stage
        assert {stage['section'] for stage in outer} == {'chain outer'}
        assert {stage['section'] for stage in inner} == {
            'request-type-%s' % name}
        # The outer chain flows left to right, then down; the inner one
        # top to bottom, below the outer one.
        for before, after in zip(outer, outer[1:]):
            one, other = before['box'], after['box']
            assert (other['top'] >= one['bottom']
                    or (abs(other['top'] - one['top']) < 1
                        and other['left'] >= one['right'])), (before, after)
        assert inner[0]['box']['top'] >= max(stage['box']['bottom']
                                             for stage in outer)
        for before, after in zip(inner, inner[1:]):
            assert after['box']['top'] >= before['box']['bottom']
    # Outer and inner stages look different.
    borders = {}
    for stage in layout['stages']:
        borders.setdefault(stage['part'], set()).add(stage['border'])
    assert len(borders['outer']) == len(borders['inner']) == 1
    assert borders['outer'] != borders['inner']
    # The request types' chains stand side by side at this width.
    tops = {round(section['box']['top']) for section in layout['sections']
            if 'request-type' in section['className']}
    assert len(tops) == 1


# -- a created project's pages


@pytest.fixture(scope='module')
def created_site():
    """`zope-pipeline create`, then `zope-pipeline serve etc/deploy.ini` in
    the project (waitress, a free port; in a directory the daemon user
    can read, as serve run by root requires): its URL."""
    with scratch_directory() as directory:
        yield from serving_created_project(pathlib.Path(directory))


def serving_created_project(directory):
    from zope.pipeline.cli import main
    project = directory / 'newsite'
    assert main(['create', str(project)]) == 0
    with socket_on_loopback() as port:
        pass
    env = dict(os.environ, PYTHONPATH=str(project / 'src'))
    command = [os.path.join(os.path.dirname(sys.executable), 'zope-pipeline'),
               'serve', 'etc/deploy.ini', '--port', str(port)]
    process = subprocess.Popen(command, cwd=project, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        url = 'http://127.0.0.1:%d' % port
        wait_for(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(30)
        process.stdout.close()


def socket_on_loopback():
    import socket
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))

    class Port:
        def __enter__(self):
            return probe.getsockname()[1]

        def __exit__(self, *exc_info):
            probe.close()
    return Port()


def wait_for(url, process, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stdout.read())
        try:
            with urllib.request.urlopen(url + '/', timeout=5):
                return
        except OSError:
            time.sleep(0.25)
    raise AssertionError('%s did not answer within %d s' % (url, seconds))


@pytest.mark.parametrize('path', ['/', '/welcome'])
def test_a_created_projects_pages_are_styled_in_chromium(
        created_site, tmp_path, path):
    url = created_site + path
    name = 'created-%s' % (path.strip('/') or 'front')
    screenshot(url, tmp_path, name + '.png', 900)
    layout = measured(url, tmp_path, name)
    assert layout['scrollWidth'] <= WIDTH, layout['scrollWidth']
    # The stylesheet applies: the body is not Chromium's default (8 px
    # margin, transparent, a serif font).
    body = layout['body']
    assert body['margin'] != '8px'
    assert body['background'] not in ('rgba(0, 0, 0, 0)', 'transparent')
    assert 'serif' not in body['font'].replace('sans-serif', '')
    # Its text is set in a column with margins, not against the edges.
    for element in layout['content']:
        box = element['box']
        if box['width']:
            assert box['left'] >= 16 and box['right'] <= WIDTH - 16, element
