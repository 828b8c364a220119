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
#: A POST whose last attempt conflicted is answered 503 and logged by the
#: retry stage ('Giving up on ...', when the error reaches it) or by
#: handle_error ('... failed on attempt 4: ...; answered 503', when the
#: error page is made there).
GIVE_UP_MARKERS = ('Giving up', 'failed on attempt')


def post_body_file(workspace, form):
    return workspace.write('comment-post.txt', form.body().decode('ascii'))


def measure_writes(server, form, load, repeats, warmup, body_file, log):
    """Runs of POSTs with the retries the server logged during them."""
    post = Post(body_file)
    warm_up(server, form.path, warmup, load.concurrency, post)
    before = serverside.count_log_lines(server.log_dir, RETRY_MARKER)
    given_up = count_given_up(server.log_dir)
    runs, summary = measure(server, form.path, load, repeats, 0, post,
                            redirects_expected=form.redirects, log=log)
    retries = serverside.count_log_lines(server.log_dir, RETRY_MARKER)
    completed = sum(run.result.complete for run in runs if run.result)
    return runs, summary, {
        'retries': retries - before,
        'given_up': count_given_up(server.log_dir) - given_up,
        'completed': completed,
    }


def count_given_up(log_dir):
    """The POSTs the servers answered 503 after their last attempt."""
    return sum(serverside.count_log_lines(log_dir, marker)
               for marker in GIVE_UP_MARKERS)


def retries_per_thousand(retries, completed):
    return retries * 1000.0 / completed if completed else None
