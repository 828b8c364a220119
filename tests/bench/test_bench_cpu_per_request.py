"""The in-application CPU timer of ``benchmarks.cpu_per_request``."""

import os

from benchmarks import cpu_per_request


class Body:
    """A response body that counts how often it is closed."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.closed = 0

    def __iter__(self):
        return iter(self.chunks)

    def close(self):
        self.closed += 1


def test_the_timer_forwards_close_once_and_counts_the_request_once(
        tmp_path):
    bodies = []

    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/plain')])
        bodies.append(Body([b'page']))
        return bodies[-1]

    timer = cpu_per_request.InAppTimer(app, str(tmp_path))
    for _ in range(2):
        body = timer({}, lambda status, headers, exc_info=None: None)
        assert list(body) == [b'page']
        body.close()
        body.close()  # a server closing twice: forwarded once
    assert [body.closed for body in bodies] == [1, 1]
    with open(os.path.join(tmp_path, '%d.inapp' % os.getpid())) as record:
        seconds, requests = record.read().split()
    assert int(requests) == 2
    assert cpu_per_request.in_app(str(tmp_path)) == float(seconds) >= 0.0
