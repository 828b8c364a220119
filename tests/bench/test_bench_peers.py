"""The peers comparison: each peer serves the page, the interleaving, the
table with its ratios, and the ``--peers`` command."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from benchmarks import cli
from benchmarks import harness
from benchmarks import peercompare
from benchmarks import peers
from benchmarks import report
from benchmarks import serverside
from benchmarks import sites
from benchmarks.loadgen import Load
from benchmarks.peers import page
from benchmarks.peers import zope_peer
from benchmarks.scripts import ceiling_body_script
from benchmarks.scripts import peer_script
from benchmarks.servers import ServerConfig
from benchmarks.storages import SqliteStorage
from benchmarks.workspace import Workspace
from tests.conftest import ROOT
from tests.conftest import need


@pytest.fixture
def bench_extra():
    """The peers' packages (the bench extra): skipped without them on a
    developer's machine, a failure in CI, which installs them."""
    missing = peers.missing_modules()
    need(not missing, "the peers need the bench extra (pip install -e "
         "'.[bench]'); missing: %s" % ', '.join(missing))


# -- the page


def test_the_expected_page_passes_its_own_check():
    assert page.page_problems(page.expected_body()) == []
    assert 300 < len(page.expected_body()) < 450


def test_a_page_without_an_item_or_with_another_title_is_named():
    body = page.expected_body().replace(b'<li>Item 03</li>', b'')
    body = body.replace(b'<h1>A page of 10 items', b'<h1>Another')
    problems = page.page_problems(body)
    assert problems[0] == "<h1> holds ['Another'], not 'A page of 10 items'"
    assert "'Item 02', 'Item 04'" in problems[1]


def test_a_base_tag_in_the_head_is_still_the_page():
    body = page.expected_body().replace(
        b'<head>', b'<head>\n<base href="http://localhost/folder/page/" />')
    assert page.page_problems(body) == []


# -- each peer, started in a process of its own


def render(peer_name, tmp_path):
    """Status and body of GET /folder/page from a first start of the peer
    on a fresh SQLite database (a process of its own: Zope and
    zope.pipeline configure global state)."""
    workspace = Workspace(root=str(tmp_path))
    zodb_config = SqliteStorage().setup(workspace, peer_name)
    completed = subprocess.run(
        [sys.executable, '-m', 'benchmarks.peers', 'render', peer_name,
         zodb_config, workspace.directory('work')],
        capture_output=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT))
    assert completed.returncode == 0, completed.stderr.decode()[-3000:]
    status, _, body = completed.stdout.partition(b'\n')
    return int(status), body


@pytest.mark.usefixtures("bench_extra")
@pytest.mark.parametrize('peer_name', [
    'pyramid', 'pyramid-acl', 'zope', 'classic', 'pipeline',
    'pipeline-checked', 'pipeline-cached'])
def test_each_peer_serves_the_page_with_its_title_and_ten_items(
        peer_name, tmp_path):
    status, body = render(peer_name, tmp_path)
    assert status == 200
    assert page.page_problems(body) == []


@pytest.mark.usefixtures("bench_extra")
@pytest.mark.parametrize('peer_name', ['pyramid', 'pyramid-acl'])
def test_pyramid_renders_exactly_the_bytes_the_ceiling_serves(peer_name,
                                                              tmp_path):
    assert render(peer_name, tmp_path) == (200, page.expected_body())


def run_in_process_of_its_own(code, tmp_path):
    """Run ``code`` (which may use ``ZODB_CONFIG`` and ``WORKDIR``, a
    fresh SQLite database and a work directory) in a new interpreter;
    return what it printed."""
    workspace = Workspace(root=str(tmp_path))
    zodb_config = SqliteStorage().setup(workspace, 'db')
    prelude = 'ZODB_CONFIG = %r\nWORKDIR = %r\n' % (
        zodb_config, workspace.directory('work'))
    completed = subprocess.run(
        [sys.executable, '-W', 'ignore', '-c', prelude + code],
        capture_output=True, text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT))
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


@pytest.mark.usefixtures("bench_extra")
def test_the_classic_peer_publishes_without_zope_pipelines_publisher(
        tmp_path):
    printed = run_in_process_of_its_own('''
import sys, webtest
from benchmarks.peers import BY_NAME
app = BY_NAME['classic'].make_app(ZODB_CONFIG, WORKDIR)
response = webtest.TestApp(app).get('/folder/page')
print(response.status_int, type(app).__module__)
print(sorted(name for name in sys.modules
             if name.startswith('zope.pipeline')))
print(sorted(name for name in sys.modules if name.startswith('z3c.pt')))
''', tmp_path)
    assert printed.splitlines() == [
        '200 zope.app.wsgi',
        # the RelStorage fix every peer gets (and its package), nothing
        # else
        "['zope.pipeline', 'zope.pipeline.zodb', 'zope.pipeline.zodb.compat']",
        '[]']


@pytest.mark.usefixtures("bench_extra")
def test_the_pyramid_acl_peer_refuses_a_permission_its_acl_does_not_grant(
        tmp_path):
    printed = run_in_process_of_its_own('''
import webtest
from benchmarks.peers.pyramid_peer import make_acl_app
app = make_acl_app(ZODB_CONFIG, WORKDIR, permission='edit')
print(webtest.TestApp(app).get('/folder/page', expect_errors=True).status)
''', tmp_path)
    assert printed == '403 Forbidden\n'


PROTECTED_PAGE = '''\
<configure
    xmlns="http://namespaces.zope.org/zope"
    xmlns:browser="http://namespaces.zope.org/browser"
    package="benchmarks.peers.pipeline_peer">
  <permission id="bench.Protected" title="Not granted to anybody" />
  <browser:page
      for=".content.IPage"
      name="index.html"
      class="benchmarks.peers.pipeline_checked_peer.views.TrustedPageView"
      template="page.pt"
      permission="bench.Protected"
      />
</configure>
'''

PROTECTED_SITE = '''\
<configure xmlns="http://namespaces.zope.org/zope">
  <include file="%(site)s" />
  <includeOverrides file="%(protected)s" />
</configure>
'''


@pytest.mark.usefixtures("bench_extra")
def test_the_view_checked_peer_refuses_anonymous_a_protected_view(
        tmp_path):
    """The view-checked peer's site with its page's permission one that
    anonymous lacks: 401 (the view is trusted, not unprotected)."""
    from benchmarks.peers import pipeline_checked_peer
    protected = tmp_path / 'protected.zcml'
    protected.write_text(PROTECTED_PAGE)
    site = tmp_path / 'site.zcml'
    site.write_text(PROTECTED_SITE % {
        'site': pipeline_checked_peer.SITE_ZCML, 'protected': protected})
    printed = run_in_process_of_its_own('''
import webtest
from benchmarks.peers import pipeline_checked_peer
app = pipeline_checked_peer.make_app(ZODB_CONFIG, WORKDIR, %r)
for path in ('/folder/page', '/folder/page/@@index.html'):
    response = webtest.TestApp(app).get(path, expect_errors=True)
    print(response.status_int, 'Item 00' in response.text)
''' % str(site), tmp_path)
    assert printed.splitlines() == ['401 False', '401 False']


def test_the_zope_peer_mounts_the_zodb_section_at_the_root():
    text = zope_peer.zope_database(
        '%import relstorage\n<zodb main>\n  pool-size 8\n</zodb>\n')
    assert text == ('%import relstorage\n<zodb_db main>\n  mount-point /\n'
                    '  pool-size 8\n</zodb_db>\n')


def test_the_zope_peer_refuses_a_config_without_a_main_database():
    with pytest.raises(ValueError, match='no <zodb main>'):
        zope_peer.zope_database('<zodb other>\n</zodb>\n')


def test_the_zope_conf_names_its_instance_and_the_database(tmp_path):
    zodb = tmp_path / 'zodb.conf'
    zodb.write_text('<zodb main>\n  pool-size 8\n</zodb>\n')
    path = zope_peer.write_zope_conf(str(zodb), str(tmp_path))
    text = open(path).read()
    assert text.startswith('%%define INSTANCE %s/zope-instance\n' % tmp_path)
    assert '<zodb_db main>\n  mount-point /\n  pool-size 8\n' in text
    assert os.path.isdir(tmp_path / 'zope-instance' / 'var')


def test_the_classic_zope_conf_names_its_site_the_database_and_a_log(
        tmp_path):
    from benchmarks.peers import classic_peer
    zodb = tmp_path / 'zodb.conf'
    zodb.write_text('%import relstorage\n<zodb main>\n</zodb>\n')
    text = open(classic_peer.write_zope_conf(str(zodb),
                                             str(tmp_path))).read()
    assert text.startswith('site-definition %s\n%%import relstorage\n'
                           '<zodb main>\n' % classic_peer.SITE_ZCML)
    assert '    path %s/classic-event.log\n' % tmp_path in text


def test_a_peer_is_described_with_its_installed_version():
    assert peers.PIPELINE.describe().startswith('zope.pipeline (')
    unknown = dataclasses.replace(peers.PYRAMID, distribution='no-such-dist')
    assert unknown.describe().startswith('Pyramid ? + pyramid_tm')


# -- the scripts the servers import


def test_the_peer_script_makes_the_peer_and_counts_it():
    text = peer_script('zope', '/w/zodb.conf', '/w/work', '/w/counts',
                       '/w/logs')
    compile(text, 'app.wsgi', 'exec')
    assert "BY_NAME['zope'].make_app('/w/zodb.conf', '/w/work')" in text
    assert "'/w/counts')" in text


def test_a_peer_of_another_checkout_is_served_from_its_code(tmp_path):
    checkout = tmp_path / 'old'
    (checkout / 'src' / 'zope' / 'pipeline').mkdir(parents=True)
    (checkout / 'benchmarks').mkdir()
    peer = peers.resolve('pipeline@%s' % checkout)
    assert (peer.name, peer.base_name, peer.checkout) == (
        'pipeline@old', 'pipeline', str(checkout))
    assert peer.describe().endswith('the code of %s' % checkout)
    assert peers.resolve('pipeline') is peers.PIPELINE
    text = peer_script(peer.base_name, '/w/zodb.conf', '/w/work',
                       '/w/counts', '/w/logs', peer.checkout)
    compile(text, 'app.wsgi', 'exec')
    lines = text.splitlines()
    # the checkout's code comes before anything is imported
    assert lines.index('import sys') + 1 == \
        lines.index('sys.path.insert(0, %r)' % str(checkout / 'src')) < \
        lines.index('sys.path.insert(0, %r)' % str(checkout)) < \
        lines.index('from benchmarks import serverside')
    plan = cli.make_plan(parsed('--peers', '--peer-apps',
                                'pipeline,pipeline@%s' % checkout))
    assert plan.peer_apps == ('pipeline', 'pipeline@%s' % checkout)


def test_a_peer_of_a_directory_that_is_no_checkout_is_refused(tmp_path):
    with pytest.raises(SystemExit, match='is not a checkout'):
        cli.make_plan(parsed('--peers', '--peer-apps',
                             'pipeline@%s' % tmp_path))
    with pytest.raises(SystemExit, match='NAME@CHECKOUT'):
        cli.make_plan(parsed('--peers', '--peer-apps', 'django@/tmp'))


def test_the_ceiling_script_serves_the_bytes_it_is_given():
    text = ceiling_body_script(b'<p>page</p>', '/w/counts', '/w/logs')
    compile(text, 'app.wsgi', 'exec')
    assert "serverside.PlainPage(body=b'<p>page</p>'), '/w/counts')" in text


def test_the_ceiling_answers_with_the_given_bytes():
    statuses = []
    body = serverside.PlainPage(body=b'<p>page</p>')(
        {}, lambda status, headers: statuses.append((status, headers)))
    assert body == [b'<p>page</p>']
    assert statuses == [('200 OK', [
        ('Content-Type', 'text/html;charset=utf-8'),
        ('Content-Length', '11')])]


# -- the interleaving


def test_each_round_starts_with_the_next_app():
    apps = ['ceiling', 'pyramid', 'zope', 'pipeline']
    assert [peercompare.rotated(apps, number)[0] for number in range(5)] == [
        'ceiling', 'pyramid', 'zope', 'pipeline', 'ceiling']
    assert peercompare.rotated([], 3) == []


def test_the_loads_default_to_2000_requests_at_c8_and_1000_at_c1():
    assert peercompare.peer_loads((8, 1)) == [Load(2000, 8), Load(1000, 1)]
    assert peercompare.peer_loads((8, 1), 200) == [Load(200, 8),
                                                   Load(200, 1)]


class FakeServer:

    def url(self, path):
        return 'http://127.0.0.1:1' + path


def test_an_app_that_does_not_serve_the_page_stops_the_comparison(
        monkeypatch):
    monkeypatch.setattr(peercompare, 'fetch',
                        lambda url: (200, b'<h1>Welcome</h1>'))
    with pytest.raises(peercompare.PageMismatch, match='zope does not serve'):
        peercompare.check_page("zope", FakeServer())


def test_an_error_status_is_not_the_page(monkeypatch):
    monkeypatch.setattr(peercompare, 'fetch',
                        lambda url: (500, page.expected_body()))
    with pytest.raises(peercompare.PageMismatch, match='status 500'):
        peercompare.check_page("zope", FakeServer())


# -- the table


def summary(rate, verified=True):
    return {'runs': 5, 'verified_runs': 5 if verified else 4,
            'requests_per_second': rate, 'mean_ms': 1.0, 'p50_ms': 1.0,
            'p99_ms': 2.0, 'failed': 0, 'non_2xx': 0, 'problems': [],
            'verified': verified}


def peer_measurement(app, storage, concurrency, rate, verified=True):
    return {'app': app, 'storage': storage, 'concurrency': concurrency,
            'load': '-c %d' % concurrency, 'config': 'mod_wsgi 2x1',
            'summary': summary(rate, verified)}


RATES = {'ceiling': 3000, 'pyramid': 1200, 'pyramid-acl': 1100, 'zope': 600,
         'classic': 600, 'pipeline': 900, 'pipeline-checked': 1260}


def peers_data():
    measurements = [
        peer_measurement(app, storage, concurrency,
                         rate * (1 if storage == 'mysql' else 1.5)
                         / (1 if concurrency == 8 else 2),
                         verified=(app, storage) != ('zope', 'sqlite'))
        for storage in ('sqlite', 'mysql') for concurrency in (1, 8)
        for app, rate in RATES.items()]
    return {'date': '2026-01-01T00:00:00+00:00', 'config': 'mod_wsgi 2x1',
            'path': '/folder/page', 'rounds': 5, 'warmup': 300,
            'apps': [{'name': app.name, 'label': app.name.title()}
                     for app in peers.PEERS],
            'page_bytes': {'sqlite': {'ceiling': 380, 'pyramid': 380}},
            'measurements': measurements,
            'load_average': {'before': [1, 1, 1], 'after': [2, 2, 2]},
            'command': 'python -m benchmarks --peers',
            'server_command': 'mod_wsgi-express start-server x'}


def test_the_table_has_mariadb_then_sqlite_each_with_both_ratios():
    table = report.peers_table(peers_data(), '-c 8')
    lines = table.splitlines()
    assert lines[0] == (
        '| app | MariaDB `-c 8` req/s | × ceiling | × Pyramid | SQLite '
        '`-c 8` req/s | × ceiling | × Pyramid | verified runs |')
    assert lines[2] == ('| Ceiling | 3,000 | 1.00 | 2.50 | 4,500 | 1.00 | '
                        '2.50 | yes (10/10) |')
    assert lines[3] == ('| Pyramid | 1,200 | 0.40 | 1.00 | 1,800 | 0.40 | '
                        '1.00 | yes (10/10) |')
    assert lines[7] == ('| Pipeline | 900 | 0.30 | 0.75 | 1,350 | 0.30 | '
                        '0.75 | yes (10/10) |')
    assert len(lines) == 2 + len(peers.PEERS)


def test_an_unverified_run_is_marked_in_its_apps_row():
    row = report.peers_table(peers_data(), '-c 1').splitlines()[5]
    assert row.startswith('| Zope | 300 | ')
    assert row.endswith('| **NO** (9/10) |')


def test_the_section_has_both_loads_the_page_sizes_and_the_targets():
    text = report.peers_section(peers_data())
    assert text.index('`-c 8` req/s') < text.index('`-c 1` req/s')
    assert 'medians of 5 interleaved rounds' in text
    assert 'SQLite: ceiling 380, pyramid 380' in text
    targets = [line for line in text.splitlines()
               if line.startswith('- ') and 'MariaDB at `-c 8`' in line]
    assert targets == [
        "- zope.pipeline on MariaDB at `-c 8`: 0.75× Pyramid's requests per "
        'second (target at least 0.85): not met.',
        "- zope.pipeline on MariaDB at `-c 8`: 1.50× the classic "
        "publisher's requests per second (target above 1): met.",
        '- zope.pipeline view-checked on MariaDB at `-c 8`: 1.05× '
        "Pyramid's requests per second (target at least 1): met."]


def test_a_target_whose_apps_did_not_run_is_left_out():
    data = peers_data()
    data['measurements'] = [m for m in data['measurements']
                            if m['app'] != 'classic']
    text = report.peers_section(data)
    assert 'classic publisher\'s' not in text
    assert 'view-checked on SQLite at `-c 1`' in text


def test_results_md_has_the_peers_section_its_method_and_command():
    from .test_bench_report import results
    data = results()
    data['peers'] = peers_data()
    text = report.render_results(data)
    assert ('## Peers: the same page by Pyramid, Zope, the classic '
            'publisher and zope.pipeline') in text
    assert 'The peers comparison (`python -m benchmarks --peers`' in text
    assert '- peers (each app): `mod_wsgi-express start-server x`' in text


# -- the command


parsed = cli.parse_args


def test_peers_alone_is_the_issues_comparison():
    plan = cli.make_plan(parsed('--peers'))
    assert plan.parts == ('peers',)
    assert plan.peer_config == ServerConfig('mod_wsgi', 2, 1)
    assert plan.peer_apps == ('ceiling', 'pyramid', 'pyramid-acl', 'zope',
                              'classic', 'pipeline', 'pipeline-checked')
    assert (plan.peer_concurrencies, plan.peer_requests,
            plan.peer_rounds) == ((8, 1), None, 5)
    assert plan.storages == ['sqlite', 'mysql']


def test_the_options_shorten_the_peers_comparison():
    plan = cli.make_plan(parsed(
        '--peers', '--requests', '200', '--repeats', '2', '--warmup', '10',
        '--concurrency', '8', '--configs', 'mod_wsgi:1x2', '--storages',
        'sqlite', '--peer-apps', 'ceiling,pipeline'))
    assert (plan.peer_requests, plan.peer_rounds, plan.peer_warmup) == (
        200, 2, 10)
    assert plan.peer_concurrencies == (8,)
    assert plan.peer_config == ServerConfig('mod_wsgi', 1, 2)
    assert plan.peer_apps == ('ceiling', 'pipeline')
    assert plan.storages == ['sqlite']


def test_the_full_run_includes_the_peers_and_the_quick_run_does_not():
    assert 'peers' in cli.make_plan(parsed()).parts
    assert 'peers' not in cli.make_plan(parsed('--quick')).parts


def test_an_unknown_peer_app_is_refused():
    with pytest.raises(SystemExit, match='--peer-apps takes one or more'):
        cli.make_plan(parsed('--peers', '--peer-apps', 'django'))


def test_peers_runs_one_server_configuration():
    with pytest.raises(SystemExit, match='one server configuration'):
        cli.make_plan(parsed('--peers', '--configs',
                             'mod_wsgi:2x1,mod_wsgi:4x1'))


def test_a_peers_run_goes_into_the_saved_results(tmp_path):
    saved = tmp_path / 'results.json'
    saved.write_text(json.dumps({'mode': 'full', 'http': {'x': 1},
                                 'peers': {'old': True}}))
    merged = cli.with_saved_results(
        {'mode': 'peers', 'command': 'python -m benchmarks --peers',
         'peers': {'new': True}}, str(saved))
    assert merged == {'mode': 'full', 'http': {'x': 1}, 'peers': {
        'new': True, 'command': 'python -m benchmarks --peers'}}


def test_without_saved_results_a_peers_run_stands_alone(tmp_path):
    results = {'mode': 'peers', 'command': 'c', 'peers': {}}
    assert cli.with_saved_results(results, str(tmp_path / 'none.json')) \
        is results


def test_the_peers_need_the_bench_extra(monkeypatch):
    monkeypatch.setattr(peers, 'missing_modules', lambda: ['Zope2'])
    with pytest.raises(SystemExit, match=r"needs Zope2: install the bench"):
        cli.check_peers()


# -- a tiny comparison, served


TINY = dataclasses.replace(
    harness.PEERS, mode='test', storages=['sqlite'],
    peer_config=ServerConfig('waitress', 1, 2),
    peer_apps=('ceiling', 'pyramid', 'pipeline'), peer_concurrencies=(8,),
    peer_requests=20, peer_rounds=2, peer_warmup=5)


@pytest.mark.usefixtures("bench_extra")
@pytest.mark.integration
def test_a_tiny_comparison_interleaves_and_verifies_every_run(tmp_path):
    lines = []
    results = harness.Harness(TINY, sites.minimal_site(), str(tmp_path),
                              log=lines.append).run()
    data = results['peers']
    assert [(m['app'], m['load']) for m in data['measurements']] == [
        ('ceiling', '-c 8'), ('pyramid', '-c 8'), ('pipeline', '-c 8')]
    assert all(m['summary']['verified'] for m in data['measurements']), [
        m['summary']['problems'] for m in data['measurements']]
    assert all(len(m['runs']) == 2 for m in data['measurements'])
    rounds = [line.split()[2] for line in lines if 'round' in line]
    assert rounds == ['ceiling', 'pyramid', 'pipeline',
                      'pyramid', 'pipeline', 'ceiling']
    assert data['page_bytes']['sqlite']['pyramid'] == len(
        page.expected_body())
