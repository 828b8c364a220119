"""The smallest WSGI environ a request class accepts, for unit tests."""

import io


def minimal_environ(method='GET', **extra):
    """A request for ``/`` on localhost:80 with an empty body, and
    ``extra`` keys."""
    environ = {'REQUEST_METHOD': method, 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'PATH_INFO': '/', 'SCRIPT_NAME': '',
               'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(b'')}
    environ.update(extra)
    return environ
