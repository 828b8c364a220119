"""The compat table: per suite, tests run, requests served, passes, and
the classic passes that fail under zope.pipeline as listed hardenings
(passed pipeline + hardenings = passed classic when the suite is at
parity)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, 'test-artifacts', 'compat.md')

#: Set when this session wrote the table (so an old file is not printed).
written = []

HEADER = ('| suite | tests run | requests served (classic / pipeline) | '
          'passed classic | passed pipeline | hardenings |\n'
          '|---|---:|---:|---:|---:|---:|\n')


def row(package, classic, pipeline, hardenings):
    hardened = {test for name, test in hardenings if name == package}
    return '| %s | %d | %d / %d | %d | %d | %d |\n' % (
        package, len(classic.tests), classic.requests, pipeline.requests,
        len(classic.passed), len(pipeline.passed),
        len((classic.passed - pipeline.passed) & hardened))


def write_table(results, hardenings=frozenset()):
    """``results``: {package: (classic Outcome, pipeline Outcome)};
    ``hardenings``: {(package, test id)} that fail under us on purpose."""
    lines = [HEADER]
    for package, (classic, pipeline) in results.items():
        lines.append(row(package, classic, pipeline, hardenings))
    for package, (classic, pipeline) in results.items():
        for test in sorted(classic.passed - pipeline.passed):
            why = ('hardening (tests/compat/hardenings.txt)'
                   if (package, test) in hardenings else 'fails pipeline')
            lines.append('\n%s: passes classic, %s: %s'
                         % (package, why, test))
    text = ''.join(lines) + '\n'
    os.makedirs(os.path.dirname(TABLE), exist_ok=True)
    with open(TABLE, 'w') as stream:
        stream.write(text)
    written.append(TABLE)
    return text


def written_table():
    if not written:
        return None
    with open(written[-1]) as stream:
        return stream.read()
