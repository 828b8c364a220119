"""run_suite.py's request counter is transparent to the layers of the
suites: what they read or replace on the classic application
(``requestFactory._db``, ``handleErrors``) reaches the application."""

from tests.compat import run_suite


class Application:

    def __init__(self, db):
        self.requestFactory = type('Factory', (), {'_db': db})()
        self.handleErrors = True

    def __call__(self, environ, start_response):
        return [self.requestFactory._db.encode()]


def test_counted_application_forwards_what_layers_read_and_replace():
    app = run_suite.counting(Application)('first')
    before = run_suite.served[0]
    assert app.requestFactory._db == 'first'
    app.requestFactory = type(app.requestFactory)()
    app.requestFactory._db = 'second'
    app.handleErrors = False
    assert app({}, None) == [b'second']
    assert app.app.handleErrors is False
    assert run_suite.served[0] == before + 1
