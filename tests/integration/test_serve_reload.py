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


def touch_until_restarted(path, lines, seconds=60):
    """Change ``path``'s time, again after each quiet second, until hupper
    says it noticed (it notices a change only once it has looked at the
    file, which may be after the first change); then, touching no more,
    wait until the server says it is serving again. A change after hupper
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
            lines, 'Serving on', max(1, deadline - time.monotonic()))
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
    port = support.free_port()
    server = subprocess.Popen(
        [support.ZOPE_PIPELINE, 'serve', ini, '--reload', '--port',
         str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True, env=support.command_environment())
    lines = queue.Queue()
    threading.Thread(target=lines_of, args=(server.stdout, lines),
                     daemon=True).start()
    try:
        first = wait_for_line(lines, 'Serving on')
        assert any('is in memory' in line for line in first)
        assert status_when_listening(port) == 200
        touch_until_restarted(ini, lines)
        assert status_when_listening(port) == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
