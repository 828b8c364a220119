"""retry: run the rest of the pipeline again after a transient error.

The request body is read once, to its end (chunked bodies included), into
memory or, above ``retry.spool_threshold`` bytes, a temporary file; each
attempt gets a fresh copy of the environ reading that body from the start.
What an attempt sent (status, headers, cookies, data given to ``write()``)
is held back until the attempt succeeds, so nothing of a failed attempt
reaches the client.
"""

import io
import logging
import random
import tempfile
import time

import zope.event
from zope.interface import Interface
from zope.interface import implementer
from zope.schema import Float
from zope.schema import Int

from zope.pipeline import environ as keys
from zope.pipeline.errors import is_transient
from zope.pipeline.interfaces import IBeforeRetry
from zope.pipeline.wsgi import ClosingIterator
from zope.pipeline.wsgi import DeferredStart
from zope.pipeline.wsgi import plain_response

logger = logging.getLogger('zope.pipeline.retry')

CHUNK = 65536


class IRetrySettings(Interface):

    attempts = Int(title='Attempts in total, the first included', default=4,
                   min=1, max=100)
    backoff = Float(title='Base delay in seconds before the second attempt; '
                          'it doubles each attempt, with jitter',
                    default=0.005, min=0.0)
    backoff_cap = Float(title='Longest delay in seconds between attempts',
                        default=0.2, min=0.0)
    spool_threshold = Int(title='Bodies larger than this many bytes are '
                                'kept in a temporary file', default=1 << 20,
                          min=0)
    max_body = Int(title='Largest request body accepted, in bytes (413 '
                         'above it); 0 for no limit',
                   default=100 << 20, min=0)


environ_keys = {
    'wsgi.input': 'replaced, per attempt, by the buffered body',
    'CONTENT_LENGTH': 'set to the buffered body length',
    keys.ATTEMPT: 'written: the number of this attempt (1, 2, ...)',
    keys.RETRIES_LEFT: 'written: attempts left after this one',
}


@implementer(IBeforeRetry)
class BeforeRetry:
    """Notified when an attempt failed transiently and another follows."""

    def __init__(self, environ, error, attempt):
        self.environ = environ
        self.error = error
        self.attempt = attempt


class BodyTooLarge(Exception):
    pass


class IncompleteBody(Exception):
    pass


def describe_conflict(error):
    """Return 'oid 0x..., class ...' for a ConflictError, else the text."""
    oid = getattr(error, 'oid', None)
    class_name = getattr(error, 'class_name', None)
    if oid is None and class_name is None:
        return '%s: %s' % (type(error).__name__, error)
    from ZODB.utils import oid_repr
    return '%s: oid %s, class %s' % (
        type(error).__name__, oid_repr(oid) if oid else '-',
        class_name or '-')


class RetryStage:
    """Buffer the body; re-run transient failures with a jittered backoff."""

    settings_schema = IRetrySettings
    environ_keys = environ_keys

    def __init__(self, next_app, attempts=4, backoff=0.005, backoff_cap=0.2,
                 spool_threshold=1 << 20, max_body=100 << 20):
        self.next_app = next_app
        self.attempts = attempts
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.spool_threshold = spool_threshold
        self.max_body = max_body

    # -- the body

    def read_body(self, environ):
        """Return (data or file, length): the whole body, read once."""
        length = environ.get('CONTENT_LENGTH') or ''
        chunked = 'chunked' in environ.get('HTTP_TRANSFER_ENCODING',
                                           '').lower()
        if length.strip():
            length = int(length)  # ValueError: handled by the caller
            if length < 0:
                raise ValueError(length)
            if self.max_body and length > self.max_body:
                raise BodyTooLarge(length)
        elif not chunked:
            return b'', 0
        else:
            length = None
        stream = environ['wsgi.input']
        if length is not None and length <= self.spool_threshold:
            data = stream.read(length) if length else b''
            if len(data) < length:
                raise IncompleteBody(len(data))
            return data, length
        return self.spool(stream, length)

    def spool(self, stream, length):
        spooled = tempfile.SpooledTemporaryFile(self.spool_threshold)
        total = 0
        while length is None or total < length:
            wanted = CHUNK if length is None else min(CHUNK, length - total)
            chunk = stream.read(wanted)
            if not chunk:
                break
            total += len(chunk)
            if self.max_body and total > self.max_body:
                spooled.close()
                raise BodyTooLarge(total)
            spooled.write(chunk)
        if length is not None and total < length:
            spooled.close()
            raise IncompleteBody(total)
        return spooled, total

    # -- attempts

    def __call__(self, environ, start_response):
        try:
            body, length = self.read_body(environ)
        except BodyTooLarge:
            return plain_response(
                start_response, '413 Payload Too Large',
                'The request body is larger than %d bytes.' % self.max_body)
        except (ValueError, IncompleteBody):
            return plain_response(
                start_response, '400 Bad Request',
                'The request body does not match its Content-Length.')
        if isinstance(body, bytes):
            return self.run(environ, start_response, body, length)
        try:
            result = self.run(environ, start_response, body, length)
        except BaseException:
            body.close()
            raise
        return ClosingIterator(result, body.close)

    def run(self, environ, start_response, body, length):
        attempt = 1
        while True:
            attempt_environ = dict(environ)
            if isinstance(body, bytes):
                attempt_environ['wsgi.input'] = io.BytesIO(body)
            else:
                body.seek(0)
                attempt_environ['wsgi.input'] = body
            attempt_environ['CONTENT_LENGTH'] = str(length)
            attempt_environ.pop('HTTP_TRANSFER_ENCODING', None)
            attempt_environ[keys.ATTEMPT] = attempt
            attempt_environ[keys.RETRIES_LEFT] = self.attempts - attempt
            held = DeferredStart()
            try:
                result = self.next_app(attempt_environ, held)
            except Exception as error:
                if not is_transient(error) or attempt >= self.attempts:
                    if is_transient(error):
                        logger.error('Giving up on %s %s after %d attempts: '
                                     '%s', environ.get('REQUEST_METHOD'),
                                     environ.get('PATH_INFO'), attempt,
                                     describe_conflict(error))
                    raise
                self.before_retry(attempt_environ, error, attempt)
                attempt += 1
                continue
            environ[keys.ATTEMPT] = attempt
            return held.send(start_response, result)

    def before_retry(self, environ, error, attempt):
        logger.info('Retrying %s %s (attempt %d of %d failed): %s',
                    environ.get('REQUEST_METHOD'), environ.get('PATH_INFO'),
                    attempt, self.attempts, describe_conflict(error))
        zope.event.notify(BeforeRetry(environ, error, attempt))
        delay = min(self.backoff_cap, self.backoff * (2 ** (attempt - 1)))
        if delay:
            time.sleep(random.uniform(0, delay))
