"""The tutorial (docs/tutorial.rst) works as written: its site package,
copied as a new user would make it, passes its own tests through
zope.pipeline's test layer, and its deployment compiles with its stage."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

TUTORIAL = os.path.join(ROOT, 'docs', 'tutorial', 'mysite')


@pytest.fixture
def mysite(tmp_path):
    target = tmp_path / 'mysite'
    shutil.copytree(TUTORIAL, target)
    return target


def run(command, mysite, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(mysite / 'src'))
    return subprocess.run(command, cwd=mysite, env=env, capture_output=True,
                          text=True, timeout=300, **kwargs)


def test_the_tutorial_site_passes_its_own_tests(mysite):
    pytest.importorskip('zope.app.wsgi.testlayer')
    done = run([sys.executable, '-m', 'zope.testrunner', '--test-path',
                'src', '-vv'], mysite)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Ran 2 tests with 0 failures, 0 errors' in done.stdout


def test_the_tutorial_deployment_runs_its_stage_with_its_setting(mysite):
    done = run([sys.executable, '-c',
                'from zope.pipeline.cli import main; import sys; '
                'sys.exit(main(sys.argv[1:]))', 'show-pipeline',
                'etc/deploy.ini', '--request-type', 'browser',
                '--format', 'json'], mysite)
    assert done.returncode == 0, done.stderr
    stages = json.loads(done.stdout)['request_types']['browser']['stages']
    names = [stage['name'] for stage in stages]
    assert names.index('handle_error') < names.index('server_timing') \
        < names.index('transaction')
    timing = stages[names.index('server_timing')]
    assert timing['settings'] == {'metric': 'mysite'}
    assert timing['contract_declared']
    assert timing['reads'] == timing['writes'] == []


def test_the_tutorial_site_serves_a_note_with_its_timing_header(mysite):
    done = run([sys.executable, '-c', SERVE_ONE_REQUEST], mysite)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result['status'] == 200
    assert '<h1>Hello</h1>' in result['body']
    assert result['timing'].startswith('mysite;dur=')


#: Load etc/deploy.ini as paste.deploy does and GET /hello through WebTest
#: (in a process of its own: the site's ZCML is loaded once per process).
SERVE_ONE_REQUEST = '''
import json, webtest
from paste.deploy import loadapp
app = webtest.TestApp(loadapp('config:etc/deploy.ini', relative_to='.'))
response = app.get('/hello')
print(json.dumps({'status': response.status_int, 'body': response.text,
                  'timing': response.headers['Server-Timing']}))
'''
