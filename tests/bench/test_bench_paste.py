"""The servers comparison (``python -m benchmarks --paste``): apps under
paste.httpserver and mod_wsgi, interleaved pair by pair, its table and its
options."""

import dataclasses
import json

from benchmarks import cli
from benchmarks import harness
from benchmarks import peercompare
from benchmarks import report
from benchmarks.servers import ServerConfig
from benchmarks.storages import SqliteStorage
from benchmarks.workspace import Workspace

PASTE = ServerConfig('paste', 1, 10)
MOD_WSGI = ServerConfig('mod_wsgi', 2, 1)


parsed = cli.parse_args


def test_paste_alone_serves_the_classic_publisher_and_the_pipeline():
    plan = cli.make_plan(parsed('--paste'))
    assert (plan.mode, plan.parts) == ('paste', ('paste',))
    assert plan.paste_configs == (PASTE, MOD_WSGI)
    assert plan.paste_apps == ('classic', 'pipeline')
    assert (plan.peer_concurrencies, plan.peer_rounds) == ((8, 1), 5)


def test_the_options_choose_the_servers_and_apps_of_the_comparison():
    plan = cli.make_plan(parsed(
        '--paste', '--configs', 'paste:1x4,waitress:1x4,mod_wsgi:4x1',
        '--peer-apps', 'pyramid', '--storages', 'sqlite', '--repeats', '1'))
    assert plan.paste_configs == (ServerConfig('paste', 1, 4),
                                  ServerConfig('waitress', 1, 4),
                                  ServerConfig('mod_wsgi', 4, 1))
    assert plan.paste_apps == ('pyramid',)
    assert plan.peer_apps == harness.PEERS.peer_apps
    assert (plan.storages, plan.peer_rounds) == (['sqlite'], 1)


def test_peers_and_paste_together_run_both_comparisons():
    plan = cli.make_plan(parsed('--peers', '--paste'))
    assert (plan.mode, plan.parts) == ('peers+paste', ('peers', 'paste'))


def test_the_full_run_includes_the_servers_comparison_the_quick_run_not():
    assert 'paste' in cli.make_plan(parsed()).parts
    assert 'paste' not in cli.make_plan(parsed('--quick')).parts


def test_a_paste_run_goes_into_the_saved_results(tmp_path):
    saved = tmp_path / 'results.json'
    saved.write_text(json.dumps({'mode': 'full', 'peers': {'old': 1},
                                 'paste': {'old': 2}}))
    merged = cli.with_saved_results(
        {'mode': 'paste', 'command': 'python -m benchmarks --paste',
         'paste': {'new': True}}, str(saved))
    assert merged == {'mode': 'full', 'peers': {'old': 1}, 'paste': {
        'new': True, 'command': 'python -m benchmarks --paste'}}


# -- the table


def measurement(app, config, storage, concurrency, rate, verified=True):
    return {'app': app, 'config': config, 'storage': storage,
            'concurrency': concurrency, 'load': '-c %d' % concurrency,
            'summary': {'runs': 5, 'verified_runs': 5 if verified else 4,
                        'requests_per_second': rate}}


def paste_data():
    rates = {('classic', 'paste 1x10'): 300, ('classic', 'mod_wsgi 2x1'): 600,
             ('pipeline', 'paste 1x10'): 500,
             ('pipeline', 'mod_wsgi 2x1'): 1000}
    measurements = [
        measurement(app, config, storage, concurrency,
                    rate * (1 if storage == 'mysql' else 2) / concurrency,
                    verified=(app, config, concurrency) != (
                        'pipeline', 'paste 1x10', 1))
        for (app, config), rate in rates.items()
        for storage in ('sqlite', 'mysql') for concurrency in (8, 1)]
    return {'date': '2026-01-01T00:00:00+00:00',
            'configs': ['paste 1x10', 'mod_wsgi 2x1'],
            'path': '/folder/page', 'rounds': 5, 'warmup': 300,
            'apps': [{'name': 'classic', 'label': 'Classic'},
                     {'name': 'pipeline', 'label': 'Pipeline'}],
            'measurements': measurements,
            'server_commands': {'paste': 'python -m benchmarks.paste_server',
                                'mod_wsgi': 'mod_wsgi-express x'},
            'command': 'python -m benchmarks --paste'}


def test_each_app_has_a_row_per_server_with_its_ratio_to_mod_wsgi():
    lines = report.paste_table(paste_data(), '-c 8').splitlines()
    assert lines[0] == ('| app | server | MariaDB `-c 8` req/s | '
                        '× mod_wsgi 2x1 | SQLite `-c 8` req/s | '
                        '× mod_wsgi 2x1 | verified runs |')
    assert lines[1].startswith('| :-- | :-- | --: |')
    assert lines[2:] == [
        '| Classic | paste 1x10 | 38 | 0.50 | 75 | 0.50 | yes (10/10) |',
        '| Classic | mod_wsgi 2x1 | 75 | 1.00 | 150 | 1.00 | yes (10/10) |',
        '| Pipeline | paste 1x10 | 62 | 0.50 | 125 | 0.50 | yes (10/10) |',
        '| Pipeline | mod_wsgi 2x1 | 125 | 1.00 | 250 | 1.00 | '
        'yes (10/10) |']
    unverified = report.paste_table(paste_data(), '-c 1').splitlines()[4]
    assert unverified.endswith('| **NO** (8/10) |')


def test_results_md_has_the_servers_section_and_its_commands():
    from .test_bench_report import results
    data = results()
    data['paste'] = paste_data()
    text = report.render_results(data)
    assert '## Servers: paste.httpserver and mod_wsgi' in text
    assert 'paste 1x10 and mod_wsgi 2x1, `GET /folder/page`' in text
    assert ('- servers comparison, paste: '
            '`python -m benchmarks.paste_server`') in text
    assert 'The servers comparison (`--paste`)' in text


# -- served


def test_a_tiny_servers_comparison_interleaves_every_pair_verified(
        tmp_path):
    """The ceiling under paste.httpserver and waitress: every pair a
    server of its own, the rounds rotating over the pairs, every run
    verified by the servers' counts."""
    plan = dataclasses.replace(
        harness.PEERS, storages=['sqlite'], peer_concurrencies=(8, 1),
        peer_requests=20, peer_rounds=2, peer_warmup=5)
    lines = []
    with Workspace(root=str(tmp_path)) as workspace:
        data = peercompare.PeersComparison(
            plan, workspace, lambda storage, key: SqliteStorage(),
            lines.append, apps=('ceiling',),
            configs=(ServerConfig('paste', 1, 2),
                     ServerConfig('waitress', 1, 2))).run()
    assert [(m['app'], m['config'], m['load'])
            for m in data['measurements']] == [
        ('ceiling', 'paste 1x2', '-c 8'), ('ceiling', 'waitress 1x2', '-c 8'),
        ('ceiling', 'paste 1x2', '-c 1'), ('ceiling', 'waitress 1x2', '-c 1')]
    assert all(m['summary']['verified'] for m in data['measurements'])
    assert sorted(data['server_commands']) == ['paste', 'waitress']
    assert [line.split()[2] for line in lines if 'round' in line] == [
        'ceiling@paste-1x2', 'ceiling@waitress-1x2',
        'ceiling@paste-1x2', 'ceiling@waitress-1x2',
        'ceiling@waitress-1x2', 'ceiling@paste-1x2',
        'ceiling@waitress-1x2', 'ceiling@paste-1x2']


def test_paste_keeps_its_pools_defaults_unless_the_pool_is_smaller():
    from benchmarks.paste_server import threadpool_options
    assert threadpool_options(10) == threadpool_options(5) == {}
    assert threadpool_options(2) == {'spawn_if_under': 2}
