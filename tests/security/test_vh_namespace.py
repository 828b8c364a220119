"""The ``++vh++`` gate: the ``vh`` namespace sets the application URL every
link is built from, so it is applied only for the directives virtual_host
checked in the path (from a trusted proxy, on an allowed host).  Names a
request adds after the path (a ``:method`` form field, an XML-RPC method
name) cannot smuggle one in; a namespace that cannot apply its name is a
bad request, not a server error."""

import logging
import xmlrpc.client

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_security import SECURITY_ZCML

EVIL_METHOD_FIELD = '%2B%2Bvh%2B%2Bhttp:evil.com:80:method=1'


def security_site(**settings):
    return RawClient(build_site(SECURITY_ZCML, site_settings(**settings)))


@pytest.fixture
def site(clean_zope):
    return security_site()


@pytest.fixture
def behind_proxy(clean_zope):
    return security_site(virtual_host={
        'trusted_proxies': '127.0.0.1',
        'allowed_hosts': 'localhost www.example.com'})


def call(site, path, method, headers=None):
    body = xmlrpc.client.dumps((), method).encode('utf-8')
    return site.request('POST', path, '', body,
                        dict(headers or {}, CONTENT_TYPE='text/xml'))


def application_url(response):
    return xmlrpc.client.loads(response.body)[0][0]


def test_vh_namespace_in_method_field_is_refused(site, caplog):
    with caplog.at_level(logging.ERROR):
        response = site.request('GET', '/folder', query=EVIL_METHOD_FIELD)
    assert response.status_int == 400
    assert 'evil.com' not in response.text
    assert 'Traceback' not in caplog.text


def test_vh_namespace_in_method_field_is_refused_behind_a_trusted_proxy(
        behind_proxy):
    response = behind_proxy.request('GET', '/folder',
                                    query=EVIL_METHOD_FIELD)
    assert response.status_int == 400


def test_vh_namespace_in_xmlrpc_method_name_cannot_change_application_url(
        site, caplog):
    assert application_url(call(site, '/folder', 'whereami.application_url')
                           ) == 'http://localhost'
    with caplog.at_level(logging.ERROR):
        response = call(site, '/',
                        '++vh++http:evil:80.++.folder.whereami.'
                        'application_url')
    assert b'evil' not in response.body
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    assert caught.value.faultCode == 400
    assert 'Traceback' not in caplog.text


def test_vh_directive_a_trusted_proxy_put_in_the_path_still_applies(
        behind_proxy):
    response = call(behind_proxy, '/++vh++https:www.example.com:443/++'
                    '/folder', 'whereami.application_url')
    assert application_url(response) == 'https://www.example.com'


def test_vh_namespace_beyond_the_checked_directives_is_refused(
        behind_proxy):
    response = call(behind_proxy, '/++vh++https:www.example.com:443/++',
                    '++vh++http:evil:80.++.folder.whereami.'
                    'application_url')
    assert b'evil' not in response.body
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    assert caught.value.faultCode == 400


@pytest.mark.parametrize('path, query', [
    ('/folder/++skin++anything', ''),
    ('/folder/++lang++de', ''),
    ('/folder', '%2B%2Bskin%2B%2Bx:method=1'),
])
def test_namespace_that_cannot_apply_its_name_is_a_bad_request(
        site, caplog, path, query):
    with caplog.at_level(logging.ERROR):
        response = site.request('GET', path, query=query)
    assert response.status_int == 400
    assert 'Traceback' not in caplog.text


def test_vh_namespace_in_method_field_is_refused_under_a_site_root(
        clean_zope):
    from zope.pipeline.serving.startup import SiteAtRoot
    site = RawClient(SiteAtRoot(build_site(SECURITY_ZCML), '/folder'))
    assert site.request('GET', '/page').status_int == 200
    response = site.request('GET', '/page', query=EVIL_METHOD_FIELD)
    assert response.status_int == 400
