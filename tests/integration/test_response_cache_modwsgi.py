"""The response cache under mod_wsgi, two daemon processes on one
database (RelStorage on SQLite; on MariaDB too when a server is there): a
commit made through one process is seen by the other's next read, which
renders the page again (never the stored, stale one), and later reads of
the unchanged page are hits in each process.

Requests go to one port; which daemon process answered is in the debug
headers (``X-Pipeline-Pid``), and whether it was a hit in ``Age`` (only
stored pages carry it).  After each comment, acknowledged by one
process, every process's first answer of the page must show it and be
rendered, its next answer a hit that shows it.  With one thread per
process and eight readers at once, requests wait in mod_wsgi's queue and
may share a poll that began after Apache received them: no answer may
miss a comment acknowledged before its request was sent.
"""

import re
import threading
import time

import pytest

from tests.integration import support

pytestmark = pytest.mark.integration

PAGE = support.PAGE
ADD_COMMENT = PAGE + '/@@add-comment'
FORM_HEADERS = {'Content-Type': 'application/x-www-form-urlencoded'}
COUNT_RE = re.compile(r'Comments \((\d+)\)')
SETTINGS = {'response_cache.enabled': 'true'}
#: Comments posted, each through whichever process takes the POST.
ROUNDS = 6
#: Seconds the reads of one round may take to reach both processes.
ROUND_SECONDS = 30


@pytest.fixture(params=['sqlite', 'mariadb'])
def site(request):
    support.need_mod_wsgi()
    if request.param == 'sqlite':
        with support.sqlite_site(SETTINGS) as site:
            yield site
    else:
        with support.initialized_mysql_site(SETTINGS) as site:
            yield site


def read(port):
    """(pid, hit, comment count, body) of one GET of the page."""
    status, headers, body = support.request(port, PAGE)
    assert status == 200, body[:500]
    count = COUNT_RE.search(body)
    assert count, body[:500]
    return (headers['X-Pipeline-Pid'], 'Age' in headers,
            int(count.group(1)), body)


def comment(port, text):
    """Post a comment; return the pid of the process that committed it."""
    status, headers, body = support.request(
        port, ADD_COMMENT, 'POST', 'author=it&text=' + text,
        headers=FORM_HEADERS)
    assert status == 303, body[:500]
    return headers['X-Pipeline-Pid']


def answers_of_each(port, pids, wanted=2):
    """GET the page until each of ``pids`` answered ``wanted`` times;
    return {pid: [(hit, count, body), ...]} in the order answered."""
    answers = {pid: [] for pid in pids}
    deadline = time.monotonic() + ROUND_SECONDS
    while any(len(seen) < wanted for seen in answers.values()):
        assert time.monotonic() < deadline, answers
        pid, hit, count, body = read(port)
        answers[pid].append((hit, count, body))
    return answers


def test_a_commit_through_one_process_is_rendered_by_the_other(site):
    server = support.ModWsgiServer(site, processes=2, threads=2)
    with support.running(server):
        pids = support.daemon_pids(server.port)
        assert len(pids) == 2, pids
        # each process learns the page, stores it, then hits
        warm = answers_of_each(server.port, pids, wanted=3)
        assert all(seen[-1][0] for seen in warm.values()), warm
        count = warm[next(iter(pids))][-1][1]
        for number in range(ROUNDS):
            text = 'fresh-%d' % number
            comment(server.port, text)
            count += 1
            for pid, seen in answers_of_each(server.port, pids).items():
                (first_hit, first_count, first_body), \
                    (second_hit, second_count, second_body) = seen[:2]
                # no stale page: the first read after the commit renders
                assert not first_hit, (pid, number)
                assert first_count == count and text in first_body
                # and the one after it is served from the cache
                assert second_hit, (pid, number)
                assert second_count == count and text in second_body
                for hit, later_count, _body in seen[2:]:
                    assert hit and later_count == count


#: Readers at once against two daemon processes of one thread each: the
#: requests wait in mod_wsgi's queue, and share the poll of the request
#: before them when it began after Apache received them.
READERS = 8


def test_no_read_misses_a_comment_acknowledged_before_it_was_sent(site):
    server = support.ModWsgiServer(site, processes=2, threads=1)
    with support.running(server):
        port = server.port
        # both processes hold the page before the comments begin
        answers_of_each(port, support.daemon_pids(port), wanted=3)
        first = read(port)[2]
        acknowledged = []       # (monotonic instant, comments by then)
        answers = []            # (monotonic instant sent, count, hit)
        errors = []
        stop = threading.Event()

        def reader():
            while not stop.is_set():
                sent = time.monotonic()
                try:
                    _pid, hit, count, _body = read(port)
                except Exception as error:     # reported below
                    errors.append(error)
                    return
                answers.append((sent, count, hit))
        readers = [threading.Thread(target=reader) for _ in range(READERS)]
        for thread in readers:
            thread.start()
        try:
            for number in range(ROUNDS):
                time.sleep(0.3)
                comment(port, 'queued-%d' % number)
                acknowledged.append((time.monotonic(), first + number + 1))
            time.sleep(0.3)
        finally:
            stop.set()
            for thread in readers:
                thread.join()
    assert not errors, errors
    for sent, count, _hit in answers:
        known = [count_then for instant, count_then in acknowledged
                 if instant < sent]
        assert count >= (known[-1] if known else first), (sent, count)
    # the readers were answered from the cache, and saw every comment
    assert sum(hit for _sent, _count, hit in answers) > len(answers) / 2
    assert max(count for _sent, count, _hit in answers) == first + ROUNDS
