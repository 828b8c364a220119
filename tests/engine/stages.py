"""Stage factories and request factories the engine tests register in ZCML.

Each stage records its label in ``environ['tests.trail']`` so a test can see
the order a request really went through, not only the compiled order.  The
engine calls every stage factory as ``factory(next_app, build=build,
**settings)`` (``IStageFactory``).
"""

import collections

from zope.interface import Interface
from zope.interface import alsoProvides
from zope.interface import implementer
from zope.publisher.browser import BrowserRequest
from zope.schema import Bool
from zope.schema import Choice
from zope.schema import Float
from zope.schema import Int
from zope.schema import Text

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.engine.factories import RequestFactory
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.interfaces import IRequestFactory

TRAIL = 'tests.trail'


class Recording:
    """A pass-through stage that appends its label to the trail."""

    label = 'recording'

    def __init__(self, next_app, build):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        environ.setdefault(TRAIL, []).append(self.label)
        return self.next_app(environ, start_response)


class First(Recording):
    label = 'first'


class Second(Recording):
    label = 'second'


class Third(Recording):
    label = 'third'


class Fourth(Recording):
    label = 'fourth'


class Replacement(Recording):
    label = 'replacement'


class Added(Recording):
    label = 'added'


class Generic(Recording):
    label = 'generic'


class ForXMLRPC(Recording):
    label = 'xmlrpc-specific'


#: How often each counting stage class was built, by label.
built = collections.Counter()


class Counting(Recording):
    """Counts how often the engine builds it (it must: once per chain)."""

    label = 'counting'

    def __init__(self, next_app, build):
        super().__init__(next_app, build)
        built[self.label] += 1


class Respond:
    """The end of a test chain: answers with the trail and request type."""

    def __init__(self, next_app, build):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        trail = environ.get(TRAIL, []) + ['respond']
        return plain_response(start_response, '200 OK', '%s: %s' % (
            environ.get(keys.REQUEST_TYPE), ' '.join(trail)))


class ISettingsSettings(Interface):
    count = Int(title='How many', default=3, min=1)
    debug = Bool(title='Debug mode', default=False)
    ratio = Float(title='A ratio', default=0.5)
    greeting = Text(title='A greeting', default='hello')
    colour = Choice(title='A colour', values=('red', 'green'),
                    default='red')


class WithSettings(Recording):
    """Keeps the settings it was built with, for the tests to read."""

    settings_schema = ISettingsSettings
    contract = Contract(reads_if_present=(TRAIL,), writes=(TRAIL,))
    label = 'settings'

    def __init__(self, next_app, build, **settings):
        super().__init__(next_app, build)
        self.settings = settings


class ITestLayer(Interface):
    """A layer the skinned request factory puts on a request."""


@implementer(IRequestFactory)
class SkinnedBrowserFactory(RequestFactory):
    """Browser requests; with ``X-Skin: test`` also providing ITestLayer."""

    def __call__(self, input_stream, environ):
        request = super().__call__(input_stream, environ)
        if environ.get('HTTP_X_SKIN') == 'test':
            alsoProvides(request, ITestLayer)
        return request


skinned_browser = SkinnedBrowserFactory(BrowserRequest)


@implementer(IRequestFactory)
class Declining(RequestFactory):
    """Makes browser requests only when the X-Accept header says so."""

    def canHandle(self, environ):
        return environ.get('HTTP_X_ACCEPT') == 'yes'


declining = Declining(BrowserRequest)


class MinimalFactory:
    """An IRequestFactory that is not a RequestFactory subclass."""

    request_class = BrowserRequest

    def canHandle(self, environ):
        return True

    def __call__(self, input_stream, environ):
        return BrowserRequest(input_stream, environ)


minimal = implementer(IRequestFactory)(MinimalFactory)()


def omitted(next_app, build):
    """A stage that does nothing: registered over a stage (in an overrides
    ZCML), it takes that stage out of the chain."""
    return next_app


omitted.contract = Contract()
