"""XML-RPC: what the forms refuse is refused over XML-RPC too, and faults
do not show the server's objects."""

import re
import xmlrpc.client

import pytest

from tests.security.conftest import RawClient
from tests.security.conftest import build_site
from tests.security.conftest import site_settings
from tests.security.test_security import OBJECT_SIGNS
from tests.security.work import work_of


@pytest.fixture
def site(clean_zope):
    # a body large enough for the 200,000 characters of the attack
    return RawClient(build_site(settings=site_settings(
        retry={'max_body': '1000000'})))


def call(site, path, method, *params):
    body = xmlrpc.client.dumps(params, method).encode('utf-8')
    return site.request('POST', path, '', body, {'CONTENT_TYPE': 'text/xml'})


def fault_of(response):
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(response.body)
    return caught.value


def comment_count(site):
    page = site.request('GET', '/folder/page').text
    return re.search(r'Comments \((\d+)\)', page).group(1), page


def test_anonymous_xmlrpc_attribute_call_cannot_store_a_huge_comment(site):
    before, _ = comment_count(site)
    response = call(site, '/folder/page', '++attribute++add_comment',
                    {'evil': 'struct'}, 'x' * 200000)
    assert response.status_int < 500
    fault_of(response)
    after, page = comment_count(site)
    assert after == before
    assert 'xxxxxxxxxx' not in page
    assert 'evil' not in page


def test_anonymous_xmlrpc_attribute_call_cannot_store_a_plain_comment(site):
    response = call(site, '/folder/page', '++attribute++add_comment',
                    'mallory', 'Stored behind the form\'s back')
    assert fault_of(response).faultCode == 404
    assert 'behind the form' not in comment_count(site)[1]


@pytest.mark.parametrize('method', [
    'comments', '++attribute++comments', '++attribute++_p_jar',
    'no_such_method', '__class__', 'item-01.title'])
def test_xmlrpc_fault_does_not_show_object_reprs_or_oids(site, method):
    fault = fault_of(call(site, '/folder/page', method))
    text = fault.faultString.encode('utf-8')
    assert not [sign for sign in OBJECT_SIGNS + (b'oid', b'0x')
                if sign in text], text
    assert fault.faultCode == 404


def test_xmlrpc_attribute_opened_by_the_setting_still_refuses_a_huge_comment(
        clean_zope):
    site = RawClient(build_site(settings=site_settings(
        retry={'max_body': '1000000'},
        traverse={'xmlrpc_attributes': 'add_comment'})))
    before, _ = comment_count(site)
    fault = fault_of(call(site, '/folder/page', '++attribute++add_comment',
                          {'evil': 'struct'}, 'x' * 200000))
    assert fault.faultCode == 400
    assert 'A comment needs a text of at most 2000' in fault.faultString
    assert comment_count(site)[0] == before
    response = call(site, '/folder/page', '++attribute++add_comment',
                    'alice', 'A fair comment')
    assert xmlrpc.client.loads(response.body)[0][0]
    assert 'A fair comment' in comment_count(site)[1]


def test_private_attribute_names_cannot_be_opened_to_xmlrpc(clean_zope):
    from zope.configuration.exceptions import ConfigurationError
    with pytest.raises(ConfigurationError) as caught:
        build_site(settings=site_settings(
            traverse={'xmlrpc_attributes': 'title _p_jar'}))
    assert str(caught.value) == ('traverse.xmlrpc_attributes: private '
                                 'attributes are never published: _p_jar')


def call_with_newlines(newlines):
    return (b'<?xml version="1.0"?>\n<methodCall>' + b'\n' * newlines +
            b'<methodName>no_such_method</methodName></methodCall>')


def test_xmlrpc_body_over_its_own_limit_is_refused_before_it_is_parsed(
        clean_zope):
    site = RawClient(build_site(settings=site_settings(
        process_inputs={'xmlrpc_max_body': '1000'})))
    body = call_with_newlines(2000)
    assert len(body) < 100000  # within retry.max_body
    response, work = work_of(site, 'POST', '/folder/page', body=body,
                             headers={'CONTENT_TYPE': 'text/xml'})
    assert fault_of(response).faultCode == 413
    assert work.calls['loads'] == 0
    response = site.request('POST', '/folder/page',
                            body=call_with_newlines(500),
                            headers={'CONTENT_TYPE': 'text/xml'})
    assert fault_of(response).faultCode == 404  # read, then not found
