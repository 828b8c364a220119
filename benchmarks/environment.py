"""The machine and the software a benchmark ran on, for RESULTS.md."""

import importlib.metadata
import os
import platform
import re
import subprocess
import sys

from benchmarks.servers import MOD_WSGI_EXPRESS

DISTRIBUTIONS = ('zope.pipeline', 'ZODB', 'RelStorage', 'zope.publisher',
                 'zope.security', 'waitress', 'mod_wsgi', 'mysqlclient',
                 'PasteDeploy', 'matplotlib', 'pyramid', 'Zope', 'Chameleon')


def first_line(command):
    """The first line a command prints, or None if it cannot run."""
    try:
        completed = subprocess.run(command, capture_output=True, text=True,
                                   timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (completed.stdout or completed.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def version_in(line, pattern):
    """The version ``pattern`` finds in a command's first line."""
    match = re.search(pattern, line or '')
    return match.group(1) if match else line


def cpu_model(path='/proc/cpuinfo'):
    with open(path) as cpuinfo:
        for line in cpuinfo:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return platform.processor() or 'unknown'


def memory_gib(path='/proc/meminfo'):
    with open(path) as meminfo:
        for line in meminfo:
            if line.startswith('MemTotal:'):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def operating_system(path='/etc/os-release'):
    try:
        with open(path) as release:
            for line in release:
                if line.startswith('PRETTY_NAME='):
                    return line.split('=', 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def machine():
    return {'cpus': os.cpu_count(), 'cpu_model': cpu_model(),
            'memory_gib': memory_gib(), 'os': operating_system(),
            'kernel': platform.release()}


def distribution_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def mariadb_version():
    try:
        import MySQLdb
    except ImportError:
        return None
    from benchmarks.storages import MYSQL_ADMIN
    try:
        connection = MySQLdb.connect(**MYSQL_ADMIN)
    except MySQLdb.Error:
        return None
    try:
        cursor = connection.cursor()
        cursor.execute('SELECT VERSION()')
        return cursor.fetchone()[0]
    finally:
        connection.close()


def versions():
    found = {'python': sys.version.split()[0]}
    for name in DISTRIBUTIONS:
        found[name] = distribution_version(name)
    found['apache'] = version_in(first_line(['apache2', '-v']) or first_line(
        ['/usr/sbin/apache2', '-v']), r'Apache/(\S+)')
    found['ab'] = version_in(first_line(['ab', '-V']), r'Version (\S+)')
    found['mariadb'] = mariadb_version()
    found['mod_wsgi-express'] = MOD_WSGI_EXPRESS
    return found
