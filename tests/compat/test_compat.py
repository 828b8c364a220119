"""Classic-publisher parity: the functional suites shipped inside Zope's
``zope.app.*`` packages and inside Grok (``grok``, ``grokcore.*``: their
publications, registered with ``<publisher>``, become view-checked
request types, ``zope.pipeline.engine.publications``), run unchanged, once
through the classic publisher (zope.app.wsgi's own layer) and once
through zope.pipeline (the same layers, their application swapped for
``zope.pipeline.testing.PipelineApplication`` by ``run_suite.py``).

Every test that passes under the classic publisher passes under
zope.pipeline, except the deliberate security hardenings listed in
``hardenings.txt``.  The table (tests run, requests served, passes) is
written to ``test-artifacts/compat.md`` and printed at the end of the
session.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

import pytest

from tests.compat import report
from tests.conftest import need

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_SUITE = os.path.join(HERE, 'run_suite.py')
HARDENINGS = os.path.join(HERE, 'hardenings.txt')
OPEN_GAPS = os.path.join(HERE, 'open_gaps.txt')
SITE_PACKAGES = sysconfig.get_paths()['purelib']

#: The packages whose shipped suites are run (the ``compat`` extra pins
#: their versions).
SUITES = (
    'zope.app.publication',
    'zope.app.container',
    'zope.app.authentication',
    'zope.app.file',
    'zope.app.component',
    'zope.app.session',
    'zope.app.wsgi',
    'zope.app.publisher',
    'zope.app.preference',
    'zope.app.exception',
    'zope.app.http',
    # more zope.app suites that send requests, beyond issue 11's list
    'zope.app.applicationcontrol',
    'zope.app.generations',
    'zope.app.rotterdam',
    'zope.app.catalog',
    'zope.app.onlinehelp',
    # Grok: its publications registered with <publisher> (issue 30)
    'grok',
    'grokcore.view',
    'grokcore.traverser',
    'grokcore.rest',
    'grokcore.xmlrpc',
    'grokcore.json',
    'grokcore.layout',
    'grokcore.formlib',
)

#: zope.testrunner options a suite needs besides ``-s PACKAGE``: grok keeps
#: its functional tests in ``grok/ftests`` (its own runner's pattern).
RUNNER_OPTIONS = {
    'grok': ['--tests-pattern', '^f?tests$'],
}

#: A suite that takes longer than this has hung.
SUITE_TIMEOUT = 600

#: How zope.testrunner -vv names each test it runs, and each that failed.
TEST_LINE = re.compile(r'^ (\S.*)$')
FAILED_LINE = re.compile(r'^(?:Failure|Error) in test (.+)$')
#: How zope.testrunner names a layer that could not be set up (its tests
#: never ran, in either mode: a missing package, most often).
LAYER_ERROR_LINE = re.compile(r'^\s+Layer: (\S+)\.setUp$')


class Outcome:
    """What one run of one suite gave."""

    def __init__(self, tests, failed, requests, output):
        self.tests = tests
        self.passed = tests - failed
        self.requests = requests
        self.output = output
        self.broken_layers = [
            match.group(1) for match in map(LAYER_ERROR_LINE.match,
                                            output.splitlines()) if match]


def parse(output):
    """Return (the tests that ran, the tests that failed) of -vv output;
    doctest files are named from site-packages (``zope/app/.../x.rst``)."""
    tests, failed = set(), set()
    output = output.replace(SITE_PACKAGES + os.sep, '')
    for line in output.splitlines():
        match = FAILED_LINE.match(line)
        if match:
            failed.add(match.group(1).strip())
            continue
        match = TEST_LINE.match(line)
        if match and ' ' not in match.group(1).split(' (')[0]:
            tests.add(match.group(1).strip())
    return tests | failed, failed


def run_suite(package, mode, settings=None, only=()):
    """Run ``package``'s tests in a subprocess (those matching ``only``,
    zope.testrunner's -t, if given; zope.pipeline with the stage
    ``settings``, if given); return its Outcome."""
    with tempfile.TemporaryDirectory() as scratch:
        counts = os.path.join(scratch, 'requests')
        env = dict(os.environ, COMPAT_MODE=mode, COMPAT_REQUESTS=counts,
                   COMPAT_SETTINGS=json.dumps(settings))
        filters = [arg for pattern in only for arg in ('-t', pattern)]
        completed = subprocess.run(
            [sys.executable, RUN_SUITE, '--test-path',
             SITE_PACKAGES, '-s', package, '-vv'] +
            RUNNER_OPTIONS.get(package, []) + filters,
            cwd=scratch, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, timeout=SUITE_TIMEOUT)
        requests = 0
        if os.path.exists(counts):
            with open(counts) as stream:
                requests = sum(int(line) for line in stream if line.strip())
    tests, failed = parse(completed.stdout)
    if completed.returncode and not failed:
        failed = {'(the test runner failed: exit code %d)'
                  % completed.returncode}
    return Outcome(tests, failed, requests, completed.stdout)


def run_both(package):
    return run_suite(package, 'classic'), run_suite(package, 'pipeline')


def listed(path):
    """{(package, test id)} of a list file (hardenings, open gaps)."""
    allowed = set()
    with open(path) as stream:
        for line in stream:
            line = line.split('#', 1)[0].strip()
            if line:
                package, test = line.split(None, 1)
                allowed.add((package, test.strip()))
    return allowed


@pytest.fixture(scope='module')
def results():
    try:
        import grok  # noqa: F401 - whether it imports
        import zope.app.wsgi.testlayer
        import zope.testrunner  # noqa: F401 - whether it imports
    except ImportError:
        need(False, "the 'compat' extra (zope.app.*, grok) is not "
                    "installed")
    workers = 2
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        outcomes = dict(zip(SUITES, pool.map(run_both, SUITES), strict=True))
    report.write_table(outcomes, listed(HARDENINGS))
    return outcomes


@pytest.mark.parametrize('package', SUITES)
def test_suite_passes_through_pipeline_what_it_passes_classic(results,
                                                              package):
    classic, pipeline = results[package]
    assert classic.tests, classic.output
    # a layer that cannot be set up under the classic publisher hides its
    # tests from the comparison: install what the suite needs
    assert not classic.broken_layers, classic.output
    allowed = {test for name, test in listed(HARDENINGS) if name == package}
    gaps = {test for name, test in listed(OPEN_GAPS) if name == package}
    lost = classic.passed - pipeline.passed - allowed
    assert not lost - gaps, '\n'.join(sorted(lost - gaps)) + '\n\n' + \
        pipeline.output
    closed = gaps & pipeline.passed
    assert not closed, ('now passing: remove from open_gaps.txt: '
                        + ', '.join(sorted(closed)))


#: Suites whose shipped tests send no request (zope.app.http 6.0 calls
#: its method views directly).
SENDING_NO_REQUEST = {'zope.app.http'}


@pytest.mark.parametrize('package', SUITES)
def test_suite_sends_its_requests_through_pipeline(results, package):
    classic, pipeline = results[package]
    assert pipeline.requests == classic.requests
    assert (pipeline.requests > 0) is (package not in SENDING_NO_REQUEST)


#: The security_headers stage sending none of its headers (doctests that
#: print a response's headers show X-Frame-Options and the others).
SECURITY_HEADERS_OFF = {'security_headers': {
    'frame_options': '', 'frame_ancestors': '', 'nosniff': False}}

#: Hardenings a setting undoes, and the setting: with it, the hardened
#: tests pass, so the hardening is the only difference in them.
UNDONE_BY_SETTINGS = (
    ('zope.app.file', 'url.rst',
     dict(SECURITY_HEADERS_OFF,
          csrf={'trusted_origins': 'http://localhost:8081'})),
    ('zope.app.catalog', 'browser/README.rst',
     dict(SECURITY_HEADERS_OFF,
          csrf={'trusted_origins': 'http://localhost:8081'})),
    ('zope.app.file', 'browser/tests/../file.rst', SECURITY_HEADERS_OFF),
    ('zope.app.wsgi', 'testlayer.txt', SECURITY_HEADERS_OFF),
    ('grokcore.rest', 'functional.rest', SECURITY_HEADERS_OFF),
    ('grokcore.json', 'functional.json', SECURITY_HEADERS_OFF),
    ('grokcore.layout', 'tests.functional', SECURITY_HEADERS_OFF),
    ('zope.app.session', 'VirtualHostSessionTest',
     {'virtual_host': {'vh_from_anyone': True,
                       'allowed_hosts': 'localhost foo.bar'}}),
)


@pytest.mark.parametrize('package, test, settings', UNDONE_BY_SETTINGS)
def test_hardened_test_passes_when_its_setting_undoes_the_hardening(
        package, test, settings):
    outcome = run_suite(package, 'pipeline', settings, only=[test])
    hardened = [name for name in outcome.tests if test in name]
    assert hardened and set(hardened) <= outcome.passed, outcome.output
