"""retry: run the rest of the pipeline again after a transient error.

The request body is read once, to its end (chunked bodies included), into
memory or, above ``retry.spool_threshold`` bytes, a temporary file
(``zope.pipeline.http.bodies``); each attempt gets a fresh copy of the environ
reading that body from the start; the keys the stages inside declare as
results (``Contract.results``: the published view's name) are copied
back from it after each attempt, for the outer stages (metrics).
What an attempt sent (status, headers, cookies, data given to ``write()``)
is held back until the attempt succeeds, so nothing of a failed attempt
reaches the client.  A retried error is logged at INFO in one line (a
conflict with its oid and class); when no attempt is left, a transient
error that reaches this stage is logged at ERROR and answered with 503.

A database that cannot serve (``errors.is_unavailable``: it cannot be
reached, or its storage is full) is not retried: the attempt's error is
logged at ERROR in one line and answered with 503 and ``Retry-After`` at
once, with a page that says which.  handle_error answers the outages it
sees itself; what reaches this stage failed before it, in open_root
(opening the process's database, or a connection from it).
"""

import random
import time

from zope.interface import Interface
from zope.interface import implementer
from zope.schema import Float
from zope.schema import Int

from zope.pipeline import components
from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.contract import result_keys
from zope.pipeline.http.bodies import BadLength
from zope.pipeline.http.bodies import BodyTooLarge
from zope.pipeline.http.bodies import UnreadableBody
from zope.pipeline.http.bodies import read_body
from zope.pipeline.http.errors import describe_error
from zope.pipeline.http.errors import is_transient
from zope.pipeline.http.errors import is_unavailable
from zope.pipeline.http.errors import log_unavailable
from zope.pipeline.http.errors import unavailable_headers
from zope.pipeline.http.errors import unavailable_message
from zope.pipeline.http.logtext import client_text
from zope.pipeline.http.logtext import logger_for
from zope.pipeline.http.wsgi import ClosingIterator
from zope.pipeline.http.wsgi import DeferredStart
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.interfaces import IBeforeRetry

logger = logger_for('zope.pipeline.retry')


class IRetrySettings(Interface):

    attempts = Int(title='Attempts in total, the first included; enough '
                         'for the writers of one object at 2 processes x '
                         '4 threads', default=10, min=1, max=100)
    backoff = Float(title='Base delay in seconds before the second attempt; '
                          'it doubles each attempt, with jitter',
                    default=0.05, min=0.0)
    backoff_cap = Float(title='Longest delay in seconds between attempts '
                              '(the delays of 10 attempts add up to at '
                              'most 3.25 s)',
                        default=0.5, min=0.0)
    spool_threshold = Int(title='Bodies larger than this many bytes are '
                                'kept in a temporary file', default=1 << 20,
                          min=0)
    max_body = Int(title='Largest request body accepted, in bytes (413 '
                         'above it); 0 for no limit',
                   default=100 << 20, min=0)
    retry_after = Int(title='Seconds in the Retry-After header of every '
                            '503: a transient error that outlasts every '
                            'attempt, a database that cannot be reached '
                            '(also when handle_error answers)',
                      default=1, min=0)


@implementer(IBeforeRetry)
class BeforeRetry:
    """Notified when an attempt failed transiently and another follows."""

    def __init__(self, environ, error, attempt):
        self.environ = environ
        self.error = error
        self.attempt = attempt


class RetryStage:
    """Buffer the body; re-run transient failures with a jittered backoff."""

    settings_schema = IRetrySettings
    contract = Contract(
        writes=(keys.ATTEMPT, keys.RETRIES_LEFT, keys.RETRY_AFTER,
                'wsgi.input', 'CONTENT_LENGTH'))

    def __init__(self, next_app, attempts=10, backoff=0.05, backoff_cap=0.5,
                 spool_threshold=1 << 20, max_body=100 << 20, retry_after=1,
                 build=None):
        self.next_app = next_app
        self.attempts = attempts
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.spool_threshold = spool_threshold
        self.max_body = max_body
        self.retry_after = retry_after
        #: The keys the stages inside declare as results (the published
        #: view's name): copied from each attempt's environ to this one,
        #: for the outer stages (metrics) to read on the way back.
        self.results = (result_keys(build.registry.stages)
                        if build is not None else ())

    # -- attempts

    def __call__(self, environ, start_response):
        try:
            body = read_body(environ, self.spool_threshold,
                             self.max_body)
        except BodyTooLarge:
            return plain_response(
                start_response, '413 Payload Too Large',
                'The request body is larger than %d bytes.' % self.max_body
                if self.max_body else 'The request body is too large.')
        except BadLength as error:
            return plain_response(start_response, '400 Bad Request',
                                  str(error))
        except UnreadableBody as error:
            logger.warning('%s %s: %s (%s)',
                           client_text(environ.get('REQUEST_METHOD')),
                           client_text(environ.get('PATH_INFO')), error,
                           describe_error(error.__cause__))
            return plain_response(start_response, '400 Bad Request',
                                  str(error))
        if body.spooled is None:
            return self.run(environ, start_response, body)
        try:
            result = self.run(environ, start_response, body)
        except BaseException:
            body.close()
            raise
        return ClosingIterator(result, body.close)

    def attempt_environ(self, environ, body, attempt):
        """A fresh copy of the environ for one attempt."""
        # dict() copies the key table at once (a display with ** would
        # insert key by key)
        attempt_environ = dict(environ)
        attempt_environ['wsgi.input'] = body.reader()
        attempt_environ['CONTENT_LENGTH'] = str(body.length)
        attempt_environ[keys.ATTEMPT] = attempt
        attempt_environ[keys.RETRIES_LEFT] = self.attempts - attempt
        attempt_environ[keys.RETRY_AFTER] = self.retry_after
        if 'HTTP_TRANSFER_ENCODING' in attempt_environ:
            del attempt_environ['HTTP_TRANSFER_ENCODING']
        return attempt_environ

    def run(self, environ, start_response, body):
        attempt = 1
        while True:
            attempt_environ = self.attempt_environ(environ, body, attempt)
            held = DeferredStart()
            try:
                # its bound __call__: a call the interpreter makes inline
                # (calling the instance goes through the type's call slot)
                result = self.next_app(attempt_environ, held.__call__)
                environ[keys.ATTEMPT] = attempt
                return held.send(start_response, result)
            except Exception as error:
                if is_unavailable(error):
                    return self.unavailable(environ, start_response, error,
                                            attempt)
                if not is_transient(error):
                    raise
                if attempt >= self.attempts:
                    return self.give_up(environ, start_response, error,
                                        attempt)
                self.before_retry(attempt_environ, error, attempt)
            finally:
                for key in self.results:
                    if key in attempt_environ:
                        environ[key] = attempt_environ[key]
            attempt += 1

    def before_retry(self, environ, error, attempt):
        logger.info('Retrying %s %s: attempt %d of %d failed with %s',
                    client_text(environ.get('REQUEST_METHOD')),
                    client_text(environ.get('PATH_INFO')), attempt,
                    self.attempts, describe_error(error))
        components.notify(BeforeRetry(environ, error, attempt))
        delay = min(self.backoff_cap, self.backoff * (2 ** (attempt - 1)))
        if delay:
            time.sleep(random.uniform(0, delay))

    def give_up(self, environ, start_response, error, attempt):
        """The last attempt failed transiently: log it, answer 503."""
        environ[keys.ATTEMPT] = attempt
        logger.error('Giving up on %s %s after %d attempts: %s',
                     client_text(environ.get('REQUEST_METHOD')),
                     client_text(environ.get('PATH_INFO')), attempt,
                     describe_error(error))
        return plain_response(
            start_response, '503 Service Unavailable',
            'The server is busy; please try again in a moment.',
            [('Retry-After', str(self.retry_after))])

    def unavailable(self, environ, start_response, error, attempt):
        """The database cannot be reached: log one line, answer 503."""
        environ[keys.ATTEMPT] = attempt
        log_unavailable(logger, environ.get('REQUEST_METHOD'),
                        environ.get('PATH_INFO'), error)
        return plain_response(
            start_response, '503 Service Unavailable',
            unavailable_message(error),
            unavailable_headers(error, self.retry_after))
