"""The call stage: mapply with form arguments, HEAD, method views for plain
HTTP, XML-RPC, and the view name it records for metrics."""

import xmlrpc.client

import pytest

from fixtures.testing import EDITOR
from fixtures.testing import basic_auth
from fixtures.testing import classic_app


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def xmlrpc_call(app, path, method, *args, status=200):
    response = app.post(path, xmlrpc.client.dumps(args, method),
                        content_type='text/xml', status=status)
    return response


# -- mapply

def test_form_arguments_are_passed_by_name_converted(app):
    response = app.get('/folder/doc/add.html', {'a:int': '3', 'b:int': '4'})
    assert response.text == '3 + 4 = 7'


def test_an_argument_the_form_lacks_takes_its_default(app):
    assert app.get('/folder/doc/add.html?a:int=3').text == '3 + 2 = 5'


def test_a_required_argument_the_form_lacks_is_a_bad_request(app):
    response = app.get('/folder/doc/add.html?b:int=3', status=400)
    assert b'Traceback' not in response.body


def test_an_argument_named_request_gets_the_request(app):
    response = app.post('/folder/doc/echo.html', {'text': 'hi'})
    assert response.text == 'hi (POST hi)'


def test_a_protected_page_asks_anonymous_users_to_log_in(app):
    response = app.post('/folder/doc/edit.html', {'title': 'New'},
                        status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'
    response = app.post('/folder/doc/edit.html', {'title': 'New'},
                        headers=basic_auth(*EDITOR))
    assert response.text == 'Saved: New'
    assert b'<h1>New</h1>' in app.get('/folder/doc').body


# -- HEAD

@pytest.mark.parametrize('path', ['/folder/doc', '/folder/doc/index.html',
                                  '/folder/doc/file.txt', '/folder/',
                                  '/++resource++style.css'])
def test_head_sends_the_headers_of_get_and_no_body(app, path):
    get = app.get(path)
    head = app.head(path)
    assert head.body == b''
    assert head.status == get.status
    assert head.headers['Content-Length'] == str(len(get.body))
    for name in ('Content-Type', 'Content-Length', 'X-Content-Type-Warning',
                 'X-View-Name'):
        assert head.headers.get(name) == get.headers.get(name)


# -- plain HTTP: method views

def test_put_is_dispatched_to_the_put_view(app):
    app.put('/folder/doc', b'Put here.', headers=basic_auth(*EDITOR),
            content_type='text/plain', status=204)
    assert b'<p>Put here.</p>' in app.get('/folder/doc').body


def test_put_of_anonymous_users_is_unauthorized(app):
    app.put('/folder/doc', b'Put here.', content_type='text/plain',
            status=401)
    assert b'<p>Put here.</p>' not in app.get('/folder/doc').body


def test_delete_is_dispatched_to_the_delete_view(app):
    app.delete('/folder/doc', headers=basic_auth(*EDITOR), status=204)
    app.get('/folder/doc', status=404)


@pytest.mark.parametrize('method', ['OPTIONS', 'PATCH', 'TRACE'])
def test_method_without_a_view_is_405_allowing_the_method_views(app, method):
    response = app.request('/folder/doc', method=method, body=b'',
                           status=405)
    assert response.headers['Allow'] == 'DELETE, PUT'


def test_method_view_name_is_recorded_for_metrics(app):
    response = app.put('/folder/doc', b'x', headers=basic_auth(*EDITOR),
                       content_type='text/plain', status=204)
    assert response.headers['X-View-Name'] == 'Document:PUT'


# -- XML-RPC

def test_xmlrpc_call_gets_an_xmlrpc_response(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'title')
    assert response.content_type == 'text/xml'
    assert xmlrpc.client.loads(response.body) == (('Hello',), None)
    response = xmlrpc_call(app, '/folder/doc/rpc', 'echo', 1, 'two')
    assert xmlrpc.client.loads(response.body) == (([1, 'two'],), None)


def test_xmlrpc_exception_becomes_a_generic_fault_coded_500(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'fail')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 500
    assert fault.value.faultString == (
        'Internal Server Error: The server could not complete the request. '
        'The error was logged.')


def test_xmlrpc_fault_in_debug_mode_carries_the_text_of_the_error(
        make_testapp):
    app = classic_app(make_testapp, handle_error={'debug': 'true'})
    response = xmlrpc_call(app, '/folder/doc/rpc', 'fail')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 500
    assert fault.value.faultString == 'MyError: no XML-RPC today'


def test_xmlrpc_call_with_too_many_arguments_is_a_fault_coded_400(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'echo', 1, 2, 3)
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 400


def test_xmlrpc_call_missing_a_required_argument_is_a_fault_coded_400(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'echo')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 400


def test_xmlrpc_fault_raised_by_the_view_reaches_the_client(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'refuse')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 42


def test_xmlrpc_call_of_an_unknown_method_is_a_fault(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'nothing')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 404
    assert fault.value.faultString == (
        'Not Found: The object or method called does not exist.')


def test_xmlrpc_private_names_are_not_called(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', '_p_jar')
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    assert fault.value.faultCode == 404
    assert 'Connection' not in fault.value.faultString


# -- metrics: the published view

@pytest.mark.parametrize('path, name', [
    ('/folder/doc', 'Document:index.html'),
    ('/folder/doc/echo.html?text=x', 'Document:echo.html'),
    ('/folder/doc/add.html?a:int=1', 'Document:add.html'),
    ('/folder/', 'Folder:index.html'),
    ('/++resource++style.css', 'File:style.css.GET'),
])
def test_published_view_name_is_recorded_for_metrics(app, path, name):
    assert app.get(path).headers['X-View-Name'] == name


def test_xmlrpc_method_name_is_recorded_for_metrics(app):
    response = xmlrpc_call(app, '/folder/doc/rpc', 'title')
    assert response.headers['X-View-Name'] == 'Document:DocumentRPC.title'


# -- results

def test_file_result_is_streamed_with_its_length(app):
    response = app.get('/folder/doc/file.txt')
    assert response.body == b'Relative links need a base.' * 100
    assert response.headers['Content-Length'] == str(len(response.body))
    assert response.content_type == 'text/plain'


def test_string_result_gets_its_content_length(app):
    response = app.get('/folder/doc/echo.html', {'text': 'h\u00e9'})
    assert response.body == 'h\u00e9 (GET h\u00e9)'.encode('utf-8')
    assert response.headers['Content-Length'] == str(len(response.body))
    assert response.headers['Content-Type'] == 'text/plain;charset=utf-8'


# -- the response helpers, for results views rarely return

def test_direct_result_of_bytes_is_sent_as_one_chunk(clean_zope):
    from zope.publisher.browser import TestRequest
    from zope.publisher.http import DirectResult

    from zope.pipeline.publishing.responses import body_of
    from zope.pipeline.stages.call import set_result

    request = TestRequest()
    set_result({}, request.response, DirectResult(b'direct'))
    assert body_of(request.response) == [b'direct']


def test_view_returning_the_response_keeps_what_it_set(clean_zope):
    from zope.publisher.browser import TestRequest

    from zope.pipeline.publishing.responses import body_of
    from zope.pipeline.stages.call import set_result

    request = TestRequest()
    request.response.setHeader('Content-Type', 'text/plain')
    request.response.setResult('set by the view')
    set_result({}, request.response, request.response)
    assert body_of(request.response) == [b'set by the view']


def test_redirecting_view_returning_an_empty_string_is_text_utf8(clean_zope):
    # the classic publisher's headers for `response.redirect(...); return ''`
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.call import set_result

    request = TestRequest()
    request.response.redirect('http://127.0.0.1/elsewhere')
    set_result({}, request.response, '')
    assert request.response.getStatus() == 302
    assert request.response.getHeader('Content-Type') == \
        'text/plain;charset=utf-8'


def test_empty_string_from_a_view_of_a_binary_type_is_an_empty_body(
        clean_zope):
    from zope.publisher.browser import TestRequest

    from zope.pipeline.publishing.responses import body_of
    from zope.pipeline.stages.call import set_result

    request = TestRequest()
    request.response.setHeader('Content-Type', 'image/png')
    set_result({}, request.response, '')
    assert body_of(request.response) == [b'']
    assert request.response.getHeader('Content-Type') == 'image/png'


def test_view_name_of_an_object_without_context_is_its_class():
    from zope.pipeline.stages.call import view_name

    class Published:
        pass

    assert view_name(Published()) == 'Published'


def test_view_name_of_a_page_template_bound_to_its_view_is_the_view():
    # zope.browserpage's BoundPageTemplate (what a view's `index =
    # ViewPageTemplateFile(...)` gives) has no __name__; zope.formlib and
    # z3c.form publish such templates
    from zope.browserpage.viewpagetemplatefile import BoundPageTemplate

    from zope.pipeline.stages.call import view_name

    class Folder:
        pass

    class ContentsView:
        __name__ = 'contents.html'

        def __init__(self, context):
            self.context = context

    template = BoundPageTemplate(lambda view: 'page', ContentsView(Folder()))
    assert view_name(template) == 'Folder:contents.html'


def test_text_from_a_view_of_a_binary_type_is_still_refused(clean_zope):
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.call import set_result

    request = TestRequest()
    request.response.setHeader('Content-Type', 'image/png')
    with pytest.raises(ValueError):
        set_result({}, request.response, 'not an image')
