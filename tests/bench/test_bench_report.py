"""Rendering results: tables, ratios to the ceiling, targets, RESULTS.md."""

from benchmarks import report


def summary(rate, mean=2.0, p50=1.0, p99=8.0, verified=True, failed=0):
    return {'runs': 3, 'verified_runs': 3 if verified else 2,
            'requests_per_second': rate, 'mean_ms': mean, 'p50_ms': p50,
            'p99_ms': p99, 'failed': failed, 'non_2xx': 0, 'problems': [],
            'verified': verified}


def measurement(config, storage, rate, load='-c 8', **figures):
    server, shape = config.split()
    processes, threads = (int(part) for part in shape.split('x'))
    return {'config': config, 'server': server, 'processes': processes,
            'threads': threads, 'storage': storage, 'load': load,
            'requests': 1000, 'concurrency': 8, 'keep_alive': False,
            'summary': summary(rate, **figures),
            'runs': [{'command': 'ab -n 1000 -c 8 -r http://127.0.0.1:1/p'}]}


def matrix():
    return [
        measurement('waitress 1x4', 'sqlite', 100, mean=10.0, p50=9.0),
        measurement('waitress 1x4', 'ceiling', 400, mean=2.0, p50=1.5),
        measurement('mod_wsgi 2x1', 'sqlite', 300, mean=4.0, p50=3.0),
        measurement('mod_wsgi 2x1', 'mysql', 200, mean=6.0, p50=5.0),
        measurement('mod_wsgi 2x1', 'ceiling', 400, mean=2.0, p50=1.0),
    ]


def test_markdown_table_has_header_alignment_and_rows():
    table = report.markdown_table(['a', 'b'], [[1, 2], ['x', None]])
    assert table.splitlines() == ['| a | b |', '| :-- | --: |', '| 1 | 2 |',
                                  '| x | None |']


def test_each_figure_is_also_a_ratio_of_the_same_configurations_ceiling():
    rows = report.http_rows(matrix())
    waitress_sqlite = rows[0]
    assert waitress_sqlite[:5] == ['waitress 1x4', 'sqlite', '-c 8', '100',
                                   '25%']
    assert waitress_sqlite[5] == '10.00 (5.00×)'
    assert waitress_sqlite[6] == '9.00 (6.00×)'
    assert rows[1][4] == '100%'
    assert rows[1][5] == '2.00'
    assert rows[3][4] == '50%'


def test_a_run_without_ceiling_has_no_ratio():
    rows = report.http_rows([measurement('mod_wsgi 4x1', 'sqlite', 10)])
    assert rows[0][4] == '-'
    assert rows[0][5] == '2.00'


def test_unverified_measurements_are_marked():
    rows = report.http_rows([measurement('mod_wsgi 2x1', 'sqlite', 10,
                                         verified=False)])
    assert rows[0][-1] == '**NO** (2/3)'


def test_targets_are_reported_as_met_or_not_met():
    lines = report.target_lines(matrix())
    assert ('- mod_wsgi 2x1 on mysql at `-c 8`: 50% of the plain-WSGI '
            'ceiling (target at least 50%): met.') in lines
    assert ('- mod_wsgi 2x1 on sqlite at `-c 8`: 75% of the plain-WSGI '
            'ceiling (target at least 70%): met.') in lines


def test_a_target_below_its_ratio_is_not_met():
    measurements = matrix()
    measurements[3]['summary']['requests_per_second'] = 100
    assert any(line.endswith('(target at least 50%): not met.')
               for line in report.target_lines(measurements))


def test_several_processes_are_compared_with_waitress_per_storage():
    lines = report.process_vs_thread_lines(matrix())
    assert lines == ['- mod_wsgi 2x1 vs waitress 1x4 on sqlite at `-c 8`: '
                     '3.00× the requests per second (the reference measured '
                     '5.3× on 4 cores in 2009).']


def inprocess():
    return {'path': '/folder/page', 'full_us': 900.0, 'direct_us': 800.0,
            'direct_unproxied_us': 300.0, 'overhead_us': 100.0,
            'noise_us': 5.0, 'stages': [
                {'name': 'retry', 'outer': True, 'without_us': 880.0,
                 'cost_us': 20.0, 'spread_us': 4.0, 'note': ''},
                {'name': 'call', 'outer': False, 'without_us': None,
                 'cost_us': None, 'spread_us': None,
                 'note': 'required (the page answers 404 Not Found without '
                         'it)'}]}


def test_in_process_tables_show_costs_and_the_budget():
    text = report.inprocess_tables(inprocess())
    assert '| pipeline cost (full − view called directly) | 100.0 |' in text
    assert '| retry | outer | 880.0 | 20.0 ± 4.0 |  |' in text
    assert '| call | inner | - | - | required' in text
    assert text.endswith('below 150 µs per request: met (100.0 µs).')


def startup(first):
    figures = {'first_response_s': first, 'load_s': 0.4,
               'server_start_s': 1.0}
    return {'repeats': 3, 'waitress': dict(figures),
            'mod_wsgi': dict(figures)}


def test_start_up_is_checked_against_the_budget():
    assert report.startup_table(startup(0.5)).endswith(': met.')
    text = report.startup_table(startup(0.9))
    # a run made before the daemons kept their compiled templates
    assert '| mod_wsgi daemon process | 0.90 | 0.40 | 1.00 |' in text
    assert text.endswith(': not met.')


def test_daemons_compiling_their_templates_count_for_the_budget_too():
    data = dict(startup(0.45), mod_wsgi_compiling={
        'first_response_s': 0.55, 'load_s': 0.4, 'server_start_s': None})
    text = report.startup_table(data)
    assert '| mod_wsgi daemon process (templates compiled before loaded ' \
        'from the run directory) | 0.45 | 0.40 | 1.00 |' in text
    assert '| mod_wsgi daemon process (templates compiled) | 0.55 | 0.40 ' \
        '| - |' in text
    assert '| waitress process (templates compiled) |' in text
    assert text.endswith(': not met.')


def imports():
    return {'import_s': 0.2, 'make_app_s': 0.3, 'process_s': 0.6,
            'modules': 500, 'total_self_s': 0.4,
            'top_distributions': [{'distribution': 'BTrees',
                                   'self_ms': 30.0, 'modules': 9,
                                   'heaviest': 'BTrees'}],
            'top_modules': [{'module': 'BTrees', 'self_ms': 25.0,
                             'cumulative_ms': 40.0}],
            'command': 'python -X importtime -c ...'}


def test_imports_show_totals_distributions_and_modules():
    text = report.imports_tables(imports())
    assert text.startswith('Importing `zope.pipeline.app`: 0.200 s;')
    assert '| BTrees | 30.0 | 9 | `BTrees` |' in text
    assert '| `BTrees` | 25.0 | 40.0 |' in text


def test_a_skipped_write_path_says_why():
    assert report.write_table({'skipped': 'no form'}) == 'Skipped: no form.'


def test_the_write_path_shows_retries_per_thousand():
    data = measurement('mod_wsgi 2x2', 'mysql', 150)
    data.update(retries=12, retries_per_1000=4.0, given_up=0, completed=3000)
    text = report.write_table({'path': '/p/@@add', 'fields': {'text': 'hi'},
                               'measurements': [data]})
    assert text.startswith('POST /p/@@add (text=hi)')
    assert '| mod_wsgi 2x2 | mysql | -c 8 | 150 | 2.00 | 8.00 | 12 | 4.0 | ' \
           '0 | 0 | yes (3/3) |' in text


def results():
    return {
        'mode': 'quick', 'date': '2026-01-01T00:00:00+00:00',
        'duration_s': 12.0, 'command': 'python -m benchmarks --quick',
        'plan': {'repeats': 3},
        'machine': {'cpus': 2, 'cpu_model': 'AMD EPYC', 'memory_gib': 23.5,
                    'os': 'Debian', 'kernel': '6.1'},
        'versions': {'python': '3.11.7', 'mod_wsgi': None},
        'load_average': {'before': [1.0, 0.5, 0.2], 'after': [2.0, 1, 0.5]},
        'site': {'description': 'the sample site', 'page_path': '/p'},
        'http': {'page_bytes': 1700, 'measurements': matrix(),
                 'server_commands': {'waitress': 'python -m x'}},
        'write': {'skipped': 'no form'},
        'inprocess': inprocess(), 'startup': startup(0.5),
        'imports': imports(),
    }


def test_results_md_has_environment_charts_sections_and_commands():
    text = report.render_results(results(), [
        {'title': 'Requests per second', 'path': 'r/rps.png'}])
    assert text.startswith('# zope.pipeline benchmarks\n')
    assert '- Machine: 2 CPUs (AMD EPYC), 23.5 GiB memory' in text
    assert '- Versions: python 3.11.7\n' in text
    assert '![Requests per second](r/rps.png)' in text
    for title in ('Requests per second and latency', 'Write path',
                  'Pipeline cost in process', 'Worker start-up', 'Imports',
                  'Command lines'):
        assert '## %s' % title in text
    assert '- Harness: `python -m benchmarks --quick`' in text
    assert '- ab: `ab -n 1000 -c 8 -r http://127.0.0.1:1/p`' in text
    assert '- waitress: `python -m x`' in text
    assert 'The page is 1700 bytes' in text


def test_the_console_shows_only_the_parts_that_ran():
    data = results()
    for part in ('http', 'write', 'startup', 'imports'):
        del data[part]
    text = report.render_console(data)
    assert text.startswith('== Pipeline cost in process\n')
    assert '== Imports' not in text


# -- wrk rows


def wrk_measurement(in_flight, verified=True):
    data = measurement('mod_wsgi 2x1', 'sqlite', 310, load='wrk -c 8',
                       verified=verified)
    data.update(tool='wrk', in_flight=in_flight, runs=[
        {'command': 'wrk -t2 -c8 -d5s --latency -s benchmarks/wrk_count.lua '
                    'http://127.0.0.1:1/p', 'sent': 1508, 'received': 1500,
         'in_flight': 8}])
    return data


def test_a_wrk_row_is_verified_exactly_with_the_requests_left_in_flight():
    rows = report.http_rows([wrk_measurement([8, 6, 7])])
    assert rows[0][2] == 'wrk -c 8'
    assert rows[0][-1] == 'yes (3/3), 6–8 in flight at the end'
    rows = report.http_rows([wrk_measurement([5, 5, 5], verified=False)])
    assert rows[0][-1] == '**NO** (2/3), 5 in flight at the end'


def test_a_wrk_row_saved_before_exact_accounting_keeps_its_note():
    data = wrk_measurement(None)
    data['verification'] = 'count within in-flight tolerance (<= 8 ' \
                           'connections)'
    assert report.http_rows([data])[0][-1] == (
        'yes (3/3), count within in-flight tolerance (<= 8 connections)')
    del data['verification']
    assert report.http_rows([data])[0][-1] == 'yes (3/3)'


def test_results_md_names_the_wrk_command_and_how_wrk_is_verified():
    data = results()
    data['http']['measurements'].append(wrk_measurement([8, 8, 8]))
    text = report.render_results(data)
    assert ('- wrk: `wrk -t2 -c8 -d5s --latency -s benchmarks/wrk_count.lua '
            'http://127.0.0.1:1/p` (run in the checkout') in text
    assert 'the requests wrk abandoned in flight' in ' '.join(text.split())
    assert '- wrk:' not in report.render_results(results())


def test_a_first_response_later_than_half_a_second_misses_the_target():
    def startup(seconds):
        figures = {'first_response_s': seconds, 'load_s': seconds - 0.05,
                   'server_start_s': seconds + 0.2}
        return {'repeats': 5, 'waitress': dict(figures),
                'mod_wsgi': dict(figures)}

    assert report.startup_table(startup(0.48)).endswith(
        'Target: first response within 0.5 s of the process start: met.')
    assert report.startup_table(startup(0.62)).endswith(
        'Target: first response within 0.5 s of the process start: '
        'not met.')
