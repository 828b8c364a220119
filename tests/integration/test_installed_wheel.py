"""zope.pipeline installed from its wheel into a fresh virtualenv outside
the clone, as a new user installs it: `zope-pipeline create` writes a
project there, the project installs, its development deployment serves
its front page (200) with waitress, and its tests pass with the command
its README names; built as a wheel and installed (not editable), it is
served with `serve --reload`, which follows edits of the installed
package's template and ZCML.

Offline and quick: the sdist is built from the clone and the wheel from
the sdist (``python -m build --no-isolation``, the setuptools of this
virtualenv); the fresh virtualenv (made without pip) gets the wheel alone
(``--no-deps``) and finds the dependencies, pip and setuptools in this
virtualenv's site-packages through a ``.pth`` line (appended to its path,
after its own site-packages, and without this virtualenv's own ``.pth``
files, so the clone's editable install is not seen)."""

import os
import pathlib
import queue
import re
import subprocess
import sys
import sysconfig
import tarfile
import threading
import time
import zipfile

import pytest

from tests.conftest import ROOT
from tests.integration import support
from tests.integration import test_serve_reload as serve_reload


def clean_environment():
    """This process's environment without what names the clone or this
    virtualenv."""
    return {key: value for key, value in os.environ.items()
            if key not in ('PYTHONPATH', 'VIRTUAL_ENV', 'PYTHONHOME')}


def run(command, cwd, timeout=300):
    """Run ``command`` in ``cwd`` with an environment that names neither
    the clone nor this virtualenv; fail with its output unless it
    succeeds."""
    done = subprocess.run([str(part) for part in command], cwd=cwd,
                          env=clean_environment(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, '%s\n%s\n%s' % (command, done.stdout,
                                                  done.stderr)
    return done


@pytest.fixture(scope='module')
def distributions(tmp_path_factory):
    """(sdist, wheel) built from the clone."""
    need_build()
    out = tmp_path_factory.mktemp('dist')
    run([sys.executable, '-m', 'build', '--no-isolation', '--outdir', out],
        ROOT)
    (sdist,) = out.glob('*.tar.gz')
    (wheel,) = out.glob('*.whl')
    return sdist, wheel


def need_build():
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.skip('the build package (the test extra) is not installed')


@pytest.fixture(scope='module')
def fresh_venv(distributions):
    """A new virtualenv outside the clone with the wheel installed, in a
    directory the daemon user can read (run as root, waitress becomes
    www-data once it has bound its socket)."""
    with support.scratch_directory() as directory:
        yield installed_venv(pathlib.Path(directory), distributions[1])


def installed_venv(home, wheel):
    venv = home / 'venv'
    run([sys.executable, '-m', 'venv', '--without-pip', venv], home)
    python = venv / 'bin' / 'python'
    purelib = run([python, '-c', 'import sysconfig; '
                   'print(sysconfig.get_path("purelib"))'], home)
    with open(os.path.join(purelib.stdout.strip(), 'dependencies.pth'),
              'w') as pth:
        pth.write(sysconfig.get_path('purelib') + '\n')
    run([python, '-m', 'pip', 'install', '--no-deps', '--no-index',
         wheel], home)
    return venv


def test_the_wheel_holds_the_licence_and_the_project_templates(
        distributions):
    with zipfile.ZipFile(distributions[1]) as wheel:
        names = wheel.namelist()
        metadata = wheel.read([name for name in names
                               if name.endswith('/METADATA')][0]).decode()
    assert [name for name in names if name.endswith('licenses/LICENSE.txt')]
    assert 'zope/pipeline/project_template/src/+package+/views.py_tmpl' in (
        names)
    assert not [name for name in names if name.startswith('benchmarks/')]
    assert 'License-Expression: ZPL-2.1' in metadata
    assert 'Classifier: Topic :: Internet :: WWW/HTTP :: WSGI :: ' \
        'Application' in metadata


def test_the_sdist_holds_what_make_test_needs(distributions):
    with tarfile.open(distributions[0]) as sdist:
        names = {name.split('/', 1)[1] for name in sdist.getnames()
                 if '/' in name}
    assert {'CHANGES.rst', 'LICENSE.txt', 'COPYRIGHT.txt', 'Makefile',
            'buildout.cfg', 'constraints.txt', 'tests/conftest.py',
            'docs/index.rst', 'etc/deploy.ini', 'benchmarks/cli.py',
            '.ci/run'} <= names


def test_a_new_project_from_the_installed_wheel_serves_and_passes_its_tests(
        fresh_venv):
    bin_directory = fresh_venv / 'bin'
    home = fresh_venv.parent
    found = run([bin_directory / 'python', '-c',
                 'import zope.pipeline; print(zope.pipeline.__file__)'],
                home).stdout.strip()
    assert found.startswith(str(fresh_venv)), found
    run([bin_directory / 'zope-pipeline', 'create', 'newsite'], home)
    project = home / 'newsite'
    run([bin_directory / 'python', '-m', 'pip', 'install', '--no-deps',
         '--no-index', '--no-build-isolation', '-e', '.'], project)
    assert serve_front_page(bin_directory, project) == 200
    command = readme_test_command(project)
    assert command[0] == 'python'
    done = run([bin_directory / 'python'] + command[1:], project)
    assert 'Ran 6 tests with 0 failures, 0 errors' in done.stdout
    # quietly: no deprecation warning, no layer left standing
    output = done.stdout + done.stderr
    assert 'Warning' not in output and 'not supported' not in output, output


def readme_test_command(project):
    text = (project / 'README.md').read_text()
    section = text.split('## Test\n', 1)[1]
    return re.search(r'```sh\n(.*?)\n```', section).group(1).split()


def serve_front_page(bin_directory, project):
    """The status of GET / from `zope-pipeline serve etc/deploy.ini`."""
    import time
    port = support.free_port()
    server = subprocess.Popen(
        [str(bin_directory / 'zope-pipeline'), 'serve', 'etc/deploy.ini',
         '--port', str(port)], cwd=project, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                return support.request(port, '/')[0]
            except ConnectionRefusedError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError('not served: %s' % (
                        server.stderr.read() if server.poll() is not None
                        else 'no answer in 60 s')) from None
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)



def test_a_project_installed_from_its_wheel_reloads_its_template_and_zcml(
        fresh_venv):
    """The created project built as a wheel and installed (not editable):
    `serve --reload` of its development ini reads an edit of the
    installed package's template at the next render, and starts again on
    an edit of the installed package's ZCML (the configuration read that
    file)."""
    bin_directory = fresh_venv / 'bin'
    home = fresh_venv.parent
    run([bin_directory / 'zope-pipeline', 'create', 'wheelsite'], home)
    project = home / 'wheelsite'
    run([bin_directory / 'python', '-m', 'build', '--no-isolation',
         '--wheel', '--outdir', home / 'project-dist', project], home)
    (wheel,) = (home / 'project-dist').glob('wheelsite-*.whl')
    run([bin_directory / 'python', '-m', 'pip', 'install', '--no-deps',
         '--no-index', wheel], home)
    package = pathlib.Path(run(
        [bin_directory / 'python', '-c',
         'import os, wheelsite; print(os.path.dirname(wheelsite.__file__))'],
        home).stdout.strip())
    assert package.is_relative_to(fresh_venv), package  # installed, a copy
    server, port, lines = start_reloading(bin_directory, project)
    try:
        serve_reload.wait_for_line(lines, 'Serving on')
        serve_reload.body_when(port, '/', 'Add a document')
        template = package / 'templates' / 'front.pt'
        template.write_text(template.read_text().replace(
            'Add a document', 'Write a document'))
        later = time.time() + 5  # a later modification time: read again
        os.utime(template, (later, later))
        serve_reload.body_when(port, '/', 'Write a document', seconds=10)
        assert support.request(port, '/@@welcome.html')[0] == 404
        zcml = package / 'configure.zcml'
        zcml.write_text(zcml.read_text().replace(
            '</configure>', WELCOME_PAGE + '</configure>'))
        serve_reload.touch_until_restarted(zcml, lines)
        serve_reload.body_when(port, '/@@welcome.html', 'Write a document')
    finally:
        serve_reload.stop(server)


#: A page the ZCML edit adds: the front page under another name.
WELCOME_PAGE = '''\
  <browser:page
      for="zope.site.interfaces.IRootFolder"
      name="welcome.html"
      class=".views.FrontPage"
      permission="zope.View"
      />
'''


def start_reloading(bin_directory, project):
    """`zope-pipeline serve etc/deploy.ini --reload` of the installed
    zope.pipeline in ``project``: (process, port, queue of its lines)."""
    port = support.free_port()
    server = subprocess.Popen(
        [str(bin_directory / 'zope-pipeline'), 'serve', 'etc/deploy.ini',
         '--reload', '--port', str(port)], cwd=project,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, env=clean_environment())
    lines = queue.Queue()
    threading.Thread(target=serve_reload.lines_of,
                     args=(server.stdout, lines), daemon=True).start()
    return server, port, lines
