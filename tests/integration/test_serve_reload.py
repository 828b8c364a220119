"""`zope-pipeline serve --reload` under waitress, for real: hupper starts
the server again when a file beside the ini changes."""

import os
import queue
import signal
import subprocess
import threading
import time

from tests.integration import support

INI = '''\
[app:main]
use = egg:zope.pipeline#main
site_zcml = %(site_zcml)s
open_root.populate = zope.pipeline.sample.content.populate
'''


def lines_of(stream, into):
    for line in stream:
        into.put(line)


def wait_for_line(lines, text, seconds=60):
    """The lines read until one holding ``text`` (which ends them)."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError('no %r within %d s; output:\n%s'
                         % (text, seconds, ''.join(seen)))


def status_when_listening(port, seconds=30):
    """The status of GET / once the server accepts connections ("Serving
    on" is printed just before waitress binds its socket)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return support.request(port, '/')[0]
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def touch_until_restarted(path, lines, seconds=60,
                          then='Serving on'):
    """Change ``path``'s time, again after each quiet second, until hupper
    says it noticed (it notices a change only once it has looked at the
    file, which may be after the first change); then, touching no more,
    wait until the server says ``then`` (it is serving again, or a worker
    that failed to load waits for a change).  A change after hupper
    noticed one would start yet another worker, which could be killed
    while it answers."""
    deadline = time.monotonic() + seconds
    seen = []
    changes = 0
    while time.monotonic() < deadline:
        changes += 1
        os.utime(path, (time.time() + changes, time.time() + changes))
        try:
            while 'changed; reloading' not in (seen or [''])[-1]:
                seen.append(lines.get(timeout=1))
        except queue.Empty:
            continue
        return seen + wait_for_line(
            lines, then, max(1, deadline - time.monotonic()))
    raise AssertionError('no change noticed within %d s; output:\n%s'
                         % (seconds, ''.join(seen)))


def test_a_changed_ini_starts_the_server_again():
    # a directory the daemon user can read: run as root, waitress becomes
    # www-data once it has bound its socket
    with support.scratch_directory() as directory:
        serve_and_touch(os.path.join(directory, 'site.ini'))


def serve_and_touch(ini):
    with open(ini, 'w') as stream:
        stream.write(INI % {'site_zcml': support.SITE_ZCML})
    server, port, lines = start_reloading_server(ini)
    try:
        first = wait_for_line(lines, 'Serving on')
        assert any('is in memory' in line for line in first)
        assert status_when_listening(port) == 200
        touch_until_restarted(ini, lines)
        assert status_when_listening(port) == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


#: A site whose own package ZCML lives in a directory of its own (not
#: beside the ini): a page with a template, as a project's package has.
PROJECT_SITE_ZCML = '''\
<configure xmlns="http://namespaces.zope.org/zope">
  <include package="zope.pipeline" file="site.zcml" />
  <include package="zope.pipeline.sample" />
  <include file="%(package)s/configure.zcml" />
</configure>
'''

PACKAGE_ZCML = '''\
<configure
    xmlns="http://namespaces.zope.org/zope"
    xmlns:browser="http://namespaces.zope.org/browser">
  <include package="zope.browserpage" file="meta.zcml" />
  <browser:page
      for="zope.site.interfaces.IRootFolder"
      name="%(name)s"
      template="templates/note.pt"
      permission="zope.Public"
      />
</configure>
'''

BROKEN_ZCML = '<configure xmlns="http://namespaces.zope.org/zope">\n<oops'

TEMPLATE = '<html><body><p>%s</p></body></html>\n'

DEVELOPMENT_INI = INI + 'development = true\n'


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as stream:
        stream.write(text)


class ProjectSite:
    """A scratch project: site.ini and site.zcml in its directory, its
    package's configure.zcml and templates/note.pt in ``pkg/``."""

    def __init__(self, directory, development=True, name='note.html'):
        self.directory = directory
        self.ini = os.path.join(directory, 'site.ini')
        self.package_zcml = os.path.join(directory, 'pkg', 'configure.zcml')
        self.template = os.path.join(directory, 'pkg', 'templates',
                                     'note.pt')
        site_zcml = os.path.join(directory, 'site.zcml')
        write(site_zcml, PROJECT_SITE_ZCML % {'package': 'pkg'})
        write(self.ini, (DEVELOPMENT_INI if development else INI)
              % {'site_zcml': site_zcml})
        write(self.package_zcml, PACKAGE_ZCML % {'name': name})
        write(self.template, TEMPLATE % 'first')


def start_reloading_server(ini):
    port = support.free_port()
    server = subprocess.Popen(
        [support.ZOPE_PIPELINE, 'serve', ini, '--reload', '--port',
         str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True, env=support.command_environment())
    lines = queue.Queue()
    threading.Thread(target=lines_of, args=(server.stdout, lines),
                     daemon=True).start()
    return server, port, lines


def stop(server):
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=30)


def body_when(port, path, text, seconds=30):
    """The body of GET ``path`` once it holds ``text``."""
    deadline = time.monotonic() + seconds
    body = ''
    while time.monotonic() < deadline:
        try:
            body = support.request(port, path)[2]
        except ConnectionError:
            body = ''
        if text in body:
            return body
        time.sleep(0.2)
    raise AssertionError('GET %s never said %r; last: %r'
                         % (path, text, body))


def drained(lines):
    seen = []
    while True:
        try:
            seen.append(lines.get_nowait())
        except queue.Empty:
            return seen


def test_a_template_edit_is_seen_without_a_restart_in_development():
    with support.scratch_directory() as directory:
        site = ProjectSite(directory)
        server, port, lines = start_reloading_server(site.ini)
        try:
            wait_for_line(lines, 'Serving on')
            assert 'first' in body_when(port, '/@@note.html', 'first')
            # a later modification time: the template is read again
            write(site.template, TEMPLATE % 'second')
            later = time.time() + 5
            os.utime(site.template, (later, later))
            body_when(port, '/@@note.html', 'second', seconds=10)
            time.sleep(2)  # hupper polls each second: it would have seen it
            assert not [line for line in drained(lines)
                        if 'reloading' in line or 'Serving on' in line]
        finally:
            stop(server)


def test_an_edit_of_the_packages_zcml_starts_the_server_again():
    with support.scratch_directory() as directory:
        site = ProjectSite(directory, development=False)
        server, port, lines = start_reloading_server(site.ini)
        try:
            wait_for_line(lines, 'Serving on')
            body_when(port, '/@@note.html', 'first')
            write(site.package_zcml, PACKAGE_ZCML % {'name': 'renamed.html'})
            touch_until_restarted(site.package_zcml, lines)
            body_when(port, '/@@renamed.html', 'first')
            assert support.request(port, '/@@note.html')[0] == 404
        finally:
            stop(server)


def test_a_broken_zcml_then_fixed_serves_again():
    with support.scratch_directory() as directory:
        site = ProjectSite(directory)
        server, port, lines = start_reloading_server(site.ini)
        try:
            wait_for_line(lines, 'Serving on')
            write(site.package_zcml, BROKEN_ZCML)
            seen = touch_until_restarted(
                site.package_zcml, lines,
                then='Waiting for a file to change')
            assert any('pkg/configure.zcml' in line for line in seen), seen
            # fixed: the worker that failed is replaced
            write(site.package_zcml, PACKAGE_ZCML % {'name': 'note.html'})
            touch_until_restarted(site.package_zcml, lines)
            body_when(port, '/@@note.html', 'first')
        finally:
            stop(server)
