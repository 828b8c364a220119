"""The callgrind benchmark counts only the measured requests (valgrind
toggles collection on operator.call) and reads its totals line."""

import pytest

from benchmarks import instructions


def test_valgrind_counts_only_inside_operator_call():
    command = instructions.valgrind_command('/tmp/out', 50, 200,
                                            '/folder/page', 'sample')
    assert '--collect-atstart=no' in command
    assert '--toggle-collect=_operator_call' in command
    assert command[command.index('--requests') + 1] == '50'


def test_the_totals_line_gives_the_instructions(tmp_path):
    output = tmp_path / 'callgrind.out'
    output.write_text('events: Ir\nfl=(1) x.c\n1 5\ntotals: 207728577\n')
    assert instructions.total_instructions(str(output)) == 207728577


def test_an_output_without_totals_is_an_error(tmp_path):
    output = tmp_path / 'callgrind.out'
    output.write_text('events: Ir\n')
    with pytest.raises(ValueError):
        instructions.total_instructions(str(output))


def test_a_peer_is_counted_on_the_peers_page():
    command = instructions.valgrind_command('/tmp/out', 50, 200,
                                            '/folder/page', 'auto',
                                            'pyramid')
    assert command[-2:] == ['--peer', 'pyramid']


def test_the_pipeline_peer_serves_its_page_in_process(clean_zope):
    status = instructions.run_requests(2, 1, '/folder/page', 'auto',
                                       'pipeline')
    assert status.startswith('200')


def test_the_counted_process_hashes_with_a_fixed_seed():
    assert instructions.counted_environ({'PATH': '/bin'}) == {
        'PATH': '/bin', 'PYTHONHASHSEED': '0'}


def test_a_hash_seed_the_environment_chooses_is_kept():
    assert instructions.counted_environ(
        {'PYTHONHASHSEED': 'random'})['PYTHONHASHSEED'] == 'random'


def test_cache_simulation_adds_callgrinds_cache_and_branch_options():
    command = instructions.valgrind_command('/tmp/out', 50, 200,
                                            '/folder/page', 'auto',
                                            cache_sim=True)
    assert command[:4] == ['valgrind', '--cache-sim=yes',
                           '--branch-sim=yes', '--tool=callgrind']
    assert '--toggle-collect=_operator_call' in command


def test_the_counted_process_is_told_which_environ_to_serve():
    command = instructions.valgrind_command('/tmp/out', 50, 200,
                                            '/folder/page', 'auto',
                                            environ='modwsgi')
    assert command[command.index('--environ') + 1] == 'modwsgi'
    assert '--cache-sim=yes' not in command


def test_the_totals_line_gives_every_simulated_event(tmp_path):
    output = tmp_path / 'callgrind.out'
    output.write_text('events: Ir I1mr D1mr D1mw Bc Bcm Bi Bim\n'
                      'fl=(1) x.c\n1 5 0 0 0 0 0 0 0\n'
                      'summary: 4000 80 40 20 400 12 100 8\n')
    events = instructions.total_events(str(output))
    assert events == {'Ir': 4000, 'I1mr': 80, 'D1mr': 40, 'D1mw': 20,
                      'Bc': 400, 'Bcm': 12, 'Bi': 100, 'Bim': 8}
    assert instructions.miss_lines(events, 4) == [
        '  instruction cache misses per request: 20',
        '  data cache read misses per request: 10',
        '  data cache write misses per request: 5',
        '  conditional branches mispredicted per request: 3',
        '  indirect branches mispredicted per request: 2']


def test_an_instruction_count_alone_reports_no_misses():
    assert instructions.miss_lines({'Ir': 4000}, 4) == []


def test_the_pipeline_peer_serves_the_environ_mod_wsgi_passes(clean_zope):
    status = instructions.run_requests(2, 1, '/folder/page', 'auto',
                                       'pipeline', environ='modwsgi')
    assert status.startswith('200')


def test_a_site_serves_the_environ_mod_wsgi_passes(clean_zope):
    status = instructions.run_requests(2, 1, '/folder/page', 'sample',
                                       environ='modwsgi')
    assert status.startswith('200')
