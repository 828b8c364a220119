"""An ordinary WSGI middleware, as paste.deploy filters wrap applications."""


def factory(global_conf, header='X-Wrapped', value='yes'):
    """paste.deploy filter factory: adds one response header."""
    def make_filter(app):
        return AddHeader(app, header, value)
    return make_filter


class AddHeader:

    def __init__(self, app, header, value):
        self.app = app
        self.header = header
        self.value = value

    def __call__(self, environ, start_response):
        def add_header(status, headers, exc_info=None):
            headers = list(headers) + [(self.header, self.value)]
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)
        return self.app(environ, add_header)


def plain_app(global_conf):
    """paste.deploy app factory: a WSGI app that is no zope.pipeline."""
    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'plain']
    return app
