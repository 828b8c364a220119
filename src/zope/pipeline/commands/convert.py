"""Copy every object and blob of one storage into another, as RelStorage's
zodbconvert does, from the same configuration file: a ZConfig file with a
<source> storage section and a <destination> one (e.g. a site's
<relstorage> on SQLite and one on MySQL; docs/deployment.md shows the
file that moves a created project from etc/zodb-sqlite.conf to
etc/zodb-mysql.conf).  It is zodbconvert itself, run after zope.pipeline's
fixes for RelStorage (zope.pipeline.zodb.compat): without them RelStorage
speaks MySQL 8's SQL to MariaDB, which refuses the copy (error 1064).
Records are copied without being loaded, so nothing is unpickled.
Blobs are copied when both storages have a blob-dir (with shared-blob-dir
false a RelStorage keeps them in its database).  --clear empties the
destination first (a database that zope-pipeline init-db made holds a
root already); without --clear or --incremental a destination holding data
is refused.  Stop the site that writes the source first: what it commits
after the copy is not copied."""

from zope.pipeline.zodb import compat

NAME = 'convert'
HELP = "copy a storage into another (RelStorage's zodbconvert, MariaDB " \
       "fixed)"

#: zodbconvert's options, passed on as given.
FLAGS = (
    ('--clear', 'empty the destination (a RelStorage) before copying'),
    ('--incremental', 'resume: copy the transactions after the '
                      "destination's last one"),
    ('--dry-run', 'open both storages and say what would be copied'),
)


def add_arguments(parser):
    parser.add_argument('config', help='ZConfig file with <source> and '
                        '<destination> storage sections, e.g. '
                        'etc/zodbconvert.conf')
    for flag, text in FLAGS:
        parser.add_argument(flag, action='store_true', help=text)


def run(args):
    from relstorage import zodbconvert  # late: --help (RelStorage)
    compat.apply()
    argv = ['zodbconvert', args.config]
    argv += [flag for flag, _text in FLAGS
             if getattr(args, flag[2:].replace('-', '_'))]
    zodbconvert.main(argv)
    return 0
