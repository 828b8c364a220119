"""A request factory that refuses some paths and declines the rest."""

from zope.interface import implementer
from zope.publisher.browser import BrowserRequest
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.browser import IBrowserRequest

from zope.pipeline.engine.factories import browser
from zope.pipeline.interfaces import IRequestFactory


@implementer(IRequestFactory)
class Refuser:
    """Handles only paths under /refused: NotFound for /refused/404,
    ValueError for /refused/400, a browser request otherwise."""

    request_class = BrowserRequest
    request_interface = IBrowserRequest

    def canHandle(self, environ):
        return environ.get('PATH_INFO', '').startswith('/refused')

    def __call__(self, input_stream, environ):
        path = environ.get('PATH_INFO')
        if path == '/refused/404':
            raise NotFound(None, 'refused')
        if path == '/refused/400':
            raise ValueError('refused')
        return browser(input_stream, environ)


refuser = Refuser()
