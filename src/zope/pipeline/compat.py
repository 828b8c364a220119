"""A compatibility fix: RelStorage's MySQL dialect on MariaDB.

RelStorage 4.3 parses the server version "10.11.19-MariaDB" as
(10, 11, 19), so it believes it talks to MySQL >= 8.0.19 and emits
MySQL-8-only SQL (``INSERT ... AS excluded ON DUPLICATE KEY UPDATE``,
``SELECT ... FOR SHARE NOWAIT``): the first commit fails with error 1064.
MariaDB speaks the MySQL 5.7 dialect (and still has ``@@tx_isolation``), so
``apply()`` makes RelStorage's version detector report MySQL 5.7.19 for a
MariaDB server.  It is idempotent and runs before any MySQL storage opens
(``zope.pipeline.storage.open_database``).

Upstream: report to zodb/relstorage as "MariaDB 10.x is detected as MySQL
>= 8.0.19 by MySQLVersionDetector._setup"; the fix there is to check for
'MariaDB' in ``SELECT version()`` before comparing version tuples.
"""

#: The MySQL version whose SQL dialect MariaDB understands.
MARIADB_DIALECT = (5, 7, 19)


def is_mariadb(version_string):
    return 'mariadb' in (version_string or '').lower()


def apply():
    """Patch RelStorage's MySQL version detector; return True if patched."""
    try:
        from relstorage.adapters.mysql.schema import MySQLVersionDetector
    except ImportError:  # pragma: no cover - RelStorage is a dependency
        return False
    return patch_detector(MySQLVersionDetector)


def patch_detector(detector_class):
    if getattr(detector_class, '_zope_pipeline_mariadb', False):
        return False
    original_setup = detector_class._setup

    def _setup(self, cursor):
        original_setup(self, cursor)
        if is_mariadb(self._version) and \
                self._version_info > MARIADB_DIALECT:
            self._version_info = MARIADB_DIALECT
            self._major_version = MARIADB_DIALECT[0]

    detector_class._setup = _setup
    detector_class._zope_pipeline_mariadb = True
    return True
