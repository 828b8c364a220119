"""Check the database an ini's storage configuration names
(open_root.zodb_config): load every object reachable from the root,
in one snapshot, and report references to objects that do not exist,
objects whose class cannot be imported here, and records that cannot be
read.  Read-only (the storage is opened read-only), safe while the site
serves; the read and write timeouts of a <mysql-with-timeouts>
section are off (counting the stored objects is one long statement on a
large database).  Prints, per database, the objects reached and stored (the
difference is what the next pack removes); exits 1 when it found a
problem."""

import os

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.serving.layout import become_database_user

NAME = 'check'
HELP = "check the ini's database (online, read-only): every object " \
       "reachable from the root loads"


def add_arguments(parser):
    add_ini_arguments(parser, 'etc/deploy-mysql.ini')


def run(args):
    # late: --help (the ZODB)
    from zope.pipeline.zodb.maintenance import check
    from zope.pipeline.zodb.maintenance import opened_storages
    from zope.pipeline.zodb.maintenance import zodb_config_path
    config_path = zodb_config_path(os.path.abspath(args.ini), args.name)
    become_database_user(os.path.abspath(args.ini), args.name)
    problems = 0
    with opened_storages(config_path, read_only=True) as storages:
        for name, storage in storages:
            report = check(storage)
            problems += print_report(name, config_path, report)
    return 1 if problems else 0


#: Each kind of problem: the report's field, and what its items are.
PROBLEMS = (
    ('dangling', 'reference to a missing object: %s (from %s)'),
    ('missing_classes', 'class not importable: object %s is a %s'),
    ('unreadable', 'unreadable record: object %s: %s'),
)


def print_report(name, config_path, report):
    """Print what a check found; return how many problems."""
    from zope.pipeline.zodb.maintenance import LISTED  # late: --help
    problems = 0
    for field, text in PROBLEMS:
        items = getattr(report, field)
        problems += len(items)
        for item in items[:LISTED]:
            print('  ' + text % item)
        if len(items) > LISTED:
            print('  ... and %d more' % (len(items) - LISTED))
    print('Database %s (%s): %d objects reachable from the root, %d stored '
          '(%d unreachable, removed by a pack); %d dangling references, '
          '%d objects of missing classes, %d unreadable records: %s.'
          % (name, config_path, report.reachable, report.stored,
             max(report.stored - report.reachable, 0), len(report.dangling),
             len(report.missing_classes), len(report.unreadable),
             'PROBLEMS' if problems else 'OK'))
    return problems
