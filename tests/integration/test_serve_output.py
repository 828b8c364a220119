"""What `zope-pipeline serve --mod-wsgi` prints, with its output
redirected to a file as `> server.log 2>&1` does (a real mod_wsgi-express
server): one line saying where the site is, then Apache's and the daemon
processes' log lines, each record at the level it was logged, nothing
lost; and what the server listens on."""

import os
import re
import subprocess

from tests.integration import support


class RedirectedServer(support.ModWsgiServer):
    """A server whose output goes to a file opened for writing, as a
    shell's ``>`` opens it (not for appending)."""

    def start(self, timeout=90):
        with open(self.log_path, 'wb') as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
                cwd=support.ROOT, env=support.command_environment())
        self.wait_until_serving(timeout)

    def raw_log(self):
        with open(self.log_path, 'rb') as stream:
            return stream.read()


def listening(session):
    """{(address, port)} of the TCP sockets the processes of ``session``
    listen on (IPv4, from /proc)."""
    inodes = set()
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if os.getsid(int(pid)) != session:
                continue
            directory = '/proc/%s/fd' % pid
            for fd in os.listdir(directory):
                target = os.readlink(os.path.join(directory, fd))
                if target.startswith('socket:['):
                    inodes.add(target[8:-1])
        except (OSError, ProcessLookupError):
            continue
    found = set()
    with open('/proc/net/tcp') as stream:
        next(stream)
        for line in stream:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == '0A' and inode in inodes:      # LISTEN
                address, port = local.split(':')
                octets = bytes.fromhex(address)[::-1]
                found.add(('.'.join(map(str, octets)), int(port, 16)))
    return found


def test_redirected_output_says_where_the_site_is_once_and_loses_nothing():
    support.need_mod_wsgi()
    with support.sqlite_site() as site:
        server = RedirectedServer(site, processes=2, threads=2)
        with support.running(server):
            status, _headers, _body = support.request(server.port,
                                                      support.PAGE)
            assert status == 200
            listeners = listening(server.process.pid)
            with open(os.path.join(server.server_root,
                                   'body-buffering.conf')) as stream:
                inner = int(re.search(r'RewriteRule \^ http://127\.0\.0\.1:'
                                      r'(\d+)', stream.read()).group(1))
        raw = server.raw_log()
    text = raw.decode('utf-8', 'replace')
    # Nothing overwritten: mod_wsgi-express no longer truncates the file.
    assert b'\0' not in raw, text[:2000]
    lines = text.splitlines()
    serving = [line for line in lines if line.startswith('Serving on ')]
    assert serving == [lines[0]], text[:2000]
    assert lines[0].startswith('Serving on http://127.0.0.1:%d/ (mod_wsgi '
                               % server.port)
    # mod_wsgi-express's summary, which names the daemons' own listener
    # as the server's URL, is not shown.
    assert 'Server URL' not in text
    assert ':%d' % inner not in text
    # The daemons' records at their own level, not Apache's error level.
    assert '[wsgi:error]' not in text, text[:3000]
    assert re.search(r'^INFO \[zope\.pipeline\.zodb\.storage\] pid \d+: ',
                     text, re.MULTILINE), text[:3000]
    # Apache's own lines keep theirs.
    assert re.search(r'\[mpm_event:notice\].*resuming normal operations',
                     text)
    # The clients' address, and the daemons' listener on loopback only.
    assert listeners == {('127.0.0.1', server.port), ('127.0.0.1', inner)}
