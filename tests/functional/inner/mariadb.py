"""A scratch database on the local MariaDB, for the tests that need one."""

import contextlib
import uuid

from . import MARIADB_SOCKET


def connect(**options):
    import MySQLdb
    return MySQLdb.connect(user='root', unix_socket=MARIADB_SOCKET,
                           connect_timeout=5, **options)


def available():
    """Whether MySQLdb is installed and MariaDB accepts root here."""
    try:
        connection = connect()
    except Exception:  # any failure means "not here"
        return False
    connection.close()
    return True


@contextlib.contextmanager
def scratch_database():
    """Create ``zp_test_<random>``; yield its name; drop it afterwards."""
    name = 'zp_test_%s' % uuid.uuid4().hex[:12]
    connection = connect()
    try:
        connection.cursor().execute('CREATE DATABASE %s' % name)
        try:
            yield name
        finally:
            connection.cursor().execute('DROP DATABASE IF EXISTS %s' % name)
    finally:
        connection.close()
