"""Running ``zope-pipeline serve`` as root: the user Apache's children
(and waitress, once it has bound its socket) run as, the secret files
shared with that user's group, and a clear refusal when that user cannot
read what the daemon processes need.  The storage directories given to
that user (never through a symbolic link) and what root keeps are
zope.pipeline.serving.layout's.
"""

import grp
import os
import pwd
import stat
import sys

import zope.pipeline
from zope.pipeline.security.credentials import mysql_section_of
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import write_secret
from zope.pipeline.serving.startup import database_configs

#: The user Apache's children run as when the server is started by root.
DEFAULT_USER = 'www-data'


def run_as(user=None, group=None):
    """(user, group) for Apache's children; (None, None) unless root."""
    if os.geteuid() != 0:
        return None, None
    user = user or DEFAULT_USER
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise SystemExit('Run as root, Apache needs a user for its children '
                         'but %r does not exist: pass --user.'
                         % user) from None
    if group is None:
        group = grp.getgrgid(entry.pw_gid).gr_name
    return user, group


def secret_files(publisher):
    """Files with secrets the daemon processes read: the principals file
    (and the record of its checked passwords), the metrics endpoint's
    token file and the MySQL option files of the databases."""
    paths = [publisher.principals_zcml] if getattr(
        publisher, 'principals_zcml', None) else []
    record = getattr(getattr(publisher, 'checked_passwords', None), 'path',
                     None)
    if record and os.path.exists(record):
        paths.append(record)
    paths.extend(os.path.abspath(stage.app.token_file)
                 for stage in publisher.outer.stages
                 if getattr(stage.app, 'token_file', ''))
    for _path, section in database_configs(publisher):
        mysql = mysql_section_of(section) if section is not None else None
        option_file = getattr(mysql, 'read_default_file', None)
        if option_file and os.path.exists(option_file):
            paths.append(option_file)
    return paths


def readable_paths(ini, publisher):
    """What the daemon processes read: the ini, the ZConfig files, the
    Python environment and the code of zope.pipeline."""
    paths = [ini, sys.prefix, os.path.dirname(zope.pipeline.__file__)]
    paths.extend(path for path, section in database_configs(publisher)
                 if path)
    return paths


def check_readable_by(user, group, paths):
    """Fail clearly when ``user`` cannot read one of ``paths``."""
    entry = pwd.getpwnam(user)
    groups = set(os.getgrouplist(user, entry.pw_gid))
    groups.add(grp.getgrnam(group).gr_gid)
    for path in paths:
        blocked = first_blocked(os.path.abspath(path), entry.pw_uid, groups)
        if blocked is not None:
            raise SystemExit(
                '%s cannot read %s (%s is not open to it).  Apache runs the '
                'application as %s: move the project and its virtualenv '
                'where %s can read them, or pass --user.'
                % (user, path, blocked, user, user))


def first_blocked(path, uid, groups):
    """The first directory on the way to ``path`` (or ``path``) that
    ``uid`` cannot pass through (or read); None when all are open."""
    parts = path.split(os.sep)
    for index in range(2, len(parts) + 1):
        current = os.sep.join(parts[:index]) or os.sep
        is_last = index == len(parts)
        info = os.stat(current)
        wanted = 'r' if is_last and not stat.S_ISDIR(info.st_mode) else 'x'
        if not allowed(info, uid, groups, wanted):
            return current
    return None


def allowed(info, uid, groups, wanted):
    bits = {'r': (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH),
            'x': (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)}[wanted]
    if info.st_uid == uid:
        return bool(info.st_mode & bits[0])
    if info.st_gid in groups:
        return bool(info.st_mode & bits[1])
    return bool(info.st_mode & bits[2])


# -- the secret files the commands write


def secret_group(group=None, existing=None):
    """The group of a secret file the daemon processes read
    (``write_shared_secret``): ``group`` (checked), else the group of the
    ``existing`` file when root owns it, else the group of
    ``DEFAULT_USER`` (the daemon processes' user of ``serve`` as
    root)."""
    if group is not None:
        try:
            return grp.getgrnam(group).gr_gid
        except KeyError:
            raise SystemExit('--group %r: no such group.' % group) from None
    if existing is not None and existing.st_uid == 0:
        return existing.st_gid
    try:
        return pwd.getpwnam(DEFAULT_USER).pw_gid
    except KeyError:
        return 0


def write_shared_secret(path, text, group=None):
    """Write a secret file the daemon processes read (the principals
    file, the MySQL option file) as ``serve`` run as root leaves it: run
    as root, root's and readable by the daemon processes' group, mode
    0640 (``secret_group``); otherwise the user's, mode 0600 (0640 with
    its ``group``).  Never through a symbolic link
    (``privatefiles.write_secret``)."""
    try:
        existing = os.lstat(path)
    except FileNotFoundError:
        existing = None
    root = os.geteuid() == 0
    gid = secret_group(group, existing) if root or group is not None \
        else None
    try:
        write_secret(path, text)
    except UnsafePathError as error:
        raise SystemExit(str(error)) from None
    if gid is not None:
        os.chown(path, 0 if root else -1, gid, follow_symlinks=False)
        os.chmod(path, 0o640)
    return path

