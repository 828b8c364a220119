"""A raw WSGI stage of the inner-stage tests: it records what open_root put
in the environ (views only see the request's copy of the environ)."""

from . import seen

CONNECTION = 'zope.pipeline.connection'
TRANSACTION_MANAGER = 'zope.pipeline.transaction_manager'
ROOT = 'zope.pipeline.root'


class EnvironProbe:

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        connection = environ[CONNECTION]
        seen.append({'probe': 'open_root',
                     'connection': connection,
                     'connection_manager': connection.transaction_manager,
                     'root_mapping': dict(connection.root()),
                     'manager': environ[TRANSACTION_MANAGER],
                     'root': environ[ROOT]()})
        return self.next_app(environ, start_response)
