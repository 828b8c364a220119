"""benchmarks.writepath: the write path's count of POSTs that gave up."""

from benchmarks import writepath

# Lines of the app logs of a write-path run (mod_wsgi 2x2 on SQLite).
LOG = '''\
2026-11-24 02:58:32,074 INFO zope.pipeline.retry Retrying POST /folder/page/@@add-comment: attempt 1 of 4 failed with ConflictError: oid 0x0d, class BTrees.OOBTree.OOBTree
2026-11-24 02:58:54,936 ERROR zope.pipeline.error POST /folder/page/@@add-comment failed on attempt 4: ConflictError: oid 0x2e, class BTrees.OOBTree.OOBucket; answered 503
2026-11-24 02:59:01,002 ERROR zope.pipeline.retry Giving up on POST /folder/page/@@add-comment after 4 attempts: ConflictError: oid 0x2e, class BTrees.OOBTree.OOBucket
'''  # noqa: E501 - log lines as written


def test_a_post_answered_503_after_its_last_attempt_counts_as_given_up(
        tmp_path):
    # handle_error answers the last attempt's conflict itself; the retry
    # stage gives up when the error reaches it: both are a 503.
    (tmp_path / 'app-1.log').write_text(LOG)
    (tmp_path / 'error_log').write_text('Giving up\n')  # not an app log
    assert writepath.count_given_up(str(tmp_path)) == 2
