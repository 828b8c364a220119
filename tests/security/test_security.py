"""Nobody gets where they don't belong: private attributes, protected
views and namespaces, forwarded headers from strangers, markup echoed in
pages, tracebacks and server paths, cookies."""

import base64
import os
import re

import pytest

from tests.conftest import ROOT
from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.corpus import CORPUS

HERE = os.path.dirname(os.path.abspath(__file__))
SECURITY_ZCML = os.path.join(HERE, 'site.zcml')

ANONYMOUS = {}


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


ADMIN = basic('admin', 'admin')
READER = basic('reader', 'readerpw')

#: Signs that a response shows an object itself (its repr or its data)
#: rather than a page about it.
OBJECT_SIGNS = (b'object at 0x', b'<zope.', b'<class ', b'<function ',
                b'<bound method', b'<Connection', b'ZODB', b"{'",
                b'mappingproxy', b'<module ')

PRIVATE_PATHS = [
    '/_p_jar', '/folder/_p_jar', '/folder/page/_p_jar', '/_p_oid',
    '/__class__', '/folder/__class__', '/__dict__', '/folder/page/__dict__',
    '/folder/page/@@index.html/__class__',
    '/folder/page/@@index.html/__init__/__func__',
    '/folder/page/@@index.html/__call__/__globals__',
    '/folder/page/@@index.html/im_func',
    '/folder/page/@@index.html/func_globals',
    '/folder/page/@@index.html/template/__globals__',
    '/counter/@@increment/__call__/__self__',
    '/folder/__parent__/__parent__', '/__module__', '/__reduce__',
    '/folder/data', '/getSiteManager', '/folder/page/comments',
    '/++attribute++__class__', '/++attribute++_p_jar',
    '/folder/++attribute++__dict__', '/folder/++attribute++_SampleFolder',
    '/folder/page/++attribute++comments', '/folder/page/++attribute++_p_jar',
    '/folder/++attribute++data', '/++etc++site', '/++etc++site/default',
    '/folder/++etc++site', '/++etc++process', '/++annotations++x',
    '/folder/page/++annotations++zope.app.security.AnnotationPermission'
    'PrincipalManager',
]


@pytest.fixture
def site(clean_zope):
    return RawClient(build_site(SECURITY_ZCML, site_settings()))


def get(site, path, headers=None, **environ):
    headers = dict(headers or {})
    headers.update(environ)
    return site.request('GET', path, headers=headers)


@pytest.mark.parametrize('who', ['anonymous', 'admin', 'reader'])
def test_private_attributes_and_protected_namespaces_never_show_the_object(
        site, who):
    headers = {'anonymous': ANONYMOUS, 'admin': ADMIN, 'reader': READER}[who]
    for path in PRIVATE_PATHS:
        response = get(site, path, headers)
        assert response.status_int in (401, 403, 404), path
        assert not [sign for sign in OBJECT_SIGNS
                    if sign in response.body], path


def test_edit_view_asks_anonymous_to_log_in(site):
    response = get(site, '/folder/page/@@edit')
    assert response.status_int == 401
    assert response.header_values('WWW-Authenticate')
    assert b'name="body"' not in response.body


def test_principal_without_the_permission_is_forbidden_the_edit_view(site):
    response = get(site, '/folder/page/@@edit', READER)
    assert response.status_int == 403
    assert b'name="body"' not in response.body


def test_principal_without_the_permission_cannot_post_an_edit(site):
    response = site.request('POST', '/folder/page/@@edit', '',
                            b'title=Owned&body=x', dict(
                                READER, CONTENT_TYPE='application/'
                                'x-www-form-urlencoded'))
    assert response.status_int == 403
    assert b'Owned' not in get(site, '/folder/page').body


def test_administrator_may_open_the_edit_view(site):
    response = get(site, '/folder/page/@@edit', ADMIN)
    assert response.status_int == 200
    assert b'name="title"' in response.body


def links_in(body):
    return re.findall(rb'(?:href|src|action)="([^"]*)"', body)


FORWARDED = [
    {'HTTP_X_FORWARDED_HOST': 'evil.example'},
    {'HTTP_X_FORWARDED_HOST': 'evil.example', 'HTTP_X_FORWARDED_PROTO':
     'https', 'HTTP_X_FORWARDED_PORT': '8443'},
    {'HTTP_FORWARDED': 'host=evil.example;proto=https'},
    {'HTTP_X_VHM_HOST': 'http://evil.example'},
    {'HTTP_X_VHM_HOST': 'http://evil.example', 'HTTP_X_VHM_ROOT': '/folder'},
]


@pytest.mark.parametrize('remote_addr', ['10.1.2.3', '127.0.0.1'])
@pytest.mark.parametrize('forwarded', FORWARDED,
                         ids=['x-forwarded-host', 'x-forwarded-all',
                              'forwarded', 'x-vhm-host', 'x-vhm-root'])
def test_forwarded_headers_from_an_untrusted_address_are_ignored(
        site, forwarded, remote_addr):
    response = get(site, '/', forwarded, REMOTE_ADDR=remote_addr)
    assert response.status_int == 200
    links = links_in(response.body)
    assert links
    assert not [link for link in links if b'evil' in link]
    assert b'http://localhost/folder' in links
    for name in ('Location', 'Content-Location'):
        assert not [value for value in response.header_values(name)
                    if 'evil' in value]


def test_forwarded_host_from_a_trusted_proxy_is_believed(clean_zope):
    """The contrast: the same header from a listed proxy changes links."""
    site = RawClient(build_site(SECURITY_ZCML, site_settings(
        virtual_host={'trusted_proxies': '10.0.0.0/8',
                      'allowed_hosts': 'localhost proxy.example'})))
    response = get(site, '/', {'HTTP_X_FORWARDED_HOST': 'proxy.example'},
                   REMOTE_ADDR='10.1.2.3')
    assert b'http://proxy.example/folder' in links_in(response.body)


XSS = '<script>alert(1)</script>'
XSS_QUOTED = '%3Cscript%3Ealert(1)%3C%2Fscript%3E'
XSS_ATTRIBUTE = '"><script>alert(1)</script>'
XSS_ATTRIBUTE_QUOTED = '%22%3E' + XSS_QUOTED


@pytest.mark.parametrize('method,path,query,body', [
    ('GET', '/' + XSS, '', b''),
    ('GET', '/folder/' + XSS + '/x', '', b''),
    ('GET', '/folder/page/@@' + XSS, '', b''),
    ('GET', '/++' + XSS + '++x', '', b''),
    ('GET', '/++vh++http:' + XSS + ':80/++/', '', b''),
    ('GET', '/@@search', 'q=' + XSS_QUOTED, b''),
    ('GET', '/@@search', 'q=' + XSS_ATTRIBUTE_QUOTED, b''),
    ('GET', '/@@search', 'q:int=' + XSS_QUOTED, b''),
    ('GET', '/@@search', XSS_QUOTED + ':record=1', b''),
    ('GET', '/', ':method=' + XSS_QUOTED, b''),
    ('GET', '/', 'x:int=' + XSS_QUOTED, b''),
    ('POST', '/folder/page/@@add-comment', '',
     b'text=+&author=' + XSS_QUOTED.encode()),
    ('POST', '/folder/page/@@add-comment', '',
     b'text=' + XSS_QUOTED.encode() + b'&author=' +
     XSS_ATTRIBUTE_QUOTED.encode()),
    ('POST', '/folder/page/@@add-comment', '', b'text:int=' +
     XSS_QUOTED.encode()),
    ('POST', '/folder/page/@@edit', '', b'title=' + XSS_QUOTED.encode()),
    ('GET', '/explode', '', b''),
], ids=['root-name', 'folder-name', 'view-name', 'namespace', 'vh-host',
        'search-query', 'search-attribute', 'search-int', 'record-name',
        'method', 'int-value', 'comment-author-400', 'comment-stored',
        'comment-int', 'edit-anonymous', 'exception-text'])
def test_pages_escape_what_they_echo(site, method, path, query, body):
    headers = {'CONTENT_TYPE': 'application/x-www-form-urlencoded'}
    response = site.request(method, path, query, body, headers)
    assert response.status_int < 600
    assert b'<script>' not in response.body
    page = get(site, '/folder/page')
    assert b'<script>' not in page.body


def test_a_stored_comment_with_markup_is_shown_escaped(site):
    site.request('POST', '/folder/page/@@add-comment', '',
                 b'text=' + XSS_QUOTED.encode(),
                 {'CONTENT_TYPE': 'application/x-www-form-urlencoded'})
    page = get(site, '/folder/page')
    assert b'Comments (1)' in page.body
    assert b'&lt;script&gt;alert(1)&lt;/script&gt;' in page.body
    assert b'<script>' not in page.body


SERVER_TRACES = (b'Traceback', b'File "', b'site-packages', b'/work/',
                 ROOT.encode(), HERE.encode(), b'.py', b'RuntimeError',
                 b'line ')


def test_an_unexpected_error_shows_no_traceback_or_path_with_debug_off(
        site):
    response = get(site, '/explode')
    assert response.status_int == 500
    assert not [trace for trace in SERVER_TRACES if trace in response.body]


def test_with_debug_on_the_error_page_does_show_the_traceback(clean_zope):
    """The contrast: the check above can see a traceback."""
    site = RawClient(build_site(SECURITY_ZCML, site_settings(
        handle_error={'debug': 'true'})))
    response = get(site, '/explode')
    assert response.status_int == 500
    assert b'Traceback' in response.body
    assert b'<script>' not in response.body


def test_no_corpus_response_shows_a_traceback_or_server_path(site):
    for case in CORPUS:
        response = site.request(case.method, case.path, case.query,
                                case.body, case.headers,
                                case.content_length, case.terminated)
        assert not [trace for trace in SERVER_TRACES[:5]
                    if trace in response.body], case.id


def test_the_sample_site_sets_no_cookie(site):
    """The sample logs in with HTTP basic auth: no page, form, error or
    login sets a cookie (so no cookie can lack HttpOnly or SameSite)."""
    requests = [('GET', '/', ADMIN, b''), ('GET', '/folder/page', READER,
                                           b''),
                ('GET', '/folder/page/@@edit', ANONYMOUS, b''),
                ('GET', '/folder/page/@@edit', ADMIN, b''),
                ('POST', '/folder/page/@@add-comment', ANONYMOUS,
                 b'text=hello'),
                ('POST', '/counter/@@increment', ANONYMOUS, b''),
                ('GET', '/nothing', ANONYMOUS, b''),
                ('GET', '/explode', ADMIN, b'')]
    cookies = []
    for method, path, headers, body in requests:
        response = site.request(method, path, '', body, dict(
            headers, CONTENT_TYPE='application/x-www-form-urlencoded'))
        assert response.status_int < 600
        cookies.extend(response.header_values('Set-Cookie'))
    assert cookies == []
