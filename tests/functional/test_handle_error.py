"""handle_error: exception views in the context of the failing object, the
classic status codes, no tracebacks for the client unless in debug mode,
error reporting, transient errors left to retry, and no error loops."""

import logging
import xmlrpc.client

import pytest
import zope.error.error
from zope.component.hooks import getSite
from zope.interface import Interface
from zope.interface import implementedBy

from . import inner
from .inner.views import ApplicationError


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


def error_records(caplog):
    return [record for record in caplog.records
            if record.name == 'zope.pipeline.error'
            and record.levelno >= logging.ERROR]


# -- exception views

def test_exception_view_is_looked_up_in_the_context_of_the_failing_object(
        app):
    response = app.get('/folder/doc/@@fail?kind=inner', status=409)
    assert response.text == 'inner error view: raised by fail on Document'
    rendered = inner.view_records('inner-error')[0]
    assert rendered['interaction'] is True
    assert rendered['site_label'] == 'root'


def test_local_exception_view_of_a_local_site_is_used_for_errors_there(app):
    response = app.get('/site/doc/@@fail?kind=local', status=418)
    assert response.text == 'local error view at fail'


def test_local_exception_view_is_not_used_outside_its_site(app):
    response = app.get('/folder/doc/@@fail?kind=local', status=500)
    assert 'local error view' not in response.text
    assert getSite() is None


def test_error_raised_inside_the_error_view_gives_the_error_page_instead(
        app, caplog):
    # as the classic publisher: a failing exception view is logged and the
    # error is answered as if it had no view
    response = app.get('/folder/doc/@@fail?kind=broken', status=500)
    assert '500 Internal Server Error' in response.text
    assert 'the error view is broken too' not in response.text
    messages = [record.getMessage() for record in error_records(caplog)]
    assert 'Error while rendering the error view for /folder/doc/@@fail' \
        in messages


def test_failing_exception_view_of_unauthorized_still_challenges(
        app, caplog):
    # zope.app.http's PUT by an anonymous user: its Unauthorized view
    # fails, the classic publisher answered 401 with the challenge anyway
    from zope.component import getGlobalSiteManager
    from zope.component import provideAdapter
    from zope.publisher.interfaces import IDefaultViewName
    from zope.publisher.interfaces.browser import IBrowserRequest
    from zope.security.interfaces import IUnauthorized

    def broken_view(error, request):
        raise ValueError('broken')

    provideAdapter(broken_view, (IUnauthorized, IBrowserRequest), Interface,
                   'index.html')
    getGlobalSiteManager().adapters.register(
        [IUnauthorized, IBrowserRequest], IDefaultViewName, '', 'index.html')
    response = app.get('/folder/doc/@@secret', status=401)
    assert response.headers['WWW-Authenticate'].startswith('basic realm=')
    messages = [record.getMessage() for record in caplog.records]
    assert 'Error while rendering the error view for /folder/doc/@@secret' \
        in messages


# -- status codes

def test_traversal_to_a_missing_name_is_404(app):
    response = app.get('/folder/missing', status=404)
    assert '404 Not Found' in response.text


def test_not_found_raised_by_a_view_is_404(app):
    app.get('/folder/doc/@@fail?kind=notfound', status=404)


def test_unauthorized_for_anonymous_is_401_with_the_basic_auth_challenge(
        app):
    response = app.get('/folder/doc/@@secret', status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'
    assert 'secret for' not in response.text


def test_unauthorized_raised_by_a_view_for_anonymous_is_401(app):
    response = app.get('/folder/doc/@@fail?kind=unauthorized', status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'


def test_unauthorized_for_an_authenticated_principal_is_403(app):
    response = app.get('/folder/doc/@@secret', status=403,
                       headers=inner.basic_auth('alice', 'alicepw'))
    assert 'WWW-Authenticate' not in response.headers
    # the principal the permission is granted to gets the page
    app.get('/folder/doc/@@secret', status=200,
            headers=inner.basic_auth('bob', 'bobpw'))


def test_unauthorized_at_a_local_site_is_challenged_by_its_authentication(
        app):
    response = app.get('/site/doc/@@secret', status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="local site"'


@pytest.mark.parametrize('protocol, status', [('HTTP/1.0', 302),
                                              ('HTTP/1.1', 303)])
def test_redirect_exception_redirects_to_its_location(app, protocol, status):
    response = app.get('/folder/doc/@@fail?kind=redirect', status=status,
                       extra_environ={'SERVER_PROTOCOL': protocol})
    assert response.headers['Location'] == \
        'http://localhost/folder/doc/@@whoami'


def test_bad_request_is_400(app):
    response = app.get('/folder/doc/@@fail?kind=badrequest', status=400)
    assert '400 Bad Request' in response.text


def test_bad_form_input_is_400(app):
    response = app.get('/folder/doc/@@whoami?number:int=abc', status=400,
                       headers=inner.basic_auth('alice', 'alicepw'))
    assert '400 Bad Request' in response.text


def test_other_errors_are_500_without_a_traceback_but_logged(app, caplog):
    response = app.get('/folder/doc/@@fail?kind=boom', status=500)
    assert '500 Internal Server Error' in response.text
    assert 'Traceback' not in response.text
    assert 'boom' not in response.text
    [record] = error_records(caplog)
    assert record.getMessage() == 'GET /folder/doc/@@fail failed'
    assert record.exc_info[0] is RuntimeError


def test_client_errors_are_not_logged_as_errors(app, caplog):
    app.get('/folder/missing', status=404)
    app.get('/folder/doc/@@secret', status=401)
    assert error_records(caplog) == []


def test_debug_mode_shows_the_traceback_escaped(make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path, handle_error__debug='true')
    response = app.get('/folder/doc/@@fail?kind=boom', status=500)
    assert 'Traceback (most recent call last)' in response.text
    assert 'RuntimeError: boom &lt;script&gt;' in response.text
    assert '<script>' not in response.text


@pytest.mark.parametrize('debug', ['false', 'true'])
def test_error_pages_escape_what_they_echo(make_testapp, tmp_path, debug):
    app = inner.build(make_testapp, tmp_path, handle_error__debug=debug)
    response = app.get('/folder/%3Cscript%3Ealert(1)%3C%2Fscript%3E',
                       status=404)
    assert '<script>' not in response.text


# -- reporting

def test_error_reporting_utility_gets_server_errors_only(
        make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path, inner.ERROR_REPORTING_ZCML)
    utility = zope.error.error.globalErrorReportingUtility
    app.get('/folder/doc/@@fail?kind=boom', status=500)
    app.get('/folder/missing', status=404)
    app.get('/folder/doc/@@fail?kind=badrequest', status=400)
    entries = utility.getLogEntries()
    assert [entry['type'] for entry in entries] == ['RuntimeError']
    assert entries[0]['url'] == 'http://localhost/folder/doc/@@fail'


# -- transient errors

def test_transient_error_goes_to_retry_and_is_503_on_the_last_attempt(
        make_testapp, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger='zope.pipeline.retry')
    app = inner.build(make_testapp, tmp_path, retry__attempts='3')
    response = app.get('/folder/doc/@@fail?kind=conflict', status=503)
    assert response.headers['Retry-After'] == '1'
    attempts = [seen['attempt'] for seen in inner.view_records('fail')]
    assert attempts == [1, 2, 3]
    retried = [record for record in caplog.records
               if record.name == 'zope.pipeline.retry'
               and record.levelno == logging.INFO]
    assert len(retried) == 2
    # The exhausted conflict is one line naming it, without a traceback.
    [record] = error_records(caplog)
    assert record.getMessage().startswith(
        'GET /folder/doc/@@fail failed on attempt 3: ConflictError')
    assert record.getMessage().endswith('; answered 503')
    assert record.exc_info is None


def test_retry_after_of_a_503_rendered_here_is_the_retry_setting(
        make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path, retry__attempts='1',
                      retry__retry_after='7')
    response = app.get('/folder/doc/@@fail?kind=conflict', status=503)
    assert response.headers['Retry-After'] == '7'


def test_failing_error_reporting_utility_does_not_hide_the_error(
        make_testapp, tmp_path, caplog):
    app = inner.build(make_testapp, tmp_path,
                      inner.BROKEN_ERROR_REPORTING_ZCML)
    response = app.get('/folder/doc/@@fail?kind=boom', status=500)
    assert '500 Internal Server Error' in response.text
    messages = [record.getMessage() for record in error_records(caplog)]
    assert 'The error reporting utility failed' in messages


# -- more exception view and status cases

def test_exception_view_that_sets_no_status_keeps_the_status_of_the_error(
        app):
    response = app.get('/folder/doc/@@fail?kind=polite', status=404)
    assert response.text == 'politely not found'


def test_exception_view_that_sets_no_status_for_an_application_error_is_200(
        app, caplog):
    response = app.get('/folder/doc/@@fail?kind=application', status=200)
    assert response.text == 'please correct the form'
    [record] = error_records(caplog)  # still a server error in the log
    assert record.exc_info[0].__name__ == 'ApplicationError'


def test_handle_errors_false_lets_the_exception_reach_the_caller(app):
    with pytest.raises(ApplicationError):
        app.get('/folder/doc/@@fail?kind=application',
                extra_environ={'wsgi.handleErrors': False})
    with pytest.raises(RuntimeError):
        app.get('/folder/doc/@@fail?kind=boom',
                extra_environ={'wsgi.handleErrors': False})


def test_handle_errors_false_gives_the_type_error_of_a_missing_argument(app):
    # the classic publisher let mapply's TypeError through; zope.pipeline
    # answers 400 (MissingArgument) to clients that did not ask for it
    body = xmlrpc.client.dumps((1,), 'failing')
    with pytest.raises(TypeError, match='^Missing argument to '):
        app.post('/folder/doc', body, headers={'Content-Type': 'text/xml'},
                 extra_environ={'wsgi.handleErrors': False})


def test_handle_errors_false_keeps_errors_an_adapter_says_not_to_reraise(
        app):
    from zope.component import provideAdapter
    from zope.publisher.interfaces import IRedirect
    from zope.publisher.interfaces import IReRaiseException
    from zope.publisher.publish import DoNotReRaiseException
    provideAdapter(DoNotReRaiseException, (IRedirect,), IReRaiseException)
    response = app.get('/folder/doc/@@fail?kind=redirect', status=302,
                       extra_environ={'wsgi.handleErrors': False})
    assert response.headers['Location'].endswith('/folder/doc/@@whoami')


def test_method_without_a_view_is_405_with_the_allowed_methods(app):
    response = app.request('/folder/doc', method='DELETE', status=405)
    assert '405 Method Not Allowed' in response.text
    assert response.headers['Allow'] == 'PUT'
    assert app.request('/folder/doc', method='PUT').text == 'put'


def test_method_not_allowed_without_any_method_view_has_no_allow_header(
        app):
    response = app.request('/folder', method='DELETE', status=405)
    assert 'Allow' not in response.headers


def test_xmlrpc_server_error_is_an_xmlrpc_fault(app):
    body = xmlrpc.client.dumps((1, 2), 'failing')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'}, status=200)
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    assert caught.value.faultCode == 500
    assert 'failing over XML-RPC' not in caught.value.faultString
    assert getSite() is None


def test_xmlrpc_error_with_an_exception_view_for_xmlrpc_gets_the_view(app):
    # the classic publisher renders exception views for XML-RPC requests
    # too (zope.app.publisher's README: a view that asks for credentials)
    from zope.component import getGlobalSiteManager
    from zope.publisher.interfaces import IDefaultViewName
    from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest

    class ChallengingView:
        def __init__(self, context, request):
            self.request = request

        def __call__(self):
            self.request.unauthorized('basic realm="Zope"')
            return ''

    registry = getGlobalSiteManager()
    registry.registerAdapter(ChallengingView, (RuntimeError, IXMLRPCRequest),
                             Interface, 'index.html')
    registry.adapters.register(
        [implementedBy(RuntimeError), IXMLRPCRequest], IDefaultViewName, '',
        'index.html')
    body = xmlrpc.client.dumps((1, 2), 'failing')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'}, status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'


def test_xmlrpc_server_error_in_debug_mode_is_a_fault_with_its_text(
        make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path, handle_error__debug='true')
    body = xmlrpc.client.dumps((1, 2), 'failing')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'}, status=200)
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    assert caught.value.faultCode == 500
    assert 'failing over XML-RPC' in caught.value.faultString


def test_xmlrpc_method_not_found_is_an_xmlrpc_fault_too(app):
    body = xmlrpc.client.dumps((), 'no_such_method')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'}, status=200)
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    assert caught.value.faultCode == 404


def test_xmlrpc_method_is_called_with_its_parameters(app):
    body = xmlrpc.client.dumps((1, 2), 'adding')
    response = app.post('/folder/doc', body,
                        headers={'Content-Type': 'text/xml'})
    assert xmlrpc.client.loads(response.body)[0] == (3,)


def test_error_outside_a_full_pipeline_is_rendered_with_what_there_is(
        clean_zope):
    """No context, no transaction, no authentication utility, and an
    interaction someone else opened: a plain 401 page, and the
    interaction left as it was."""
    from zope.publisher.browser import TestRequest
    from zope.security.interfaces import Unauthorized
    from zope.security.management import endInteraction
    from zope.security.management import newInteraction
    from zope.security.management import queryInteraction

    from zope.pipeline.stages.handle_error import HandleErrorStage

    def failing(environ, start_response):
        raise Unauthorized('no')

    request = TestRequest()
    started = []
    newInteraction()
    try:
        body = HandleErrorStage(failing)(
            {'zope.request': request, 'REQUEST_METHOD': 'GET'},
            lambda status, headers, exc_info=None: started.append(status))
        assert queryInteraction() is not None
    finally:
        endInteraction()
    assert started == ['401 Unauthorized']
    assert b'401 Unauthorized' in b''.join(body)
    assert request.principal is None
