"""The reliability figures: a test run writes them to test-artifacts/,
keeping the other scenarios' rows; docs/ is never written by a test."""

import pytest

from tests.integration import reliability_report


@pytest.fixture
def report(tmp_path, monkeypatch):
    published = tmp_path / 'docs' / 'reliability.md'
    published.parent.mkdir()
    published.write_text(reliability_report.HEADER % {
        'date': 'then', 'versions': 'old'} +
        '| Old scenario | a: 1 | fine | then |\n')
    monkeypatch.setattr(reliability_report, 'PUBLISHED', str(published))
    monkeypatch.setattr(reliability_report, 'versions', lambda: 'Python x')
    return tmp_path / 'test-artifacts' / 'reliability.md', published


def test_first_row_of_a_run_keeps_the_published_rows(report):
    artifact, published = report
    before = published.read_text()
    reliability_report.record('New scenario', {'b': 2}, 'good',
                              path=str(artifact))
    rows = reliability_report.read_rows(str(artifact))
    assert sorted(rows) == ['New scenario', 'Old scenario']
    assert published.read_text() == before


def test_a_scenario_recorded_again_replaces_its_row(report):
    artifact, published = report
    reliability_report.record('New scenario', {'b': 2}, 'good',
                              path=str(artifact))
    reliability_report.record('New scenario', {'b': 3}, 'better',
                              path=str(artifact))
    rows = reliability_report.read_rows(str(artifact))
    assert 'b: 3 | better' in rows['New scenario']
    assert len(rows) == 2


def test_the_default_report_is_a_test_artifact():
    assert reliability_report.REPORT.endswith(
        'test-artifacts/reliability.md')
