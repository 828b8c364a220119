"""Before: the classic publisher's way, a publication subclass and the
factory a ``<publisher>`` directive registers.  zope.pipeline calls no
publication, so it refuses this one at startup."""

from zope.app.publication.browser import BrowserPublication
from zope.app.publication.requestpublicationfactories import BrowserFactory

CACHE_CONTROL = 'private, max-age=60'


class CachedPagesPublication(BrowserPublication):
    """Browsers may keep a page for a minute, unless it says otherwise."""

    def afterCall(self, request, ob):
        super().afterCall(request, ob)
        if request.response.getHeader('Cache-Control') is None:
            request.response.setHeader('Cache-Control', CACHE_CONTROL)


class CachedPagesFactory(BrowserFactory):
    """The request class of BrowserFactory, with the publication above."""

    def __call__(self):
        request_class, _publication = super().__call__()
        return request_class, CachedPagesPublication
