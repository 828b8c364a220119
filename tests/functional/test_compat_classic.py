"""The compatibility suite: a classic-style ZTK application (content
classes, browser:page views with page templates, an IPublishTraverse
adapter, an exception view, a local site with a local utility, method
views, an XML-RPC view; tests/fixtures) served by the full pipeline gives
the responses the classic Zope 3 publisher (zope.publisher with
zope.app.publication) gave for the same requests.

The expected values are the classic publisher's: zope.publisher's status
reasons ('200 Ok'), ``text/html;charset=utf-8``
for page templates, Content-Length of the sent body, and for pages reached
through a default view ``\\n<base href="URL" />\\n`` right after ``<head>``,
URL being the page's (``@@index.html`` for containers, whose traverser adds
the view with ``@@``; ``index.html`` for other objects).  One difference
on purpose: no ``X-Powered-By`` header unless ``create_request.powered_by``
(docs/compat.md).
"""

import xmlrpc.client

import pytest

from fixtures.testing import EDITOR
from fixtures.testing import basic_auth
from fixtures.testing import classic_app

DOCUMENT_PAGE = (
    '<html>\n<head>{base}\n<title>Hello</title>\n</head>\n<body>\n'
    '<h1>Hello</h1>\n<p>Relative links need a base.</p>\n'
    '<a href="edit.html">Edit</a>\n</body>\n</html>\n')

FOLDER_PAGE = (
    '<html>\n<head>{base}\n<title>Folder</title>\n</head>\n<body>\n<ul>\n'
    '{items}</ul>\n</body>\n</html>\n')


def base(url):
    return '\n<base href="%s" />\n' % url


def items(*names):
    return ''.join('<li><a href="%s">%s</a></li>\n' % (name, name)
                   for name in names)


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def assert_classic_page(response, body, content_type='text/html;'
                        'charset=utf-8'):
    assert response.status == '200 Ok'
    assert 'X-Powered-By' not in response.headers
    assert response.headers['Content-Type'] == content_type
    assert response.headers['Content-Length'] == str(len(response.body))
    assert response.text == body


def test_root_folder_with_a_trailing_slash(app):
    assert_classic_page(app.get('/'), FOLDER_PAGE.format(
        base='', items=items('folder', 'site')))


def test_folder_default_view_gets_a_base(app):
    assert_classic_page(app.get('/folder'), FOLDER_PAGE.format(
        base=base('http://localhost/folder/@@index.html'),
        items=items('doc', 'streamed')))


def test_document_default_view_gets_a_base(app):
    assert_classic_page(app.get('/folder/doc'), DOCUMENT_PAGE.format(
        base=base('http://localhost/folder/doc/index.html')))


def test_document_view_by_name(app):
    assert_classic_page(app.get('/folder/doc/index.html'),
                        DOCUMENT_PAGE.format(base=''))
    assert_classic_page(app.get('/folder/doc/@@index.html'),
                        DOCUMENT_PAGE.format(base=''))


def test_page_with_form_arguments(app):
    assert_classic_page(app.get('/folder/doc/add.html?a:int=40&b:int=2'),
                        '40 + 2 = 42', 'text/plain;charset=utf-8')


def test_relative_redirect_of_a_view_is_made_absolute_from_the_base(app):
    response = app.post('/folder/doc', {'goto.html:method': ''},
                        status=302)
    assert response.headers['Location'] == \
        'http://localhost/folder/doc/index.html'


def test_not_found(app):
    response = app.get('/folder/nothing', status=404)
    assert response.headers['Content-Type'].startswith('text/html')


def test_protected_page_challenges_anonymous_users(app):
    response = app.get('/folder/doc/edit.html?title=x', status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'
    assert b'<h1>x</h1>' not in app.get('/folder/doc').body


def test_protected_page_works_for_its_editor(app):
    response = app.post('/folder/doc/edit.html', {'title': 'Changed'},
                        headers=basic_auth(*EDITOR))
    assert_classic_page(response, 'Saved: Changed',
                        'text/plain;charset=utf-8')
    assert b'<h1>Changed</h1>' in app.get('/folder/doc').body


def test_exception_view_renders_the_application_error(app):
    response = app.get('/folder/doc/fail.html', status=409)
    assert response.headers['Content-Type'] == 'text/html;charset=utf-8'
    assert b'<p>The application said no.</p>' in response.body
    assert b'Traceback' not in response.body


def test_local_utility_serves_below_its_site(app):
    assert app.get('/site/page/greeting.html').text == \
        'Hello from the local site'
    assert app.get('/folder/doc/greeting.html').text == \
        'Hello from the global greeter'


def test_publish_traverse_adapter(app):
    response = app.get('/folder/doc/virtualchild')
    assert response.text == (
        '<html>\n<head>%s\n<title>Virtual child</title>\n</head>\n<body>\n'
        '<p>Virtual child virtualchild</p>\n</body>\n</html>\n'
        % base('http://localhost/folder/doc/virtualchild/index.html'))


def test_xmlrpc_method(app):
    response = app.post('/folder/doc/rpc', xmlrpc.client.dumps((), 'title'),
                        content_type='text/xml')
    assert response.status == '200 Ok'
    assert response.headers['Content-Type'] == 'text/xml;charset=utf-8'
    assert response.body == xmlrpc.client.dumps(
        ('Hello',), methodresponse=True, allow_none=True).encode()


def test_xmlrpc_fault(app):
    """A deliberate difference: the classic publisher answered
    ``Fault(-1, 'Unexpected Zope exception: MyError: ...')``, whose text
    can hold object reprs and oids; the fault is coded by status and
    generic unless ``handle_error.debug`` (docs/security.md)."""
    response = app.post('/folder/doc/rpc', xmlrpc.client.dumps((), 'fail'),
                        content_type='text/xml')
    assert response.status == '200 Ok'
    assert response.body == xmlrpc.client.dumps(xmlrpc.client.Fault(
        500, 'Internal Server Error: The server could not complete the '
        'request. The error was logged.'), methodresponse=True).encode()


def test_put_and_delete_method_views(app):
    auth = basic_auth(*EDITOR)
    app.put('/folder/doc', b'New body.', headers=auth,
            content_type='text/plain', status=204)
    assert b'<p>New body.</p>' in app.get('/folder/doc').body
    app.delete('/folder/doc', headers=auth, status=204)
    app.get('/folder/doc', status=404)


def test_method_not_allowed_lists_the_method_views(app):
    response = app.request('/folder/doc', method='OPTIONS', status=405)
    assert response.headers['Allow'] == 'DELETE, PUT'


def test_resource(app):
    response = app.get('/@@/style.css')
    assert response.headers['Content-Type'] == 'text/css'
    assert response.body == b'body { color: black; }\n'
