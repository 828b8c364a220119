"""Where the files of a served site live and who may change them: nothing
root runs or reads lies in, or below, a directory the daemon user can
write; the daemon user gets its own data directories only.

``zope-pipeline serve`` run as root reads the ini, the ZCML, the ZConfig
files and the secret files, and (under ``--mod-wsgi``) runs Apache from
the server root (``apachectl``, which sources ``envvars``; ``httpd.conf``);
the daemon processes (``www-data``) write the storage.  So:

- the state directory ``var/`` beside the ini's ``etc/`` stays root's,
  mode 0750 with the daemon's group (0700 when not root), and is repaired
  when an older ``serve`` gave it to the daemon user;
- each storage directory (SQLite data, blobs, caches) is the daemon's,
  mode 0700, its files 0600 (also repaired), and must hold nothing root
  reads; SQLite keeps its files in ``var/data``, never in ``var/`` itself;
- the secret files the daemons read (principals, MySQL option file) are
  root's, readable by the daemon's group (0640);
- the server root is root's; one the daemon user could change (an older
  layout) is made again when it is the default one, else refused;
- finally every path root reads or runs is checked, through each
  directory on its way and each symbolic link, and the start refused
  while the daemon user can change any of them.

Processes that serve keep the files they create private (``PRIVATE_UMASK``).
"""

import collections
import grp
import os
import pwd
import shlex
import shutil
import stat
import sys

from paste.deploy import appconfig

import zope.pipeline
from zope.pipeline.security.credentials import checked_passwords_path
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import refuse_link
from zope.pipeline.serving.ownership import DEFAULT_USER
from zope.pipeline.serving.ownership import first_blocked
from zope.pipeline.serving.ownership import secret_files
from zope.pipeline.serving.startup import database_configs
from zope.pipeline.zodb.storage import load_database_config

#: The umask of the processes that serve: the files they create (the
#: database, blobs, caches, compiled templates) are their user's only.
PRIVATE_UMASK = 0o077
#: The daemon processes' run-time state in a server root (``ZOPE_PIPELINE_
#: RUN_DIR``: ``modwsgi_express.run_directory`` and ``make_run_directory``).
RUN_DIRECTORY = 'run'
#: mod_wsgi-express's egg cache in a server root.
EGG_CACHE = 'python-eggs'
#: The directories of the daemon user inside a server root: the one home
#: of their names.
DAEMON_ENTRIES = (RUN_DIRECTORY, EGG_CACHE)
#: Symbolic links followed before giving up (as the kernel's ELOOP).
MAX_LINKS = 40

Daemon = collections.namedtuple('Daemon', 'user group uid gid groups')


def daemon_of(user, group):
    """The daemon user (``ownership.run_as``'s names) with its ids; None
    when serve is not root."""
    if user is None:
        return None
    entry = pwd.getpwnam(user)
    gid = grp.getgrnam(group).gr_gid
    groups = frozenset(os.getgrouplist(user, entry.pw_gid)) | {gid}
    return Daemon(user, group, entry.pw_uid, gid, groups)


# -- who can change what


def can_change(info, daemon):
    """Whether ``daemon`` can change what ``info`` (an lstat) describes:
    it owns it (and may chmod it), or a write bit is open to it."""
    mode = info.st_mode
    return (info.st_uid == daemon.uid or bool(mode & stat.S_IWOTH) or
            (info.st_gid in daemon.groups and bool(mode & stat.S_IWGRP)))


def protects(directory_info, entry_info, daemon):
    """Whether a directory the daemon user can write still keeps it from
    replacing an entry: the sticky bit (/tmp) and an entry not its own."""
    return bool(directory_info.st_mode & stat.S_ISVTX) and \
        entry_info.st_uid != daemon.uid


def first_changeable(path, daemon, links=0):
    """The first thing on the way to ``path`` (a directory, a symbolic
    link's target, or ``path`` itself) that ``daemon`` can change, or
    None.  What does not exist yet stops the walk: its parent decides."""
    current = os.sep
    info = os.lstat(current)
    for name in os.path.abspath(path).split(os.sep)[1:]:
        if not name:
            continue
        entry = os.path.join(current, name)
        try:
            entry_info = os.lstat(entry)
        except FileNotFoundError:
            return current if can_change(info, daemon) else None
        if can_change(info, daemon) and \
                not protects(info, entry_info, daemon):
            return current
        if stat.S_ISLNK(entry_info.st_mode):
            if links >= MAX_LINKS:
                return entry
            target = os.path.join(current, os.readlink(entry))
            found = first_changeable(target, daemon, links + 1)
            if found is not None:
                return found
            entry = os.path.realpath(target)
            try:
                entry_info = os.stat(entry)
            except FileNotFoundError:
                return None
        current, info = entry, entry_info
    return current if can_change(info, daemon) else None


def refuse_changeable(paths, daemon):
    """Stop unless every one of ``paths`` (what root reads or runs) is out
    of the daemon user's reach."""
    for path in paths:
        found = first_changeable(path, daemon)
        if found is not None:
            raise SystemExit(
                '%s can change %s, and root reads or runs %s: it could '
                'make root run its code.  Give it to root and close it to '
                '%s (chown root %s; chmod go-w %s), or move it.'
                % (daemon.user, found, path, daemon.user, found, found))


def root_paths(ini, publisher, secrets=(), more=()):
    """What ``serve`` run as root reads or runs: the ini and the
    directory of its ZCML, the ZConfig files, the secret files, the
    Python environment, zope.pipeline's code, and ``more`` (the server
    root, mod_wsgi-express)."""
    paths = [ini, os.path.dirname(ini), sys.prefix, sys.executable,
             os.path.dirname(zope.pipeline.__file__)]
    paths.extend(path for path, _section in database_configs(publisher)
                 if path)
    return paths + list(secrets) + list(more)


# -- the storage


def storage_directories(publisher):
    """Directories the storages write: SQLite data, caches, blobs."""
    directories = []
    for _path, section in database_configs(publisher):
        if section is None:
            continue
        directories.extend(directories_of(section.config.storage.config))
    return directories


def directories_of(storage):
    """The directories a storage's ZConfig section writes: its RelStorage
    cache, its blobs, its SQLite data."""
    candidates = [getattr(storage, 'cache_local_dir', None),
                  getattr(storage, 'blob_dir', None),
                  sqlite_directory(storage)]
    return [os.path.normpath(directory)
            for directory in candidates if directory]


def sqlite_directory(storage):
    """The ``data-dir`` of a RelStorage on SQLite, or None."""
    adapter = getattr(storage, 'adapter', None)
    return getattr(getattr(adapter, 'config', None), 'data_dir', None)


def refuse_database_left_above(directories):
    """Stop when a storage directory holds no SQLite database but the one
    holding it does: an older layout kept it in ``var/`` itself, and a new
    empty database would be made beside it."""
    for directory in directories:
        above = os.path.dirname(directory)
        if os.path.exists(os.path.join(directory, 'main.sqlite3')) or \
                not os.path.exists(os.path.join(above, 'main.sqlite3')):
            continue
        raise SystemExit(
            'The database is in %s, but the storage now keeps it in %s (a '
            'directory of its own, which the server\'s user may write '
            'while %s stays private).  Stop every server using it, then: '
            'mkdir -m 0700 %s && mv %s/*.sqlite3* %s/'
            % (above, directory, above, directory, above, directory))


def refuse_storage_holding(directories, paths, daemon):
    """Stop when a storage directory, given to the daemon user, would
    hold one of ``paths`` (what root reads or runs)."""
    for directory in directories:
        real = os.path.realpath(directory)
        for path in paths:
            if os.path.commonpath([real, os.path.realpath(path)]) == real:
                raise SystemExit(
                    'The storage directory %s is given to %s, but root '
                    'reads or runs %s in it.  Give the storage a directory '
                    'of its own (e.g. data-dir $here/../var/data in the '
                    'ZConfig file).' % (directory, daemon.user, path))


def make_private_tree(directory, daemon=None):
    """Create ``directory`` if needed; its directories mode 0700, its
    files 0600, and the daemon user's (run as root).

    The daemon user can change the tree while root walks it (swap a
    directory for a symbolic link, link in a file of root's), so nothing
    is done by path: the walk goes from descriptor to descriptor
    (``os.fwalk``, which enters a directory only when the descriptor it
    opened is the entry it listed), each file is opened relative to its
    directory's descriptor without following a link and checked to be
    the entry listed, and is changed through its own descriptor.  A link
    is left alone; so is a file of another user with more than one name
    (a hard link the daemon user may have made to any file)."""
    try:
        refuse_link(directory, 'a storage directory')
    except UnsafePathError as error:
        raise SystemExit(str(error)) from None
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for parent, _directories, files, directory_fd in os.fwalk(
            directory, follow_symlinks=False):
        make_private(directory_fd, daemon)
        for name in files:
            private_file(parent, name, directory_fd, daemon)


#: How a file of a private tree is opened: never through a link, never
#: blocking (a FIFO), never as a terminal.
PRIVATE_FILE_FLAGS = (os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK |
                      os.O_NOCTTY | os.O_CLOEXEC)


def private_file(parent, name, directory_fd, daemon):
    """One file of a private tree, ``name`` in the directory ``parent``
    open as ``directory_fd``: only a regular file, still the one
    listed."""
    try:
        listed = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
        if not stat.S_ISREG(listed.st_mode):
            return
        descriptor = os.open(name, PRIVATE_FILE_FLAGS, dir_fd=directory_fd)
    except OSError:
        return  # gone, or replaced by a link: nothing to do
    try:
        info = os.fstat(descriptor)
        if not os.path.samestat(listed, info):
            return
        owner = daemon.uid if daemon is not None else os.geteuid()
        if info.st_nlink > 1 and info.st_uid != owner:
            print('%s has %d names and is not %s\'s: left alone (a hard '
                  'link to a file outside the storage?).'
                  % (os.path.join(parent, name), info.st_nlink,
                     daemon.user if daemon is not None else 'this user'),
                  file=sys.stderr, flush=True)
            return
        make_private(descriptor, daemon)
    finally:
        os.close(descriptor)


def make_private(descriptor, daemon):
    """A directory or file of a private tree, open as ``descriptor``:
    the daemon user's (when root), mode 0700 or 0600; a file of another
    user is left alone when not root."""
    info = os.fstat(descriptor)
    if daemon is not None:
        os.fchown(descriptor, daemon.uid, daemon.gid)
    elif info.st_uid != os.geteuid():
        return
    os.fchmod(descriptor, 0o700 if stat.S_ISDIR(info.st_mode) else 0o600)


# -- the state directory, the secrets, the server root


def state_directory(ini):
    """``var/`` beside the ``etc/`` of the ini."""
    return os.path.normpath(os.path.join(os.path.dirname(ini), '..', 'var'))


def prepare_state_directory(path, daemon, inside=()):
    """Make ``var/`` root's (the user's when not root) and private: mode
    0750 with the daemon's group, else 0700; left alone unless something
    of the site (``inside``: the storage, the server root) is in it.  One
    an older serve gave to the daemon user is taken back, and said so."""
    if not any(is_below(other, path) for other in inside):
        return
    os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        refuse_link(path, "the site's state directory")
    except UnsafePathError as error:
        raise SystemExit(str(error)) from None
    if daemon is None:
        os.chmod(path, 0o700)
        return
    if can_change(os.lstat(path), daemon):
        print('%s was open to %s (an older `serve` gave it away): taken '
              'back by root.' % (path, daemon.user), flush=True)
    os.chown(path, 0, daemon.gid, follow_symlinks=False)
    os.chmod(path, 0o750)


def is_below(path, directory):
    """Whether ``path`` is ``directory`` or lies in it."""
    directory = os.path.abspath(directory)
    return os.path.commonpath([os.path.abspath(path), directory]) == \
        directory


def share_secret(path, daemon):
    """A secret file the daemon processes read: root's, readable by the
    daemon's group (0640), so they cannot change what root reads."""
    try:
        refuse_link(path, 'a secret file, shared with %s' % daemon.user)
    except UnsafePathError as error:
        raise SystemExit(str(error)) from None
    if os.lstat(path).st_uid == daemon.uid:
        print('%s belonged to %s: now root\'s, readable by the group %s '
              '(check that it says what you wrote).'
              % (path, daemon.user, daemon.group), flush=True)
    os.chown(path, 0, daemon.gid, follow_symlinks=False)
    os.chmod(path, 0o640)


def prepare_server_root(server_root, daemon, generated):
    """Create the server root, root's, mode 0755.  One the daemon user
    could change (itself, or an entry root reads) is removed and made
    again when ``generated`` (serve's default, all of it written at each
    start), else refused."""
    os.makedirs(os.path.dirname(server_root), exist_ok=True)
    if os.path.lexists(server_root) and changeable_server_root(server_root,
                                                               daemon):
        if not generated:
            raise SystemExit(
                '%s can change the server root %s (or a file in it), '
                'whose apachectl and envvars root runs.  Remove it (or '
                'give it and its files to root) and start again.'
                % (daemon.user, server_root))
        print('The server root %s was open to %s (an older `serve` gave '
              'it away): made again.' % (server_root, daemon.user),
              flush=True)
        remove(server_root)
    os.makedirs(server_root, mode=0o755, exist_ok=True)
    os.chmod(server_root, 0o755)


def changeable_server_root(server_root, daemon):
    """Whether the daemon user can change the server root or one of the
    entries in it that are not its own: its directories, and the sockets
    Apache gives it (nobody reads or runs a socket)."""
    info = os.lstat(server_root)
    if stat.S_ISLNK(info.st_mode) or can_change(info, daemon):
        return True
    for name in os.listdir(server_root):
        entry = os.lstat(os.path.join(server_root, name))
        if name not in DAEMON_ENTRIES and \
                not stat.S_ISSOCK(entry.st_mode) and \
                can_change(entry, daemon):
            return True
    return False


def remove(path):
    """Remove a link or a directory tree (never following links)."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    else:
        shutil.rmtree(path)


# -- what serve does


def prepare_site_files(ini, publisher, daemon, server_root=None,
                       generated_root=False, more=()):
    """Lay out the files of a site about to be served (see the module's
    docstring); ``daemon`` is None when serve is not root."""
    storage = storage_directories(publisher)
    refuse_database_left_above(storage)
    secrets = secret_files(publisher) if daemon is not None else []
    roots = [server_root] if server_root else []
    paths = root_paths(ini, publisher, secrets, roots + list(more))
    if daemon is not None:
        refuse_storage_holding(storage, paths, daemon)
    state = state_directory(ini)
    if state not in storage:
        prepare_state_directory(state, daemon, storage + roots)
    for directory in storage:
        make_private_tree(directory, daemon)
    for path in secrets:
        share_secret(path, daemon)
    if daemon is not None and server_root:
        prepare_server_root(server_root, daemon, generated_root)
    elif server_root:
        os.makedirs(server_root, exist_ok=True)
    if daemon is not None:
        refuse_changeable(paths, daemon)


def check_before_loading(ini, name, daemon):
    """Before root loads the site: the principals file (ZCML root
    executes) and the record of its checked passwords (which root
    believes) must be out of the daemon user's reach."""

    if daemon is None:
        return
    settings = appconfig('config:' + ini, name=name)
    value = (settings.local_conf.get('principals_zcml') or '').strip()
    path = os.path.join(os.path.dirname(ini), value) if value else None
    record = checked_passwords_path(ini, path)
    refuse_changeable([entry for entry in (path, record)
                       if entry and os.path.exists(entry)], daemon)


def drop_privileges(daemon):
    """Become the daemon user for good (after the server bound its
    socket)."""
    os.setgroups(sorted(daemon.groups))
    os.setgid(daemon.gid)
    os.setuid(daemon.uid)


# -- commands that open the database, run by root


def load_database_config_of(config_path):
    """The ``<zodb>`` sections of a ZConfig file."""
    return load_database_config(config_path).database


#: The storages whose writers ``database_paths`` can tell (ZODB's and
#: RelStorage's ZConfig datatypes): their files, their credentials, or
#: nothing (memory); the wrappers are judged by what they wrap.
JUDGED_STORAGES = frozenset((
    'ZODB.config.FileStorage', 'ZODB.config.MappingStorage',
    'ZODB.config.DemoStorage', 'ZODB.config.BlobStorage',
    'relstorage.config.RelStorageFactory'))


def storage_kind(opener):
    return '%s.%s' % (type(opener).__module__, type(opener).__qualname__)


def database_paths(config_path):
    """What decides what the databases of a ZConfig file hold, besides
    root: (the paths their storages write: SQLite data, blobs, caches, a
    file storage's file; the files holding a network database's
    credentials: its MySQL option file, else the ZConfig file itself;
    the kinds of storage whose writers cannot be told, a ZEO client's
    say: anyone who reaches its server)."""
    # late: RelStorage, which the commands' --help does not load
    from zope.pipeline.zodb.mysqltimeouts import is_mysql_adapter
    written, credentials, unjudged = [], [], []
    for section in load_database_config_of(config_path):
        openers = [section.config.storage]
        while openers:
            opener = openers.pop()
            if storage_kind(opener) not in JUDGED_STORAGES:
                unjudged.append(storage_kind(opener))
                continue
            storage = opener.config
            openers.extend(getattr(storage, 'factories', None) or ())
            if getattr(storage, 'base', None) is not None:
                openers.append(storage.base)
            written.extend(directories_of(storage))
            if getattr(storage, 'path', None):
                written.append(os.path.normpath(storage.path))
            adapter = getattr(storage, 'adapter', None)
            if adapter is not None and sqlite_directory(storage) is None:
                mysql = adapter.config if is_mysql_adapter(adapter) else None
                credentials.append(
                    getattr(mysql, 'read_default_file', None) or config_path)
    return written, credentials, unjudged


def daemon_of_uid(uid, gid):
    """The user ``uid``, with the group ``gid`` (a file's owner and
    group), as a Daemon; None when the uid has no user name."""
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return None
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    groups = frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid)) | {gid}
    return Daemon(entry.pw_name, group, uid, gid, groups)


def group_members(gid):
    """The password entries of the users of group ``gid`` (as their
    own group, or as members)."""
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        members = set()
    return [entry for entry in pwd.getpwall()
            if entry.pw_gid == gid or entry.pw_name in members]


def database_users(config_path, default=None):
    """The users besides root who can change what the databases of
    ``config_path`` hold: of the owners (and their groups' users) of
    what the storages write and of the credentials, and ``default``
    (serve's daemon user), those
    that can change one of the paths the storages write (``can_change``
    on the way to it) or read the credentials; ``default`` always where a
    storage's writers cannot be told (a ZEO client), and without
    ``default`` such a storage is refused."""
    written, credentials, unjudged = database_paths(config_path)
    if unjudged and default is None:
        raise SystemExit(
            'Root cannot tell who can change the database of %s (%s): it '
            "will not open it.  Run the command as the site's user."
            % (config_path, ', '.join(unjudged)))
    candidates = {}
    for path in written + credentials:
        if os.path.lexists(path):
            info = os.lstat(path)
            if info.st_uid != 0 and info.st_uid not in candidates:
                candidates[info.st_uid] = daemon_of_uid(info.st_uid,
                                                        info.st_gid)
            if info.st_gid != 0:
                for entry in group_members(info.st_gid):
                    candidates.setdefault(entry.pw_uid, daemon_of_uid(
                        entry.pw_uid, info.st_gid))
    if default is not None and default.uid not in candidates:
        candidates[default.uid] = default
    found = []
    if unjudged:
        # who reaches the server can change it: the daemon user, surely
        found.append(default)
        del candidates[default.uid]
    for uid, daemon in sorted(candidates.items()):
        if daemon is None:
            raise SystemExit(
                'The uid %d, which has no user name, owns files of the '
                'database of %s; root will not open it.' % (uid,
                                                            config_path))
        if any(first_changeable(path, daemon) is not None
               for path in written) or \
                any(os.path.exists(path) and
                    first_blocked(os.path.abspath(path), daemon.uid,
                                  daemon.groups) is None
                    for path in credentials):
            found.append(daemon)
    return found


def become_database_user(ini, name='main', reads=()):
    """What a command that opens (or may open) the site's database calls
    before it loads the site.  Run by root, when another user can change
    what the database holds (the daemon user of ``serve``, www-data by
    default, or the owner of the storage's files), unpickling it as root
    would run that user's code as root: become that user for good
    (``drop_privileges``), once it is known to be able to read the ini,
    the ZConfig file, the Python environment and ``reads``; else refuse,
    saying how to run the command as that user.  Returns the Daemon
    become, or None (not root, or nobody else can change the
    database)."""

    if os.geteuid() != 0 or not os.path.exists(ini):
        return None
    ini = os.path.abspath(ini)
    settings = appconfig('config:' + ini, name=name)
    config_path = settings.get('open_root.zodb_config')
    if not config_path or not os.path.isfile(config_path):
        return None  # in memory (or an error the loading names)
    try:
        entry = pwd.getpwnam(DEFAULT_USER)
    except KeyError:
        default = None
    else:
        default = daemon_of_uid(entry.pw_uid, entry.pw_gid)
    users = database_users(config_path, default)
    if not users:
        return None
    command = 'runuser -u %s -- zope-pipeline %s' % (
        users[0].user if len(users) == 1 else 'USER',
        shlex.join(sys.argv[1:]) or '...')
    if len(users) > 1:
        raise SystemExit(
            '%s can all change the database of %s, and root will not open '
            'what another user can change.  Run the command as the '
            "site's user, e.g.: %s"
            % (', '.join(user.user for user in users), ini, command))
    daemon = users[0]
    # Root has read the ini and the ZConfig file; as serve, it refuses
    # what the daemon user could have changed.
    refuse_changeable([ini, config_path], daemon)
    principals = (settings.local_conf.get('principals_zcml') or '').strip()
    needed = [ini, config_path, sys.prefix, sys.executable,
              os.path.dirname(zope.pipeline.__file__)] + list(reads)
    if principals:
        needed.append(os.path.join(os.path.dirname(ini), principals))
    for path in needed:
        if not os.path.exists(path):
            continue
        blocked = first_blocked(os.path.abspath(path), daemon.uid,
                                daemon.groups)
        if blocked is not None:
            raise SystemExit(
                '%s can change the database of %s, so root opens it as %s '
                'only; but %s cannot read %s (%s is closed to it).  Open '
                'it to %s, or run the command as that user: %s'
                % (daemon.user, ini, daemon.user, daemon.user, path,
                   blocked, daemon.user, command))
    # What the storages write is the daemon user's, as serve leaves it
    # (a RelStorage cache in root's var/ could not be written).
    for section in load_database_config_of(config_path):
        for directory in directories_of(section.config.storage.config):
            make_private_tree(directory, daemon)
    os.umask(PRIVATE_UMASK)
    drop_privileges(daemon)
    print('zope-pipeline: running as %s, who can change the database '
          '(root never opens it).' % daemon.user, file=sys.stderr,
          flush=True)
    return daemon
