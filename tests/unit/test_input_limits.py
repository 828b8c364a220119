"""What bounds a request's input before zope.publisher reads it: the
settings of process_inputs (typed, errors naming the ini key), the checks
of query strings and field names, the XML-RPC body read once within its
limit, the charsets of Accept-Charset a form is decoded with, the
languages a locale is looked for, and cookies unquoted in one pass."""

import io
import os
import xml.parsers.expat
import xmlrpc.client

import pytest
from zope.component import provideAdapter
from zope.configuration.exceptions import ConfigurationError
from zope.i18n.interfaces import IUserPreferredCharsets
from zope.publisher.http import HTTPCharsets
from zope.publisher.http import HTTPRequest as StockHTTPRequest
from zope.publisher.interfaces.http import IHTTPRequest
from zope.publisher.xmlrpc import XMLRPCRequest as StockXMLRPCRequest
from zope.schema import getFieldNames

from zope.pipeline.engine import factories
from zope.pipeline.engine.settings import convert
from zope.pipeline.http.cookies import parse_cookies
from zope.pipeline.http.errors import BadInput
from zope.pipeline.http.errors import PayloadTooLarge
from zope.pipeline.stages.process_inputs import DEFAULT_LIMITS
from zope.pipeline.stages.process_inputs import FormLimits
from zope.pipeline.stages.process_inputs import IProcessInputsSettings
from zope.pipeline.stages.process_inputs import ProcessInputsStage
from zope.pipeline.stages.process_inputs import check_field_names
from zope.pipeline.stages.process_inputs import check_query
from zope.pipeline.stages.process_inputs import process_xmlrpc

from tests.conftest import ROOT
from tests.security.conftest import build_site
from tests.security.conftest import site_settings

DEFAULTS = {'max_query_fields': 400, 'max_field_markers': 8,
            'max_default_fields': 16, 'xmlrpc_max_body': 1 << 20}


# -- settings


def test_process_inputs_settings_default_to_the_documented_bounds():
    assert convert(ProcessInputsStage, 'process_inputs', {}) == DEFAULTS
    assert (DEFAULT_LIMITS.query_fields, DEFAULT_LIMITS.field_markers,
            DEFAULT_LIMITS.default_fields) == (400, 8, 16)


def test_process_inputs_settings_are_read_as_integers():
    assert convert(ProcessInputsStage, 'process_inputs', {
        'max_query_fields': ' 50 ', 'max_field_markers': '3',
        'max_default_fields': '0', 'xmlrpc_max_body': '0'}) == {
            'max_query_fields': 50, 'max_field_markers': 3,
            'max_default_fields': 0, 'xmlrpc_max_body': 0}


@pytest.mark.parametrize('key, value, reason', [
    ('max_query_fields', 'many', "invalid literal for int() with base 10: "
     "'many'."),
    ('max_query_fields', '0', 'Value is too small.'),
    ('max_field_markers', '0', 'Value is too small.'),
    ('max_default_fields', '-1', 'Value is too small.'),
    ('xmlrpc_max_body', '1MB', "invalid literal for int() with base 10: "
     "'1MB'."),
])
def test_invalid_process_inputs_setting_names_the_ini_key(key, value,
                                                          reason):
    with pytest.raises(ConfigurationError) as caught:
        convert(ProcessInputsStage, 'process_inputs', {key: value},
                'site.ini')
    message = str(caught.value)
    assert message.startswith("Invalid value %r for 'process_inputs.%s' "
                              "in site.ini (" % (value, key))
    assert message.endswith(reason)


def test_the_stage_of_each_chain_gets_the_settings_of_the_ini(clean_zope):
    publisher = build_site(settings=site_settings(process_inputs={
        'max_query_fields': '10', 'max_field_markers': '2',
        'max_default_fields': '1', 'xmlrpc_max_body': '500'}))
    for request_type in ('browser', 'xmlrpc'):
        _, spec = publisher.request_types[request_type]
        stage, = [stage.app for stage in publisher.chain_for(spec).stages
                  if stage.name == 'process_inputs']
        assert (stage.limits.query_fields, stage.limits.field_markers,
                stage.limits.default_fields, stage.xmlrpc_max_body) == (
                    10, 2, 1, 500)


# -- query strings and field names

SMALL = FormLimits(query_fields=3, field_markers=2, default_fields=1)


def test_query_string_with_as_many_fields_as_allowed_passes():
    check_query('a=1&b=2&c=3', SMALL)


@pytest.mark.parametrize('query', ['a=1&b=2&c=3&d=4', '&&&'])
def test_query_string_with_more_fields_is_refused(query):
    with pytest.raises(BadInput) as caught:
        check_query(query, SMALL)
    assert str(caught.value) == 'The query string has more than 3 fields.'


def test_escaped_markers_of_a_query_string_are_counted():
    check_query('a%3Aint%3Alist=1', SMALL)
    with pytest.raises(BadInput) as caught:
        check_query('a%3Aint%3Alist%3Arequired=1', SMALL)
    assert str(caught.value) == ('A form field name has more than 2 markers '
                                 '(:int, :list...).')


@pytest.mark.parametrize('names', [
    ['a:default', 'b:records'],
    ['a:default_method', 'b:default_action', 'c:default'],
    ['a.b:records', 'tuple', 'default', 'x:list'],
])
def test_fields_applied_to_every_record_within_the_limit_pass(names):
    check_field_names(names, SMALL)


@pytest.mark.parametrize('names', [
    ['a:default', 'b:default'],
    ['a.b:default:records', 'a.c:tuple:records'],
])
def test_more_fields_applied_to_every_record_are_refused(names):
    with pytest.raises(BadInput) as caught:
        check_field_names(names, SMALL)
    assert str(caught.value) == ('The form has more than 1 fields marked '
                                 ':default or :tuple.')


# -- XML-RPC


def xmlrpc_request(body, request_class=factories.XMLRPCRequest, **environ):
    values = {'REQUEST_METHOD': 'POST', 'CONTENT_TYPE': 'text/xml',
              'SERVER_NAME': 'localhost', 'SERVER_PORT': '80'}
    values.update(environ)
    return request_class(io.BytesIO(body), values)


@pytest.mark.parametrize('params, method', [
    ((), 'title'),
    ((1, 'two', [3.0, {'four': True}]), 'folder.page.edit'),
    (('\n' * 50,), 'a.b'),
])
def test_xmlrpc_call_is_read_as_zope_publisher_reads_it(params, method):
    body = xmlrpc.client.dumps(params, method).encode('utf-8')
    ours, stock = xmlrpc_request(body), xmlrpc_request(
        body, StockXMLRPCRequest)
    ours.processInputs()
    stock.processInputs()
    assert ours._args == stock._args == params
    assert ours._path_suffix == stock._path_suffix


def test_malformed_xmlrpc_call_fails_as_with_zope_publisher():
    for request_class in (factories.XMLRPCRequest, StockXMLRPCRequest):
        with pytest.raises(xml.parsers.expat.ExpatError):
            xmlrpc_request(b'<not xml', request_class).processInputs()


def test_xmlrpc_body_longer_than_the_limit_is_refused_unparsed():
    body = xmlrpc.client.dumps(('x' * 100,), 'title').encode()
    request = xmlrpc_request(body)
    with pytest.raises(PayloadTooLarge) as caught:
        factories.read_xmlrpc_call(request, len(body) - 1)
    assert str(caught.value) == ('The XML-RPC call is larger than %d bytes.'
                                 % (len(body) - 1))
    assert request._args == ()
    request = xmlrpc_request(body)
    factories.read_xmlrpc_call(request, len(body))
    assert request._args == ('x' * 100,)


@pytest.mark.parametrize('request_class', [factories.XMLRPCRequest,
                                           StockXMLRPCRequest])
def test_xmlrpc_body_is_read_once_within_the_stage_limit(request_class):
    """Without a Content-Length (a stage built by hand), the limit still
    holds: zope.publisher's class is read the linear way too."""
    body = xmlrpc.client.dumps(('x' * 100,), 'title').encode()
    with pytest.raises(PayloadTooLarge):
        process_xmlrpc({}, xmlrpc_request(body, request_class), 100)
    request = xmlrpc_request(body, request_class)
    process_xmlrpc({}, request, 1000)
    assert request._args == ('x' * 100,)


class OwnReader(StockXMLRPCRequest):
    """An application's XML-RPC request that reads its body itself."""

    def processInputs(self):
        self._args = ('own',)


def test_xmlrpc_request_reading_its_own_body_is_bounded_by_its_length():
    body = b'<anything/>'
    with pytest.raises(PayloadTooLarge):
        process_xmlrpc({'CONTENT_LENGTH': '101'},
                       xmlrpc_request(body, OwnReader), 100)
    request = xmlrpc_request(body, OwnReader)
    process_xmlrpc({'CONTENT_LENGTH': '100'}, request, 100)
    assert request._args == ('own',)


# -- Accept-Charset


@pytest.mark.parametrize('names, known', [
    (['utf-8', 'utf-8', 'iso-8859-1'], ['utf-8', 'iso-8859-1']),
    (['no-such-charset', 'hex', 'rot13', 'utf-16'], ['utf-16']),
    (['latin-1', 'ascii', 'cp1252', 'koi8-r', 'utf-16', 'utf-32',
      'shift_jis', 'euc-jp', 'big5', 'gb2312'],
     ['latin-1', 'ascii', 'cp1252', 'koi8-r', 'utf-16', 'utf-32',
      'shift_jis', 'euc-jp']),
    (['x-unknown-%d' % number for number in range(40)] + ['utf-8'], []),
])
def test_a_form_is_decoded_with_a_few_distinct_known_charsets(names, known):
    assert factories.known_charsets(names) == known


def test_browser_request_decodes_with_the_known_charsets_in_order(
        clean_zope):
    provideAdapter(HTTPCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    request = factories.BrowserRequest(io.BytesIO(b''), {
        'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
        'SERVER_PORT': '80', 'QUERY_STRING': '',
        'HTTP_ACCEPT_CHARSET': 'no-such, us-ascii, us-ascii;q=0.5, *'})
    assert request._decode(b'caf\xe9') == b'caf\xe9'
    assert request.charsets == ['utf-8', 'us-ascii']
    assert request._decode(b'cafe') == 'cafe'


def test_a_client_listing_no_known_charset_gets_its_form_read_as_utf8(
        clean_zope):
    provideAdapter(HTTPCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    request = factories.BrowserRequest(io.BytesIO(b''), {
        'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
        'SERVER_PORT': '80', 'QUERY_STRING': '',
        'HTTP_ACCEPT_CHARSET': ', '.join(
            'x-unknown-%d' % number for number in range(40))})
    assert request._decode('caf\u00e9'.encode('utf-8')) == 'caf\u00e9'
    assert request.charsets == ['utf-8']


# -- Accept-Language


def locale_id(locale):
    return (locale.id.language, locale.id.territory, locale.id.variant)


@pytest.mark.parametrize('languages, expected', [
    (['de-ch', 'en'], ('de', 'CH', None)),
    (['xx', 'xx-yy', 'fr'], ('fr', None, None)),
    (['../../etc/passwd', '/tmp/x', 'en_us', 'it'], ('it', None, None)),
    (['x%d' % number for number in range(8)] + ['en'], (None, None, None)),
    (['xx'] * 20 + ['en'], ('en', None, None)),
    ([], (None, None, None)),
])
def test_the_locale_is_looked_for_among_a_few_language_tags(languages,
                                                             expected):
    assert locale_id(factories.locale_for(languages)) == expected


def test_a_request_without_a_languages_adapter_has_no_locale(clean_zope):
    request = factories.BrowserRequest(io.BytesIO(b''), {
        'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
        'SERVER_PORT': '80', 'HTTP_ACCEPT_LANGUAGE': 'de'})
    assert request.locale is None


# -- Cookie


@pytest.mark.parametrize('header', [
    'a=1; b="two words"; c="\\"quoted\\""; d=four',
    'name="caf\\303\\251"; other=x',
    'a="\\\\\\012\\q"',
    'a="unterminated',
    'no-value; x=1',
    'a=1; $foo=1',
    'caf\xc3\xa9=\xc3\xa9t\xc3\xa9',
    '',
])
def test_cookies_are_parsed_as_zope_publisher_parses_them(header):
    environ = {'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'HTTP_COOKIE': header}
    ours = factories.HTTPRequest(io.BytesIO(b''), environ)
    stock = StockHTTPRequest(io.BytesIO(b''), environ)
    assert ours._cookies == stock._cookies
    assert parse_cookies(header) == stock._cookies


def test_a_cookie_header_that_cannot_be_parsed_gives_no_cookies(caplog):
    assert parse_cookies('a=1; $foo=1') == {}
    assert "Invalid attribute 'foo'" in caplog.text


# -- documentation


@pytest.mark.parametrize('page', ['configuration.md', 'security.md'])
def test_every_input_bound_is_documented(page):
    with open(os.path.join(ROOT, 'docs', page)) as stream:
        text = stream.read()
    assert [name for name in getFieldNames(IProcessInputsSettings)
            if '`process_inputs.%s`' % name not in text] == []


# -- a stage built by hand


def test_a_stage_built_by_hand_bounds_each_request_type(clean_zope):
    provideAdapter(HTTPCharsets, (IHTTPRequest,), IUserPreferredCharsets)
    stage = ProcessInputsStage(lambda environ, start_response: [b'ok'],
                               max_query_fields=2, xmlrpc_max_body=100)
    assert stage.process == stage.any_input
    body = xmlrpc.client.dumps(('x' * 100,), 'title').encode()
    xmlrpc_environ = {'zope.request': xmlrpc_request(body)}
    with pytest.raises(PayloadTooLarge):
        stage(xmlrpc_environ, None)
    environ = {'REQUEST_METHOD': 'GET', 'SERVER_NAME': 'localhost',
               'SERVER_PORT': '80', 'QUERY_STRING': 'a=1&b=2&c=3',
               'wsgi.input': io.BytesIO(b'')}
    environ['zope.request'] = factories.BrowserRequest(
        environ['wsgi.input'], environ)
    with pytest.raises(BadInput):
        stage(environ, None)
    environ['QUERY_STRING'] = 'a=1&b:int=2'
    environ['zope.request'] = factories.BrowserRequest(
        environ['wsgi.input'], environ)
    assert stage(environ, None) == [b'ok']
    assert environ['zope.request'].form == {'a': '1', 'b': 2}
