"""The tutorial (docs/tutorial.rst) works as written: a project made by
``zope-pipeline create``, with the tutorial's files of docs/tutorial/mysite
copied over it, passes its own tests through zope.pipeline's test layer,
compiles its stage with its setting, and serves the notes form to the
editor ``zope-pipeline adduser`` wrote, and to nobody else."""

import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

TUTORIAL = os.path.join(ROOT, 'docs', 'tutorial', 'mysite')
PASSWORD = 'a long editor password'


def cli(*arguments):
    return [sys.executable, '-c', 'from zope.pipeline.cli import main; '
            'import sys; sys.exit(main(sys.argv[1:]))', *arguments]


def run(command, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(cwd / 'src'),
               ZOPE_PIPELINE_PASSWORD=PASSWORD)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, **kwargs)


@pytest.fixture
def created(tmp_path):
    """The project as `zope-pipeline create mysite` writes it."""
    done = run(cli('create', 'mysite'), tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / 'mysite'


@pytest.fixture
def mysite(created):
    """The created project with the tutorial's files applied."""
    shutil.copytree(TUTORIAL, created, dirs_exist_ok=True)
    return created


def changed_lines(created, name):
    """The lines the tutorial's version of a created file adds to it, and
    those it removes."""
    with open(os.path.join(created, name)) as before, \
            open(os.path.join(TUTORIAL, name)) as after:
        diff = list(difflib.ndiff(before.readlines(), after.readlines()))
    return ([line[2:].strip() for line in diff if line.startswith('+ ')],
            [line[2:].strip() for line in diff if line.startswith('- ')])


@pytest.mark.parametrize('name, added', [
    ('etc/deploy.ini', 'server_timing.metric = mysite'),
    ('src/mysite/site.zcml',
     '<include package="mysite" file="notes.zcml" />'),
    ('src/mysite/ftesting.zcml', '<grant permission="mysite.AddNotes"'),
])
def test_the_tutorial_changes_created_files_only_by_adding(created, name,
                                                           added):
    added_here, removed = changed_lines(created, name)
    assert added in added_here
    assert removed == []


def test_the_tutorial_site_passes_its_own_tests(mysite):
    pytest.importorskip('zope.app.wsgi.testlayer')
    done = run([sys.executable, '-m', 'zope.testrunner',
                '--test-path=src', '-vv'], mysite)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Ran 9 tests with 0 failures, 0 errors' in done.stdout
    assert 'test_anonymous_visitors_get_401_on_the_add_form' in done.stdout


def test_the_tutorial_deployment_runs_its_stage_with_its_setting(mysite):
    done = run(cli('show-pipeline', 'etc/deploy.ini', '--request-type',
                   'browser', '--format', 'json'), mysite)
    assert done.returncode == 0, done.stderr
    stages = json.loads(done.stdout)['request_types']['browser']['stages']
    names = [stage['name'] for stage in stages]
    assert names.index('handle_error') < names.index('server_timing') \
        < names.index('transaction')
    timing = stages[names.index('server_timing')]
    assert timing['settings'] == {'metric': 'mysite'}
    assert timing['contract_declared']
    assert timing['reads'] == timing['writes'] == []


def test_the_editor_adduser_wrote_adds_a_note_and_nobody_else(mysite):
    done = run(cli('adduser', 'etc/deploy.ini', '--login', 'editor',
                   '--permission', 'zope.ManageContent',
                   '--permission', 'mysite.AddNotes'), mysite)
    assert done.returncode == 0, done.stderr
    principals = (mysite / 'var' / 'principals.zcml').read_text()
    assert 'password_manager="BCRYPT"' in principals
    assert PASSWORD not in principals
    done = run([sys.executable, '-c', ADD_A_NOTE], mysite)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result['anonymous'] == 401
    assert result['challenge'].lower().startswith('basic realm=')
    assert result['wrong password'] == 401
    assert result['form'] == 200
    assert result['added'] == 303
    assert result['location'] == 'http://localhost/opening-hours'
    assert '<p class="note">Every day.</p>' in result['note']
    assert result['timing'].startswith('mysite;dur=')


def tutorial_commands(name):
    """The ``zope-pipeline NAME`` commands of docs/tutorial.rst, in
    order, each as its arguments after ``zope-pipeline``."""
    with open(os.path.join(ROOT, 'docs', 'tutorial.rst')) as stream:
        text = stream.read().replace('\\\n', ' ')
    return [shlex.split(line)[1:] for line in re.findall(
        r'^ +(zope-pipeline %s .*)$' % name, text, re.MULTILINE)]


def test_the_tutorials_requests_show_the_form_and_add_a_note(mysite):
    done = run(cli(*tutorial_commands('adduser')[0]), mysite)
    assert done.returncode == 0, done.stderr
    form, add = tutorial_commands('request')
    shown = run(cli(*form), mysite)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith('200 ')
    assert '<h1>Add a note</h1>' in shown.stdout
    anonymous = run(cli(*[argument for argument in form
                          if argument not in ('--user', 'editor')]), mysite)
    assert anonymous.returncode == 1
    assert anonymous.stdout.startswith('401 Unauthorized')
    added = run(cli(*add), mysite)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith('303 See Other\n')
    assert 'Location: http://localhost/opening-hours\n' in added.stdout
    note = run(cli('request', 'etc/deploy.ini', '/opening-hours', '-d'),
               mysite)
    assert '<p class="note">Every day.</p>' in note.stdout
    assert 'Server-Timing: mysite;dur=' in note.stdout


#: Load etc/deploy.ini as `zope-pipeline serve` does and use the notes form
#: through WebTest (in a process of its own: the site's ZCML is loaded
#: once per process).
ADD_A_NOTE = '''
import base64, json, os, webtest
from paste.deploy import loadapp
app = webtest.TestApp(loadapp('config:etc/deploy.ini', relative_to='.'))
def auth(password):
    token = base64.b64encode(('editor:' + password).encode()).decode()
    return {'Authorization': 'Basic ' + token}
editor = auth(os.environ['ZOPE_PIPELINE_PASSWORD'])
form = app.get('/@@add-note', headers=editor)
added = app.post('/@@add-note', {'title': 'Opening hours',
                                 'text': 'Every day.'}, headers=editor)
note = app.get('/opening-hours')
anonymous = app.get('/@@add-note', status='*')
print(json.dumps({
    'anonymous': anonymous.status_int,
    'challenge': anonymous.headers.get('WWW-Authenticate', ''),
    'wrong password': app.get('/@@add-note', headers=auth('guess'),
                              status='*').status_int,
    'form': form.status_int, 'added': added.status_int,
    'location': added.headers['Location'], 'note': note.text,
    'timing': note.headers['Server-Timing']}))
'''
