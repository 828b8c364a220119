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
        callbacks, self._callbacks = self._callbacks, None
        if callbacks is None:
            return
        try:
            close_iterable(self._iterable)
        finally:
            run_all(callbacks)


def run_all(callbacks):
    """Call every callback; re-raise the first exception after all ran."""
    error = None
    for callback in callbacks:
        try:
            callback()
        except Exception as exc:  # noqa: B902 - re-raised below
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
    Because nothing was sent before ``send``, a later call with
    ``exc_info`` simply replaces the held status and headers, and ``send``
    never needs to pass ``exc_info`` on.
    """

    __slots__ = ('status', 'headers', 'written')

    def __init__(self):
        self.status = None
        self.headers = None
        self.written = []

    def __call__(self, status, headers, exc_info=None):
        if self.status is not None and exc_info is None:
            raise AssertionError('start_response called a second time '
                                 'without exc_info')
        self.status = status
        self.headers = headers
        return self.written.append

    @property
    def started(self):
        return self.status is not None

    def send(self, start_response, iterable):
        """Start the real response and return the body to give the server.

        An application may call ``start_response`` as late as its first
        iteration; then the first chunk is taken here and sent first.
        """
        if self.status is None:
            iterator = iter(iterable)
            try:
                self.written.append(next(iterator))
            except StopIteration:
                pass
            if self.status is None:
                close_iterable(iterable)
                raise AssertionError('The application returned without '
                                     'calling start_response')
            remaining = iterator
        else:
            remaining = iterable
        start_response(self.status, self.headers)
        if not self.written:
            return iterable
        return ClosingIterator(_prepend(self.written, remaining),
                               lambda: close_iterable(iterable))


def _prepend(chunks, iterable):
    yield from chunks
    yield from iterable


def plain_response(start_response, status, text, headers=(), exc_info=None):
    """Send a short text/plain response; return its body."""
    body = text.encode('utf-8')
    headers = [('Content-Type', 'text/plain; charset=utf-8'),
               ('Content-Length', str(len(body)))] + list(headers)
    if exc_info is None:
        start_response(status, headers)
    else:
        start_response(status, headers, exc_info)
    return [body]
