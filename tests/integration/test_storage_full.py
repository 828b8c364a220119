"""A full database storage (issue 32, item 4).

A private MariaDB whose data directory is a tmpfs of 64 MB, mounted for
it (root only): once a file written beside its tables has taken the rest
of the file system, InnoDB cannot extend the tables' files and refuses
new rows with MySQL error 1114 ('The table ... is full'), as on a full
disk.  The site is served by mod_wsgi (2 processes x 2 threads).  (A
system tablespace with a maximum size fills too, but MariaDB 10.11 then
aborts on a rollback it has no room for: 'Error (Out of disk space) in
rollback'.)

It proves that while the storage is full:

- a write is answered with one 503 that says the storage is full, with
  Retry-After, at its first attempt (never retried: the retry stage logs
  nothing, and the error is not a conflict);
- each such request logs one line (zope.pipeline's, at ERROR), and nothing
  at CRITICAL;
- reads are still served;

and that once space is freed (the file removed) writes are acknowledged
again, every acknowledged comment stored exactly once and no refused one.
"""

import os
import re
import time
import urllib.parse

import pytest

from zope.pipeline.sample import COMMENTS_FORM
from zope.pipeline.sample.content import MAX_TEXT

from tests.conftest import need
from tests.integration import reliability_report
from tests.integration import support
from tests.integration.private_mariadb import PrivateMariaDB
from tests.integration.private_mariadb import can_mount_tmpfs
from tests.integration.private_mariadb import need_private_mariadb

pytestmark = pytest.mark.integration

#: The size of the tmpfs holding the private server's data directory.
DATADIR_SIZE = '64m'
#: Writes made while the storage is full.
FULL_WRITES = 10


def post_comment(port, text):
    path, fields = COMMENTS_FORM
    body = urllib.parse.urlencode({'author': dict(fields)['author'],
                                   'text': text})
    return support.request(
        port, path, 'POST', body.encode('ascii'),
        headers={'Content-Type': 'application/x-www-form-urlencoded'})


def write_until_refused(port, most=5000):
    """POST long comments until one is refused (503); return them
    {text: status}."""
    written = {}
    for number in range(most):
        text = ('fill %d ' % number).ljust(MAX_TEXT, 'x')
        status = post_comment(port, text)[0]
        written[text] = status
        if status != 303:
            return written
    raise AssertionError('%d comments of %d characters were stored on a '
                         'full disk' % (most, MAX_TEXT))


def log_lines(log, marker):
    """The lines of the server's log after the line holding ``marker``."""
    return log[log.index(marker):].splitlines()[1:]


def test_full_storage_is_one_503_and_one_log_line_per_write_no_retry():
    support.need_mod_wsgi()
    need_private_mariadb()
    need(can_mount_tmpfs(), 'a tmpfs for the data directory needs root')
    with PrivateMariaDB(datadir_size=DATADIR_SIZE) as mariadb, \
            support.scratch_directory() as directory:
        database = {'db': 'zp_full', 'password': 'full-secret'}
        mariadb.create_database(database['db'], database['password'])
        site = support.mysql_site(directory, database, port=mariadb.port)
        server = support.ModWsgiServer(site, processes=2, threads=2)
        with support.running(server):
            assert post_comment(server.port, 'before')[0] == 303
            filler = mariadb.fill_datadir()
            # the tables' files have some room left: write long comments
            # until the first is refused
            filled = write_until_refused(server.port)
            marker = 'storage full from here %d' % time.time()
            with open(server.log_path, 'a') as log:
                log.write(marker + '\n')
            full = [post_comment(server.port, 'full %d' % number)
                    for number in range(FULL_WRITES)]
            reads = [support.request(server.port, support.PAGE)
                     for _ in range(5)]
            time.sleep(1)   # the log lines of the last request
            during = log_lines(server.log(), marker)
            os.remove(filler)
            after = [post_comment(server.port, 'after %d' % number)
                     for number in range(3)]
        stored, count = support.stored_comments(site.zconfig)

    acknowledged = ['before'] + [text for text, status in filled.items()
                                 if status == 303]
    acknowledged += ['after %d' % number for number, (status, _, _)
                     in enumerate(after) if status == 303]
    refused = {text for text, status in filled.items() if status != 303}
    refused |= {'full %d' % number for number in range(FULL_WRITES)}
    statuses = [status for status, headers, body in full]
    full_pages = [body for status, headers, body in full
                  if 'storage is full' in body]
    retry_afters = {headers.get('Retry-After') for status, headers, body
                    in full}
    logged_full = [line for line in during
                   if re.search(r'ERROR \[zope\.pipeline\.error\] pid \d+: '
                                r'POST /folder/page/@@add-comment: the '
                                r'database storage is full \(.*1114.*\); '
                                r'answered 503$', line)]
    retried = [line for line in during if 'Retrying' in line or
               'Giving up' in line]
    critical = [line for line in during if 'CRITICAL' in line]
    reliability_report.record(
        'Full disk (private MariaDB on a 64 MB tmpfs filled up, MySQL error '
        '1114; mod_wsgi 2x2)',
        {'writes while full': len(full),
         'answered 503 saying the storage is full': len(full_pages),
         'log lines while full': len(during),
         'attempts retried': len(retried),
         'CRITICAL lines': len(critical),
         'reads while full answered 200': sum(
             1 for status, headers, body in reads if status == 200),
         'writes acknowledged once space was freed': sum(
             1 for status, headers, body in after if status == 303),
         'long comments stored before the disk was full': len(
             acknowledged) - 4,
         'acknowledged comments lost': len(set(acknowledged) - set(stored)),
         'refused comments stored': len(refused & set(stored))},
        'one 503 and one log line per write, no retry'
        if statuses == [503] * FULL_WRITES and
        len(during) == FULL_WRITES else 'FAILED')

    assert statuses == [503] * FULL_WRITES, [body[:300] for body in
                                             (b for s, h, b in full)]
    assert len(full_pages) == FULL_WRITES
    assert retry_afters == {'1'}
    assert retried == [] and critical == [], during
    assert len(logged_full) == FULL_WRITES, during
    assert len(during) == FULL_WRITES, during
    assert [status for status, headers, body in reads] == [200] * 5
    assert [status for status, headers, body in after] == [303] * 3
    assert list(filled.values())[-1] == 503
    assert sorted(stored) == sorted(acknowledged)
    assert count == len(acknowledged)
