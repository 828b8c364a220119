"""A scratch directory for one benchmark run: scripts, inis, ZConfig files,
SQLite data, server roots, counts and logs.

Apache runs its children as an unprivileged user when started by root, so
everything here belongs to that user (``www-data``), who must write the
data, counts and logs; the directory is removed at the end.
"""

import os
import pwd
import shutil
import tempfile

#: The user Apache's children run as when the harness runs as root.
SERVER_USER = 'www-data'


def server_user():
    """(user, group) names for mod_wsgi-express under root, else None."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise SystemExit('Running as root needs the %r user for Apache.'
                         % SERVER_USER) from None
    import grp
    return entry.pw_name, grp.getgrgid(entry.pw_gid).gr_name


class Workspace:

    def __init__(self, root=None, keep=False):
        self.path = tempfile.mkdtemp(prefix='zp-bench-', dir=root)
        os.chmod(self.path, 0o755)
        self.keep = keep
        self.user = server_user()

    def directory(self, *parts):
        """Create (if needed) and return a directory the servers can write."""
        path = os.path.join(self.path, *parts)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o755)
        self.give(path)
        return path

    def write(self, name, text):
        path = os.path.join(self.path, name)
        with open(path, 'w') as output:
            output.write(text)
        os.chmod(path, 0o644)
        self.give(path)
        return path

    def give(self, path):
        """Hand ``path`` (and what is in it) to the server user."""
        if self.user is None:
            return
        user, group = self.user
        for directory, _dirnames, filenames in os.walk(path):
            shutil.chown(directory, user, group)
            for name in filenames:
                shutil.chown(os.path.join(directory, name), user, group)
        if os.path.isfile(path):
            shutil.chown(path, user, group)

    def remove(self):
        if not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
