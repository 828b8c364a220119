"""After: the same work as a stage.  ``afterCall`` ran once the published
object had been called without an error, before the response was sent:
a stage between ``traverse`` and ``call`` sees exactly those responses
start (an error goes past it to ``handle_error``)."""

from zope.interface import Interface
from zope.schema import ASCIILine

from zope.pipeline.engine.contract import Contract


class ICacheControlSettings(Interface):
    """The ini settings of the stage: ``cache_control.<name>``."""

    value = ASCIILine(title='Cache-Control of pages that set none',
                      default='private, max-age=60')


class CacheControlStage:
    """Add ``Cache-Control`` to a page that was published without error
    and set none itself."""

    settings_schema = ICacheControlSettings
    #: The stage contract: the environ keys it needs, may read, and
    #: writes (none: it only adds a header to the response).
    contract = Contract()

    def __init__(self, next_app, build=None, value='private, max-age=60'):
        self.next_app = next_app
        self.value = value

    def __call__(self, environ, start_response):
        def start_with_cache_control(status, headers, exc_info=None):
            if not any(name.lower() == 'cache-control'
                       for name, _value in headers):
                headers = list(headers) + [('Cache-Control', self.value)]
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.next_app(environ, start_with_cache_control)
