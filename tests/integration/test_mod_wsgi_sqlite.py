"""mod_wsgi in daemon mode with several processes, on RelStorage/SQLite:
every process serves the site, the first start creates exactly one root,
concurrent writes from several processes all count, the databases are
closed at shutdown, and restarts lose no request."""

import concurrent.futures
import os
import re
import time

import pytest

from zope.pipeline.serving.modwsgi_express import run_directory

from tests.integration import support

pytestmark = pytest.mark.integration


@pytest.fixture
def site():
    support.need_mod_wsgi()
    with support.sqlite_site() as site:
        yield site


def pids_serving(port, wanted=2, workers=4, timeout=30):
    """GET the page concurrently, in batches, until ``wanted`` processes
    answered or ``timeout`` seconds passed; return {pid: count} and the
    statuses.  (A daemon still loading its site answers nothing: on a fast
    machine the first one up served 200 requests before the second was.)"""
    seen, statuses = {}, []
    deadline = time.monotonic() + timeout

    def get(_):
        status, headers, body = support.request(port, support.PAGE)
        return status, headers.get('X-Pipeline-Pid'), body

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        while len(seen) < wanted and time.monotonic() < deadline:
            for status, pid, body in pool.map(get, range(workers * 5)):
                statuses.append(status)
                assert len(support.item_titles(body)) == 10, body[:500]
                seen[pid] = seen.get(pid, 0) + 1
    return seen, statuses


def test_two_daemon_processes_both_serve_the_page_from_one_new_root(site):
    server = support.ModWsgiServer(site, processes=2, threads=1)
    with support.running(server):
        seen, statuses = pids_serving(server.port)
        assert set(statuses) == {200}
        assert len(seen) == 2, seen
        assert None not in seen
    log = server.log()
    # Both processes opened the new database at their start, at once:
    # exactly one created the root application.
    assert log.count('Created the root application') == 1, log
    # Each process closed its database at shutdown (mod_wsgi's hook).
    closed = set(re.findall(r'Closed the database of process (\d+)', log))
    assert set(seen) <= closed, log


def compiled_templates(server):
    """{name: inode} of the compiled templates in the server's run
    directory (``templates-<uid>``, made by the daemons' user)."""
    run = run_directory(server.server_root)
    found = {}
    for entry in os.listdir(run):
        if entry.startswith('templates-'):
            directory = os.path.join(run, entry)
            assert os.stat(directory).st_mode & 0o077 == 0, directory
            found.update((name, os.stat(os.path.join(directory, name)).st_ino)
                         for name in os.listdir(directory)
                         if name.endswith('.py'))
    return found


def test_daemons_started_later_load_the_templates_compiled_before(site):
    server = support.ModWsgiServer(site, processes=2, threads=1)
    with support.running(server):
        seen, statuses = pids_serving(server.port)
        assert set(statuses) == {200} and len(seen) == 2, seen
    compiled = compiled_templates(server)
    assert len(compiled) == 1, compiled  # the page's template
    with support.running(server):
        again, statuses = pids_serving(server.port)
        assert set(statuses) == {200} and len(again) == 2, again
        assert not set(again) & set(seen)  # new processes
    # loaded by the new processes, not compiled and written again
    assert compiled_templates(server) == compiled


def test_concurrent_increments_from_two_processes_all_count(tmp_path):
    """Every increment writes the same object: the conflicts between the
    processes' threads are retried (retry.attempts = 10 here: 8 clients
    on one object can exhaust the 4 of deploy.ini) and none is lost."""
    support.need_mod_wsgi()
    support.need_ab()
    empty = tmp_path / 'empty'
    empty.write_bytes(b'')
    with support.sqlite_site({'retry.attempts': 10}) as site:
        server = support.ModWsgiServer(site, processes=2, threads=2)
        with support.running(server):
            url = 'http://127.0.0.1:%d/counter/@@increment' % server.port
            figures = support.ab(url, 200, 8, post_file=str(empty))
            status, headers, body = support.request(server.port, '/counter')
        retried = server.log().count('Retrying POST /counter/@@increment')
    assert figures['complete'] == 200, figures['text']
    assert figures['failed'] == figures['length_differs'], figures['text']
    assert figures['non_2xx'] == 0, figures['text']
    assert body == '200'
    assert retried > 0


def restart_under_load(server, restart, requests=2000, concurrency=8):
    """Run ab against the page; restart once it is under way."""
    url = 'http://127.0.0.1:%d%s' % (server.port, support.PAGE)
    before = pids_serving(server.port)[0]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        load = pool.submit(support.ab, url, requests, concurrency)
        time.sleep(1.5)
        restart()
        figures = load.result(timeout=180)
    after = pids_serving(server.port)[0]
    return figures, before, after


def test_touching_the_wsgi_script_restarts_daemons_losing_no_request(
        site):
    support.need_ab()
    server = support.ModWsgiServer(site, processes=2, threads=2)
    with support.running(server):
        figures, before, after = restart_under_load(
            server, lambda: os.utime(server.script))
        # One at a time, each after its successor loaded the site.
        after = support.replaced_pids(server.port, before)
    assert figures['complete'] == 2000, figures['text']
    assert figures['failed'] == 0, figures['text']
    assert figures['non_2xx'] == 0, figures['text']
    assert not set(before) & set(after), (before, after)


def hammer(port, seconds, clients=8):
    """GET the page from ``clients`` threads for ``seconds``; return
    (status, whether the application answered: it names its process) of
    every request, or ('error: ...', False) when no response came."""
    stop = time.monotonic() + seconds

    def loop():
        answers = []
        while time.monotonic() < stop:
            try:
                status, headers, body = support.request(port, support.PAGE)
            except OSError as error:
                answers.append(('error: %r' % error, False))
                continue
            answers.append((status, 'X-Pipeline-Pid' in headers))
        return answers

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(loop) for _ in range(clients)]
        return [answer for future in futures
                for answer in future.result(timeout=seconds + 60)]


def test_apache_graceful_restart_under_load_keeps_accepting_connections(
        site):
    """apachectl graceful stops every daemon process at once: a few
    requests (those queued at a stopping daemon, or connecting to its
    removed socket) may get Apache's 502 or 503 - never a refused
    connection nor an error of the application; touching the WSGI script
    (above) loses none.  The figures are measured by
    test_restart_under_load.py (docs/reliability.md)."""
    server = support.ModWsgiServer(site, processes=2, threads=2)
    with support.running(server):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            load = pool.submit(hammer, server.port, 5)
            time.sleep(1.5)
            server.apachectl('graceful')
            answers = load.result(timeout=120)
        after = support.request(server.port, support.PAGE)
    from_application = {status for status, app in answers if app}
    from_apache = {status for status, app in answers if not app}
    assert from_application == {200}, answers
    assert from_apache <= {502, 503}, from_apache
    apache_errors = [status for status, app in answers if not app]
    assert len(apache_errors) < len(answers) / 20, apache_errors
    assert after[0] == 200


def touch_script(server):
    os.utime(server.script)
    # A daemon process notices the change on its next request.
    return support.request(server.port, support.PAGE)


@pytest.mark.parametrize('restart', ['graceful', 'touch'])
def test_a_request_in_flight_during_a_restart_completes(restart):
    """apachectl graceful gives a daemon process 3 seconds and the
    database waits for the connections in use before it closes; a daemon
    reload (the WSGI script touched) waits for the requests in flight."""
    support.need_mod_wsgi()
    with support.sqlite_site(site_zcml=support.SLOW_SITE_ZCML) as site:
        server = support.ModWsgiServer(site, processes=2, threads=2)
        with support.running(server):
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                in_flight = pool.submit(support.request, server.port,
                                        '/@@slow?seconds=2')
                time.sleep(0.5)
                if restart == 'graceful':
                    server.apachectl('graceful')
                else:
                    pool.submit(touch_script, server).result(timeout=60)
                status, headers, body = in_flight.result(timeout=60)
            server.wait_until_serving(60)
        log = server.log()
    assert (status, body) == (200, 'slept 2'), log
    assert 'Traceback' not in log


def test_reload_restarts_the_daemon_when_a_loaded_module_changes():
    """`serve --mod-wsgi --reload`: mod_wsgi-express watches the modules a
    daemon process imported and restarts it when one changes."""
    support.need_mod_wsgi()
    from tests.integration import slow
    with support.sqlite_site(site_zcml=support.SLOW_SITE_ZCML) as site:
        server = support.ModWsgiServer(site, processes=1, threads=2,
                                       reload=True)
        with support.running(server):
            before = support.request(server.port, support.PAGE)[1]
            deadline = time.monotonic() + 30
            after = before
            while after['X-Pipeline-Pid'] == before['X-Pipeline-Pid'] and \
                    time.monotonic() < deadline:
                # Touched again each time: the reloader's first scan may
                # come after a touch and take its time as the baseline.
                os.utime(slow.__file__)
                time.sleep(1)
                try:
                    after = support.request(server.port, support.PAGE)[1]
                except OSError:
                    continue
    assert after['X-Pipeline-Pid'] != before['X-Pipeline-Pid']
