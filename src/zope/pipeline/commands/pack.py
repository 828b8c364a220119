"""Pack the database an ini's storage configuration names
(open_root.zodb_config), keeping --days days of history: objects
no longer reachable from the root, and (history-preserving storages) the
older revisions, are removed.  Safe while the site serves: RelStorage
packs beside the processes that commit, taking its commit lock only in
short batches, and never runs two packs at once.  The read and write
timeouts of a <mysql-with-timeouts> section are off for the pack,
whose statements run longer than a request's.  Prints, per database, the
objects before and after and how long it took."""

import os

from zope.pipeline.commands import add_ini_arguments
from zope.pipeline.serving.layout import become_database_user

NAME = 'pack'
HELP = "pack the ini's database (online), keeping --days of history"


def add_arguments(parser):
    add_ini_arguments(parser, 'etc/deploy-mysql.ini')
    parser.add_argument('--days', type=non_negative, default=0,
                        metavar='N', help='days of history to keep '
                        '(default 0: only current revisions; a '
                        'history-free storage keeps none anyway)')


def non_negative(text):
    days = float(text)
    if days < 0:
        raise ValueError(text)
    return days


def run(args):
    # late: --help (the ZODB)
    from zope.pipeline.zodb.maintenance import opened_storages
    from zope.pipeline.zodb.maintenance import pack
    from zope.pipeline.zodb.maintenance import zodb_config_path
    config_path = zodb_config_path(os.path.abspath(args.ini), args.name)
    become_database_user(os.path.abspath(args.ini), args.name)
    with opened_storages(config_path) as storages:
        for name, storage in storages:
            before, after, took = pack(storage, args.days)
            print('Packed database %s (%s), keeping %g days of history: '
                  '%d objects before, %d after, in %.1f s.'
                  % (name, config_path, args.days, before, after, took))
    return 0
