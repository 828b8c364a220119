"""Print the compat table (test-artifacts/compat.md) at the end of the
session, whatever pytest's capture settings, when the compat tests ran."""

from tests.compat import report


def pytest_terminal_summary(terminalreporter):
    table = report.written_table()
    if table:
        terminalreporter.section('classic-publisher parity (tests/compat)')
        terminalreporter.write(table)
