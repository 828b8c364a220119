"""The write path: the comments form POSTed at ``-c 8``.

Every POST writes a comment in one transaction; concurrent ones sometimes
conflict, and the retry stage runs them again (it logs a 'Retrying' INFO
line each time, which the server-side log counts).  The form answers with
a redirect, so a verified run has as many 3xx responses as requests.
"""

from benchmarks import serverside
from benchmarks.loadgen import Post
from benchmarks.loadgen import measure
from benchmarks.loadgen import warm_up

RETRY_MARKER = 'Retrying'
GIVE_UP_MARKER = 'Giving up'


def post_body_file(workspace, form):
    return workspace.write('comment-post.txt', form.body().decode('ascii'))


def measure_writes(server, form, load, repeats, warmup, body_file, log):
    """Runs of POSTs with the retries the server logged during them."""
    post = Post(body_file)
    warm_up(server, form.path, warmup, load.concurrency, post)
    before = serverside.count_log_lines(server.log_dir, RETRY_MARKER)
    given_up = serverside.count_log_lines(server.log_dir, GIVE_UP_MARKER)
    runs, summary = measure(server, form.path, load, repeats, 0, post,
                            redirects_expected=form.redirects, log=log)
    retries = serverside.count_log_lines(server.log_dir, RETRY_MARKER)
    completed = sum(run.result.complete for run in runs if run.result)
    return runs, summary, {
        'retries': retries - before,
        'given_up': serverside.count_log_lines(
            server.log_dir, GIVE_UP_MARKER) - given_up,
        'completed': completed,
    }


def retries_per_thousand(retries, completed):
    return retries * 1000.0 / completed if completed else None
