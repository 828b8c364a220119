"""Publications and request-publication factories an application might
register with ``<publisher>`` (tests/unit/test_publications.py).
Imports zope.app.publication: import it only where that is installed."""

from zope.app.publication.browser import BrowserPublication
from zope.app.publication.http import BaseHTTPPublication
from zope.app.publication.http import HTTPPublication
from zope.app.publication.requestpublicationfactories import BrowserFactory
from zope.app.publication.requestpublicationfactories import HTTPFactory
from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.base import BaseRequest
from zope.publisher.browser import BrowserRequest
from zope.publisher.http import HTTPRequest

from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.publications import CALLS_METHOD_VIEWS


class RenamedPublication(BrowserPublication):
    """A subclass that changes nothing: it maps as BrowserPublication."""


class CallingPublication(BrowserPublication):
    """A subclass doing work of its own when the object is called."""

    def callObject(self, request, ob):
        return super().callObject(request, ob)

    def afterCall(self, request, ob):
        super().afterCall(request, ob)


class OwnPublication:
    """A publication of its own, no subclass of a known one."""


def factory_of(name, publication, request_class=None, base=BrowserFactory):
    """A request-publication factory class returning ``publication``."""

    class Factory(base):
        def __call__(self):
            request, _ = super().__call__()
            return request_class or request, publication
    Factory.__name__ = Factory.__qualname__ = name
    return Factory


RenamedFactory = factory_of('RenamedFactory', RenamedPublication)
CallingFactory = factory_of('CallingFactory', CallingPublication)
OwnFactory = factory_of('OwnFactory', OwnPublication)
#: HTTPPublication (method views) for browser requests: no chain does it
MismatchedFactory = factory_of('MismatchedFactory', HTTPPublication)
#: a request class that is no HTTP request
NoHTTPFactory = factory_of('NoHTTPFactory', BrowserPublication, BaseRequest)


class CustomBrowserRequest(BrowserRequest):
    """What an application's IBrowserRequestFactory utility names."""


CustomRequestFactory = factory_of('CustomRequestFactory', BrowserPublication,
                                  CustomBrowserRequest)


class FailingFactory(BrowserFactory):

    def __call__(self):
        raise RuntimeError('no request class today')


class IJSONRequest(Interface):
    """A request type of the application's own."""


@implementer(IJSONRequest)
class JSONRequest(HTTPRequest):
    """Requests of the application's JSON request type."""


class JSONFactory(HTTPFactory):
    """Makes JSON requests for requests that say they send JSON."""

    def canHandle(self, environment):
        return environment.get('HTTP_X_JSON') == 'yes'

    def __call__(self):
        return JSONRequest, HTTPPublication


class JSONObjectsFactory(JSONFactory):
    """JSON requests published by calling the object (XML-RPC's way)."""

    def __call__(self):
        return JSONRequest, BaseHTTPPublication


def call_stage(next_app, build=None):
    """A call stage of the site's own (it calls the published object)."""
    from zope.pipeline.stages.call import CallStage
    return CallStage(next_app, build)


call_stage.contract = Contract(publishes=True)


def method_call_stage(next_app, build=None):
    """A call stage of the site's own that says it calls the view named
    after the request method."""
    from zope.pipeline.stages.call import MethodCallStage
    return MethodCallStage(next_app, build)


method_call_stage.contract = Contract(publishes=True)
method_call_stage.calls = CALLS_METHOD_VIEWS
