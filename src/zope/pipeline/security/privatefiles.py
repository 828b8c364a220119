"""Private directories and secret files: created for their owner only,
checked before use, never reached or changed through a symbolic link.

A directory the server keeps state in (metrics state, locks) must not be
one another user prepared: ``private_directory`` creates it with mode
0700, or accepts an existing one only when it is a real directory (not a
link), owned by this process's user and writable by nobody else.
``write_secret`` writes a file only its owner can read (the password
files ``zope-pipeline init-db`` and ``adduser`` write).
"""

import os
import stat

#: The environment variable naming a private directory of the server for
#: its run-time state (metrics, compiled templates): ``zope-pipeline serve
#: --mod-wsgi`` sets it to ``<server root>/run``, etc/app.wsgi to
#: ``var/run``.
RUN_DIR_VARIABLE = 'ZOPE_PIPELINE_RUN_DIR'


class UnsafePathError(Exception):
    """A path is a link, or belongs to, or is writable by, someone else."""


def check_private_directory(path, uid=None):
    """Raise ``UnsafePathError`` unless ``path`` is a directory (not a
    symbolic link) owned by ``uid`` (this process's user) that neither its
    group nor others may write.  Root accepts any owner: ``zope-pipeline
    serve`` run as root loads the site (and checks its directories) before
    Apache's children, as www-data, use the directories given to them."""
    uid = os.geteuid() if uid is None else uid
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(
            '%s is a symbolic link: a private directory must be a real '
            'directory.  Remove the link.' % path)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError('%s is not a directory.  Remove it.' % path)
    if info.st_uid != uid and uid != 0:
        raise UnsafePathError(
            '%s belongs to user %d, not to user %d that runs this '
            'process: another user may have prepared it.  Remove it (or '
            'give it to user %d) and start again.'
            % (path, info.st_uid, uid, uid))
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePathError(
            '%s is writable by its group or by others (mode %o): '
            'chmod go-w it, or remove it.'
            % (path, stat.S_IMODE(info.st_mode)))


def private_directory(path, parents=False):
    """Create ``path`` (mode 0700) or check the existing one; return it.
    With ``parents``, the directories above it that do not exist are
    created first, the one holding it with mode 0700 (``os.makedirs``;
    a run directory and its state directory)."""
    if parents:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700,
                    exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check_private_directory(path)
    return path


def refuse_link(path, what):
    """Raise ``UnsafePathError`` if ``path`` is a symbolic link."""
    if os.path.islink(path):
        raise UnsafePathError(
            '%s (%s) is a symbolic link; refusing to follow it.  Make it a '
            'real directory or file.' % (path, what))


def write_secret(path, text):
    """Write ``text`` to ``path``, readable and writable by its owner only
    (replacing a file, never writing through a link)."""
    refuse_link(path, 'a secret file')
    temporary = '%s.tmp-%d' % (path, os.getpid())
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                         os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, 'w') as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return path


def give_to(path, uid, gid):
    """Change the owner of ``path`` itself, never what a link points to."""
    os.chown(path, uid, gid, follow_symlinks=False)
