"""The request body, read once to its end and kept (in memory, or in a
temporary file past a threshold) so that every attempt of the retry
stage reads it again from its start."""

import io
import re
import tempfile

#: How much of the body is read at a time.
CHUNK = 65536

#: A Content-Length this stage believes: decimal digits, at most 10**18.
LENGTH_RE = re.compile(r'^[0-9]{1,18}$')
DIGITS_RE = re.compile(r'^[0-9]+$')


class BodyTooLarge(Exception):
    """The body is larger than ``retry.max_body`` (413)."""


class BadLength(Exception):
    """Content-Length is not a length, or the body ended before it (400)."""


class UnreadableBody(Exception):
    """Reading the body failed: the client went away or the server's
    connection to it broke (400, one warning line, no traceback)."""


class SharedInput:
    """An attempt's ``wsgi.input`` on the spooled body; seekable, like the
    ``io.BytesIO`` an attempt gets for a body kept in memory.

    Closing it does nothing: the body belongs to the retry stage, which
    closes it after the last attempt, and the next attempt reads it again.
    """

    __slots__ = ('_file',)

    def __init__(self, spooled):
        self._file = spooled

    def read(self, size=-1):
        return self._file.read(size)

    def readline(self, size=-1):
        return self._file.readline(size)

    def readlines(self, hint=-1):
        return self._file.readlines(hint)

    def __iter__(self):
        return iter(self._file)

    def seekable(self):
        return True

    def seek(self, offset, whence=0):
        return self._file.seek(offset, whence)

    def tell(self):
        return self._file.tell()

    def close(self):
        """The retry stage closes the body, not an attempt."""


class BufferedBody:
    """The whole request body, read once: in memory while it is at most
    ``threshold`` bytes, in a temporary file once it is longer."""

    __slots__ = ('threshold', 'chunks', 'data', 'spooled', 'length')

    def __init__(self, threshold=0):
        self.threshold = threshold
        self.chunks = []
        self.data = b''
        self.spooled = None
        self.length = 0

    def append(self, chunk):
        self.length += len(chunk)
        if self.spooled is None and self.length > self.threshold:
            self.spooled = tempfile.TemporaryFile()
            self.spooled.writelines(self.chunks)
            self.chunks = []
        if self.spooled is None:
            self.chunks.append(chunk)
        else:
            self.spooled.write(chunk)

    def finish(self):
        """Stop collecting; return self, ready for ``reader()``."""
        self.data = b''.join(self.chunks)
        self.chunks = []
        return self

    def reader(self):
        """Return a stream reading the body from its start."""
        if self.spooled is None:
            return io.BytesIO(self.data)
        self.spooled.seek(0)
        return SharedInput(self.spooled)

    def close(self):
        if self.spooled is not None:
            self.spooled.close()


#: The body of a request that announces none: empty, read from no
#: stream, shared by those requests (nothing changes a finished body).
NO_BODY = BufferedBody().finish()


def declared_length(environ):
    """Return the announced body length, or None to read to the end."""
    text = environ.get('CONTENT_LENGTH')
    if not text:  # most requests: no body, nothing to parse
        return length_without_header(environ)
    text = text.strip()
    if LENGTH_RE.match(text):
        return int(text)
    if DIGITS_RE.match(text):
        raise BodyTooLarge()
    if text:
        raise BadLength('The Content-Length header is not a number.')
    return length_without_header(environ)


#: Methods whose request content has no defined meaning (RFC 9110
#: 9.3.1, 9.3.2): without Content-Length or chunking they have no body,
#: whatever ``wsgi.input_terminated`` says.
NO_CONTENT_METHODS = frozenset(('GET', 'HEAD'))


def length_without_header(environ):
    """The length of a body without Content-Length: None (read to the
    end) when chunked, or when the server ends the input of a request
    whose method carries content (a server that removed the chunking);
    else 0.

    A GET or HEAD that announces no body is not read: HTTP/1.1 gives it
    none (RFC 9112 6.3), Apache's mod_http2 announces an HTTP/2 body as
    chunked, and reading a terminated input to its end costs mod_wsgi's
    daemon a wait for the Apache process to send the end of an empty
    body, on every page.
    """
    chunked = 'chunked' in environ.get('HTTP_TRANSFER_ENCODING', '').lower()
    if chunked:
        return None
    if environ.get('wsgi.input_terminated') and \
            environ.get('REQUEST_METHOD') not in NO_CONTENT_METHODS:
        return None
    return 0


def read_body(environ, spool_threshold, max_body):
    """Return the BufferedBody of this request, read to its end: in
    memory up to ``spool_threshold`` bytes, else in a temporary file;
    BodyTooLarge above ``max_body`` bytes (0: no limit).  A request that
    announces no body gets ``NO_BODY``."""
    length = declared_length(environ)
    if length == 0:
        return NO_BODY
    body = BufferedBody(spool_threshold)
    if length is not None and max_body and length > max_body:
        raise BodyTooLarge()
    try:
        read_into(environ['wsgi.input'], length, body, max_body)
    except BaseException:
        body.close()
        raise
    return body.finish()


def read_into(stream, length, body, max_body):
    """Read ``length`` bytes (None: to the end) into ``body``."""
    while length is None or body.length < length:
        wanted = CHUNK if length is None else min(CHUNK,
                                                  length - body.length)
        try:
            chunk = stream.read(wanted)
        except OSError as error:
            raise UnreadableBody(
                'The request body could not be read after %d bytes.'
                % body.length) from error
        if not chunk:
            break
        if max_body and body.length + len(chunk) > max_body:
            raise BodyTooLarge()
        body.append(chunk)
    if length is not None and body.length < length:
        raise BadLength('The request body ended after %d of the %d bytes '
                        'its Content-Length announced.'
                        % (body.length, length))
