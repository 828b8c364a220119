"""The traverse stage: from the root to the published object, through the
classic application (tests/fixtures/classic.zcml)."""

import xmlrpc.client

import pytest

from fixtures.testing import EDITOR
from fixtures.testing import basic_auth
from fixtures.testing import classic_app


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def reached(response):
    return response.headers['X-Reached'].split()


# -- the path

def test_dot_dot_inside_the_path_goes_back_one_name(app):
    response = app.get('/folder/../folder/./doc')
    assert reached(response) == ['(root)', 'folder', 'doc', 'index.html']
    assert b'<h1>Hello</h1>' in response.body


@pytest.mark.parametrize('path', ['/../folder', '/folder/../../folder/doc',
                                  '/..'])
def test_dot_dot_beyond_the_root_is_a_bad_request(app, path):
    response = app.get(path, status=400)
    assert b'Hello' not in response.body
    assert b'Traceback' not in response.body


def test_unknown_name_is_not_found(app):
    app.get('/folder/nothing', status=404)


# -- views and default views

def test_default_view_of_a_document_is_its_index_html(app):
    response = app.get('/folder/doc')
    assert reached(response) == ['(root)', 'folder', 'doc', 'index.html']
    assert response.headers['X-View-Name'] == 'Document:index.html'


def test_default_view_of_a_folder_is_its_index_html(app):
    response = app.get('/folder/')
    assert reached(response) == ['(root)', 'folder', 'index.html']
    assert b'<a href="doc">doc</a>' in response.body


def test_at_at_names_a_view_and_no_default_view_is_added(app):
    response = app.get('/folder/doc/@@index.html')
    assert reached(response) == ['(root)', 'folder', 'doc', 'index.html']
    assert b'<base' not in response.body


def test_view_namespace_names_a_view(app):
    response = app.get('/folder/doc/++view++echo.html', {'text': 'hi'})
    assert response.text == 'hi (GET hi)'


def test_unknown_view_is_not_found(app):
    app.get('/folder/doc/@@nothing.html', status=404)
    app.get('/folder/doc/++view++nothing.html', status=404)


def test_unknown_namespace_is_not_found(app):
    app.get('/folder/++nothing++doc', status=404)


# -- zope.traversing namespaces

def test_resource_namespace_serves_a_browser_resource(app):
    response = app.get('/++resource++style.css')
    assert response.content_type == 'text/css'
    assert response.body == b'body { color: black; }\n'
    app.get('/++resource++nothing.css', status=404)


def test_skin_namespace_applies_the_skin_for_the_rest_of_the_path(app):
    response = app.get('/++skin++classic/folder/doc/skinned.html')
    assert response.text == 'Only with the classic skin'
    app.get('/folder/doc/skinned.html', status=404)
    app.get('/++skin++nothing/folder/doc', status=404)


def test_lang_namespace_sets_the_language_and_stays_in_urls(app):
    response = app.get('/++lang++de/folder/doc/lang.html',
                       headers={'Accept-Language': 'en'})
    assert response.text == 'de http://localhost/++lang++de/folder/doc/' \
                            'lang.html'


def test_attribute_namespace_reaches_an_allowed_attribute(app):
    response = app.get('/folder/doc/++attribute++attachment')
    assert reached(response)[-2:] == ['attachment', 'index.html']
    assert b'Attachment public.txt' in response.body


def test_attribute_namespace_refuses_a_protected_attribute(app):
    response = app.get('/folder/doc/++attribute++secret_attachment',
                       status=401)
    assert b'secret.txt' not in response.body
    response = app.get('/folder/doc/++attribute++secret_attachment',
                       headers=basic_auth(*EDITOR))
    assert b'Attachment secret.txt' in response.body


def test_item_namespace_reaches_a_container_item(app):
    response = app.get('/++item++folder/++item++doc')
    assert reached(response) == ['(root)', 'folder', 'doc', 'index.html']
    app.get('/++item++nothing', status=404)


def test_etc_site_namespace_needs_site_management(app):
    response = app.get('/++etc++site', status=401)
    assert response.headers['WWW-Authenticate'] == 'basic realm="Zope"'
    app.get('/++etc++site/default', status=401)
    response = app.get('/++etc++site', headers=basic_auth(*EDITOR))
    assert b'Site management' in response.body


def test_vh_namespace_makes_the_urls_of_the_virtual_host(make_testapp):
    app = classic_app(make_testapp, virtual_host={
        'trusted_proxies': '127.0.0.1',
        'allowed_hosts': 'localhost example.com'})
    response = app.get('/++vh++https:example.com:443/++/folder/doc/'
                       'lang.html')
    assert response.text.endswith(' https://example.com/folder/doc/lang.html')
    response = app.get('/++vh++https:example.com:8443/site/++/folder/doc/'
                       'lang.html')
    assert response.text.endswith(
        ' https://example.com:8443/site/folder/doc/lang.html')


# -- IPublishTraverse adapters

def test_publish_traverse_adapter_reaches_a_virtual_child(app):
    response = app.get('/folder/doc/virtualchild')
    assert reached(response)[-2:] == ['virtualchild', 'index.html']
    assert b'Virtual child virtualchild' in response.body


def test_publish_traverse_adapter_still_leads_to_views(app):
    response = app.get('/folder/doc/echo.html', {'text': 'hi'})
    assert response.text == 'hi (GET hi)'
    app.get('/folder/doc/nothing', status=404)


# -- what traversal never reaches

@pytest.mark.parametrize('path', [
    '/folder/doc/_p_jar', '/folder/doc/__class__', '/folder/doc/__dict__',
    '/folder/doc/++attribute++_p_jar', '/folder/doc/++attribute++__class__',
    '/folder/doc/++attribute++__dict__', '/folder/doc/++attribute++_p_oid',
    '/folder/doc/++attribute++__parent__', '/folder/++item++_p_jar',
    '/folder/doc/@@_p_jar',
])
def test_private_attributes_are_never_published(app, path):
    response = app.get(path, expect_errors=True,
                       headers=basic_auth(*EDITOR))
    assert response.status_int in (401, 403, 404)
    for leak in (b'Connection', b'<class', b'_p_', b'Document object'):
        assert leak not in response.body


# -- hooks and proxies

def test_traversal_hooks_run_once_for_each_object_reached(app):
    # zope.publisher offers the last object again when it adds the default
    # view, and for :method; the hooks still run once per object.
    assert reached(app.get('/folder/doc')) == [
        '(root)', 'folder', 'doc', 'index.html']
    assert reached(app.get('/')) == ['(root)', 'index.html']
    assert reached(app.post('/folder/doc', {'echo.html:method': '',
                                            'text': 'x'})) == [
        '(root)', 'folder', 'doc', 'echo.html']
    assert reached(app.get('/++skin++classic/folder/doc/skinned.html')) == [
        '(root)', 'folder', 'doc', 'skinned.html']


def test_every_object_reached_is_security_proxied(app):
    for path in ('/folder/doc', '/++resource++style.css',
                 '/folder/doc/virtualchild',
                 '/folder/doc/++attribute++attachment'):
        proxied = app.get(path).headers['X-Proxied'].split()
        assert proxied and set(proxied) == {'true'}, path


def test_names_that_look_like_namespaces_but_are_not_are_not_found(app):
    app.get('/folder/doc/+nothing', status=404)
    app.get('/folder/doc/@nothing', status=404)
    app.get('/folder/doc/virtualchild/nothing', status=404)


def test_method_suffix_dot_publishes_the_object_itself(app):
    response = app.post('/folder/doc', {'.:method': ''})
    assert b'<h1>Hello</h1>' in response.body


# -- the traversal policy without any publishing traverser

def test_without_publishing_traversers_names_are_not_found(clean_zope):
    from zope.publisher.browser import TestRequest
    from zope.publisher.interfaces import NotFound

    from zope.pipeline.publishing.traversers import Traversal

    environ = {}
    traversal = Traversal([], environ, 'context')
    request = TestRequest()
    ob = object()
    with pytest.raises(NotFound):
        traversal.traverseName(request, ob, 'name')
    assert traversal.getDefaultTraversal(request, ob) == (ob, None)
    assert traversal.default_names == []


# -- ++attribute++ over XML-RPC

def xmlrpc_result(app, path, method):
    response = app.post(path, xmlrpc.client.dumps((), method),
                        content_type='text/xml')
    try:
        return xmlrpc.client.loads(response.body)[0][0]
    except xmlrpc.client.Fault as fault:
        return fault.faultCode


def test_xmlrpc_attribute_namespace_reaches_the_methods_of_an_xmlrpc_view(
        app):
    assert xmlrpc_result(app, '/folder/doc/rpc', '++attribute++title') == \
        'Hello'


def test_xmlrpc_attribute_namespace_does_not_reach_content_by_default(app):
    assert xmlrpc_result(app, '/folder/doc', '++attribute++summary') == 404


@pytest.mark.parametrize('allowed', ['summary', 'title summary', '*'])
def test_xmlrpc_attributes_setting_opens_the_names_it_lists(
        make_testapp, allowed):
    app = classic_app(make_testapp,
                      traverse={'xmlrpc_attributes': allowed})
    assert xmlrpc_result(app, '/folder/doc', '++attribute++summary') == \
        'Hello: Relative links need'
    assert xmlrpc_result(app, '/folder/doc', '++attribute++_p_jar') == 404


def test_xmlrpc_attributes_setting_opens_only_the_names_it_lists(
        make_testapp):
    app = classic_app(make_testapp, traverse={'xmlrpc_attributes': 'title'})
    assert xmlrpc_result(app, '/folder/doc', '++attribute++summary') == 404
