"""The figures of the reliability tests, written by the tests themselves
to ``test-artifacts/reliability.md``.

Each test calls ``record(scenario, figures, verdict)`` once it has its
figures: the scenario's row of the table is replaced (or added), the rows
of the other scenarios are kept (from the artifact of this run, or else
from ``docs/reliability.md``), and the whole file is written again with
the date and the versions of what ran.  A test run never writes to
``docs/``: ``make reliability`` runs these tests and copies the artifact
to ``docs/reliability.md``, an explicit step to commit.
"""

import datetime
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess

from tests.conftest import ROOT

#: Where a test run writes the figures.
REPORT = os.path.join(ROOT, 'test-artifacts', 'reliability.md')
#: The published figures (``make reliability`` refreshes them).
PUBLISHED = os.path.join(ROOT, 'docs', 'reliability.md')

HEADER = '''\
# Reliability figures

Written by the integration tests under `tests/integration/` through
`tests/integration/reliability_report.py` (each test replaces its own
row) and published here by `make reliability`, which runs them and
copies their report.  Do not edit it by hand.

Last written: %(date)s.

Versions: %(versions)s.

| scenario | figures | verdict | date |
| --- | --- | --- | --- |
'''

ROW_RE = re.compile(r'^\| (?P<scenario>[^|]+?) \| .* \|$')

PACKAGES = ('zope.pipeline', 'ZODB', 'RelStorage', 'mysqlclient',
            'mod_wsgi', 'waitress')


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y-%m-%d %H:%M UTC')


def package_versions():
    found = []
    for name in PACKAGES:
        try:
            found.append('%s %s' % (name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def apache_version():
    binary = shutil.which('apache2') or shutil.which('httpd')
    if binary is None:
        return None
    try:
        result = subprocess.run([binary, '-v'], capture_output=True,
                                text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'Apache/([\w.]+)', result.stdout)
    return match and 'Apache %s' % match.group(1)


def mariadb_version():
    from tests.integration import support
    admin = support.mysql_admin()
    if admin is None:
        return None
    try:
        cursor = admin.cursor()
        cursor.execute('SELECT VERSION()')
        return 'MariaDB/MySQL %s' % cursor.fetchone()[0]
    finally:
        admin.close()


def versions():
    """One line naming the versions of everything the figures depend on."""
    found = ['Python %s' % platform.python_version()]
    found += package_versions()
    found += [version for version in (apache_version(), mariadb_version())
              if version]
    found.append('%s %s' % (platform.system(), platform.release()))
    return ', '.join(found)


def cell(text):
    """Text that stays inside one cell of a Markdown table."""
    return str(text).replace('|', '/').replace('\n', ' ').strip()


def read_rows(path=REPORT):
    """{scenario: row line} of the table in ``path`` (empty if none)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, encoding='utf-8') as stream:
        lines = stream.read().splitlines()
    in_table = False
    for line in lines:
        if line.startswith('| --- |'):
            in_table = True
            continue
        match = in_table and ROW_RE.match(line)
        if match:
            rows[match.group('scenario')] = line
    return rows


def format_figures(figures):
    return '; '.join('%s: %s' % (name, value)
                     for name, value in figures.items())


def record(scenario, figures, verdict, path=REPORT):
    """Replace the row of ``scenario`` with ``figures`` (an ordered dict of
    name: value) and ``verdict``; write the report again."""
    date = now()
    rows = read_rows(path if os.path.exists(path) else PUBLISHED)
    rows[cell(scenario)] = '| %s | %s | %s | %s |' % (
        cell(scenario), cell(format_figures(figures)), cell(verdict), date)
    text = HEADER % {'date': date, 'versions': versions()}
    text += ''.join(rows[name] + '\n' for name in sorted(rows))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(text)
    return text
