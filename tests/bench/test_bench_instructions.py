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
