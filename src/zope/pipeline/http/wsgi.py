"""Small WSGI building blocks the stages share: deferred start, closing."""


class ClosingIterator:
    """Iterate ``iterable``; on ``close()`` close it, then run ``callbacks``.

    ``close()`` is forwarded exactly once however often it is called, and the
    callbacks run even if closing the iterable raises.
    """

    __slots__ = ('_iterable', '_iterator', '_callbacks')

    def __init__(self, iterable, *callbacks):
        self._iterable = iterable
        self._iterator = None
        self._callbacks = callbacks

    def __iter__(self):
        if self._iterator is None:
            self._iterator = iter(self._iterable)
        return self._iterator

    def close(self):
        callbacks = self._callbacks
        if callbacks is None:
            return
        self._callbacks = None
        iterable = self._iterable
        try:
            if type(iterable) is not list:  # a list has no close()
                close_iterable(iterable)
        finally:
            if len(callbacks) == 1:  # what run_all does for one
                callbacks[0]()
            else:
                run_all(callbacks)


def listed_chunks(body):
    """The list of chunks ``body`` will give the server, when that is known
    before it is iterated: ``body`` itself if it is a list, or the list
    inside ``ClosingIterator`` wrappers (not their subclasses, which
    iterate their own way) that nothing has iterated yet; else None."""
    while type(body) is ClosingIterator:
        if body._iterator is not None:
            return None
        body = body._iterable
    return body if type(body) is list else None


def run_all(callbacks):
    """Call every callback; re-raise the first exception after all ran."""
    error = None
    for callback in callbacks:
        try:
            callback()
        except Exception as exc:  # re-raised below
            if error is None:
                error = exc
    if error is not None:
        raise error


def close_iterable(iterable):
    close = getattr(iterable, 'close', None)
    if close is not None:
        close()


class DeferredStart:
    """A ``start_response`` that holds status, headers and written data.

    Lets a stage finish its work (commit a transaction, decide to retry)
    before anything reaches the server; ``send`` then starts the real
    response and returns the body with what ``write()`` received first.
    Because nothing was sent before ``send``, a call with ``exc_info``
    before it simply replaces the held status and headers.  After ``send``
    the server's ``start_response`` and ``write`` are used directly, so a
    late error reaches the server (which re-raises it, as PEP 3333 says,
    once the headers are out) and late writes are not lost.
    """

    __slots__ = ('status', 'headers', 'written', '_server_start',
                 '_server_write')

    def __init__(self):
        self.status = None
        self.headers = None
        self.written = []
        self._server_start = None
        self._server_write = None

    def __call__(self, status, headers, exc_info=None):
        if self._server_start is not None:
            return self._forward(status, headers, exc_info)
        if self.status is not None and exc_info is None:
            raise AssertionError('start_response called a second time '
                                 'without exc_info')
        self.status = status
        self.headers = headers
        return self.write

    def _forward(self, status, headers, exc_info):
        if exc_info is None:
            return self._server_start(status, headers)
        return self._server_start(status, headers, exc_info)

    def write(self, data):
        """The ``write`` callable: held until ``send``, then the server's."""
        if self._server_write is None:
            self.written.append(data)
        else:
            self._server_write(data)

    @property
    def started(self):
        return self.status is not None

    def send(self, start_response, iterable):
        """Start the real response and return the body to give the server.

        An application may call ``start_response`` as late as its first
        iteration; then the first chunk is taken here and sent first.
        """
        if self.status is None:
            return self._send_late(start_response, iterable)
        self._start(start_response)
        if not self.written:
            return iterable
        return prepend(self.written, iterable, iterable)

    def _send_late(self, start_response, iterable):
        iterator = iter(iterable)
        try:
            self.written.append(next(iterator))
        except StopIteration:
            pass
        except BaseException:
            close_iterable(iterable)
            raise
        if self.status is None:
            close_iterable(iterable)
            raise AssertionError('The application returned without '
                                 'calling start_response')
        self._start(start_response)
        return prepend(self.written, iterator, iterable)

    def _start(self, start_response):
        self._server_write = start_response(self.status, self.headers)
        self._server_start = start_response


def prepend(chunks, rest, body):
    """Return ``chunks`` then what is left of ``rest`` (an iterator over, or
    the whole of, the body iterable ``body``), closing ``body`` exactly once
    when the server closes the result."""
    return ClosingIterator(_chain(chunks, rest),
                           lambda: close_iterable(body))


def _chain(chunks, rest):
    yield from chunks
    yield from rest


#: Browsers must not guess another type for what they get: the
#: security_headers stage sends it on every response (the one home of the
#: header); a response made outside the pipeline adds it itself.
NOSNIFF = ('X-Content-Type-Options', 'nosniff')


def plain_response(start_response, status, text, headers=(), exc_info=None):
    """Send a short text/plain response; return its body."""
    return short_response(start_response, status, text,
                          'text/plain; charset=utf-8', headers, exc_info)


def html_response(start_response, status, page, headers=()):
    """Send a short HTML page the publisher made itself (never cached);
    return its body."""
    return short_response(start_response, status, page,
                          'text/html; charset=utf-8',
                          [('Cache-Control', 'no-store')] + list(headers))


def short_response(start_response, status, text, content_type, headers=(),
                   exc_info=None):
    """Send ``text`` whole, with its type and length."""
    body = text.encode('utf-8')
    headers = [('Content-Type', content_type),
               ('Content-Length', str(len(body)))] + list(headers)
    if exc_info is None:
        start_response(status, headers)
    else:
        start_response(status, headers, exc_info)
    return [body]
