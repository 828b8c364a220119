"""A site whose ZCML includes zope.pipeline's site.zcml and registers a
stage of its own, for zope.pipeline.testing's layer."""


class StampStage:
    """Adds ``X-Stamp`` to every browser response, error pages included."""

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        def stamped(status, headers, exc_info=None):
            headers = list(headers) + [('X-Stamp', 'layer_site')]
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.next_app(environ, stamped)
