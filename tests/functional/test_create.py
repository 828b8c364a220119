"""A project `zope-pipeline create` wrote works as its README says: its
own tests pass through zope.pipeline's test layer, and its development
deployment serves a front page (not a 404) with the first document."""

import json
import os
import re
import subprocess
import sys

import pytest

from zope.pipeline.cli import main


@pytest.fixture(scope='module')
def project(tmp_path_factory):
    target = tmp_path_factory.mktemp('projects') / 'newsite'
    assert main(['create', str(target)]) == 0
    return target


def run(command, project):
    env = dict(os.environ, PYTHONPATH=str(project / 'src'))
    return subprocess.run(command, cwd=project, env=env, capture_output=True,
                          text=True, timeout=300)


def readme_command(project, section):
    """The command in the code block of a section of the project's
    README, as a list of arguments."""
    text = (project / 'README.md').read_text()
    body = re.search(r'^## %s\n(.*?)(?=^## |\Z)' % section, text,
                     re.MULTILINE | re.DOTALL).group(1)
    return re.search(r'^```sh\n(.*?)\n```', body,
                     re.MULTILINE | re.DOTALL).group(1).split()


@pytest.fixture(scope='module')
def test_run(project):
    """The new project's tests, run as its README says."""
    pytest.importorskip('zope.app.wsgi.testlayer')
    command = readme_command(project, 'Test')
    assert command[0] == 'python'
    return run([sys.executable] + command[1:], project)


def test_the_new_project_passes_its_own_tests(test_run):
    assert test_run.returncode == 0, test_run.stdout + test_run.stderr
    assert 'Ran 6 tests with 0 failures, 0 errors' in test_run.stdout


def test_the_new_projects_test_run_is_quiet(test_run):
    """No deprecation warning (zope.testrunner shows them all) and no
    layer that cannot be torn down: the run says what ran, and nothing
    the project's author would have to look into."""
    output = test_run.stdout + test_run.stderr
    assert 'Warning' not in output, output
    assert 'not supported' not in output, output
    assert re.search(r'Tear down newsite\.BrowserLayer in [0-9.]+ seconds',
                     test_run.stdout), test_run.stdout


def test_the_readme_serves_the_development_ini(project):
    assert readme_command(project, 'Serve') == [
        'zope-pipeline', 'serve', 'etc/deploy.ini']


def test_a_new_site_answers_its_front_page(project):
    done = run([sys.executable, '-c', GET_PAGES], project)
    assert done.returncode == 0, done.stderr
    pages = json.loads(done.stdout)
    assert pages['/'][0] == 200
    assert '<a href="http://localhost/welcome">Welcome</a>' in pages['/'][1]
    assert pages['/welcome'][0] == 200
    assert pages['/@@add-document'][0] == 401
    assert pages['/welcome/@@edit'][0] == 401


def test_a_new_sites_pages_link_its_own_stylesheet(project):
    done = run([sys.executable, '-c', GET_PAGES], project)
    assert done.returncode == 0, done.stderr
    pages = json.loads(done.stdout)
    for path in ('/', '/welcome'):
        assert '<link rel="stylesheet" href="http://localhost/@@/site.css"' \
            in pages[path][1]
    status, css = pages['/@@/site.css']
    assert status == 200
    assert 'body {' in css
    assert 'http' not in css  # nothing fetched from elsewhere


#: Load etc/deploy.ini as the server would and GET some pages through
#: WebTest (in a process of its own: the site's ZCML is loaded once per
#: process).
GET_PAGES = '''
import json, webtest
from paste.deploy import loadapp
app = webtest.TestApp(loadapp('config:etc/deploy.ini', relative_to='.'))
pages = {}
for path in ('/', '/welcome', '/@@add-document', '/welcome/@@edit',
             '/@@/site.css'):
    response = app.get(path, expect_errors=True)
    pages[path] = (response.status_int, response.text)
print(json.dumps(pages))
'''


def test_the_wheel_of_a_new_project_holds_every_template_and_resource(
        tmp_path):
    """The tutorial puts note.pt beside the package's modules: the
    project's wheel holds it, its ZCML, and static files in any folder."""
    pytest.importorskip('build')
    project = tmp_path / 'mysite'
    assert main(['create', str(project)]) == 0
    package = project / 'src' / 'mysite'
    tutorial = os.path.join(os.path.dirname(os.path.dirname(__file__)), '..',
                            'docs', 'tutorial', 'mysite', 'src', 'mysite')
    for name in ('note.pt', 'notes.zcml'):
        with open(os.path.join(tutorial, name)) as stream:
            (package / name).write_text(stream.read())
    (package / 'static' / 'images').mkdir(parents=True)
    (package / 'static' / 'site.css').write_text('body { margin: 0 }\n')
    (package / 'static' / 'images' / 'logo.svg').write_text('<svg/>\n')
    done = subprocess.run(
        [sys.executable, '-m', 'build', '--wheel', '--no-isolation',
         '--outdir', str(tmp_path / 'dist'), str(project)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / 'dist').glob('*.whl')
    import zipfile
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = {'mysite/note.pt', 'mysite/notes.zcml', 'mysite/site.zcml',
                'mysite/configure.zcml', 'mysite/ftesting.zcml',
                'mysite/templates/front.pt', 'mysite/static/site.css',
                'mysite/static/images/logo.svg'}
    assert expected <= names, sorted(expected - names)
