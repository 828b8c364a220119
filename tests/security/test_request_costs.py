"""Cheap requests stay cheap: what a request costs grows at most linearly
with what the client sent, and is bounded before the work starts.

Each attack of a security review is replayed against the sample site and
its work counted (the calls it makes, ``tests.security.work``), never
timed: it is refused, or costs about what the same request without the
attack costs.
"""

import os
import shutil
import xmlrpc.client

import pytest

from tests.security.work import work_of

PAGE = '/folder/page'
XML = {'CONTENT_TYPE': 'text/xml'}
FORM = {'CONTENT_TYPE': 'application/x-www-form-urlencoded'}
#: Calls an attack may make beyond the ordinary request it is compared
#: with (the ordinary requests make about 2,000).
MARGIN = 300


@pytest.fixture(scope='module')
def site(shared_site):
    shared_site.request('GET', PAGE)  # first-request work done once
    return shared_site


def xmlrpc_call(newlines=0):
    """A call of a method the page does not have (the sample publishes no
    XML-RPC view), its elements ``newlines`` lines apart."""
    return (b'<?xml version="1.0"?>\n<methodCall>' + b'\n' * newlines +
            b'<methodName>no_such_method</methodName><params></params>'
            b'</methodCall>\n')


def fault_code(response):
    with pytest.raises(xmlrpc.client.Fault) as fault:
        xmlrpc.client.loads(response.body)
    return fault.value.faultCode


def records_query(records, defaults, marker='default'):
    """``records`` x ``r.a:records`` and ``defaults`` fields
    ``r.bN:<marker>:records``, as the review's attack."""
    return '&'.join(['r.a:records=1'] * records +
                    ['r.b%d:%s:records=1' % (number, marker)
                     for number in range(defaults)])


# -- XML-RPC


def test_xmlrpc_newline_body_is_read_in_linear_work(site):
    """zope.publisher joined the body line by line, copying it once per
    line (not a call each, so the calls alone would not show it): the
    body is read at once now, and the parser's work (a call per line of
    character data) grows linearly."""
    works = []
    for newlines in (0, 10000, 20000):
        response, work = work_of(site, 'POST', PAGE,
                                 body=xmlrpc_call(newlines), headers=XML)
        assert fault_code(response) == 404  # read, then not found
        assert work.calls['readline'] == 0
        works.append(work.total)
    assert works[2] - works[1] <= 1.1 * (works[1] - works[0])


# -- form fields


def test_default_records_in_query_are_bounded(site):
    _, ordinary = work_of(site, 'GET', PAGE, query='r.a:records=1')
    response, attack = work_of(site, 'GET', PAGE,
                               query=records_query(2000, 2000))
    assert response.status_int == 400
    assert 'more than 400 fields' in response.text
    assert attack.total <= ordinary.total + MARGIN


@pytest.mark.parametrize('marker', ['default', 'tuple'])
def test_default_records_in_a_form_body_are_bounded(site, marker):
    # the same body without the markers: 1,000 fields read and checked
    _, ordinary = work_of(site, 'POST', PAGE,
                          body=records_query(1000, 0).encode(), headers=FORM)
    response, attack = work_of(
        site, 'POST', PAGE, body=records_query(500, 500, marker).encode(),
        headers=FORM)
    assert response.status_int == 400
    assert 'more than 16 fields marked :default or :tuple' in response.text
    assert attack.total <= ordinary.total + MARGIN


def test_default_records_under_the_caps_cost_linear_work(site):
    """At the caps (16 defaults), the work grows with the records like
    the form does, not faster."""
    works = []
    for records in (150, 300):
        response, work = work_of(site, 'GET', PAGE,
                                 query=records_query(records, 16))
        assert response.status_int == 200
        works.append(work.total)
    assert works[1] <= 2.2 * works[0]


def test_query_string_of_empty_fields_is_bounded(site):
    response, work = work_of(site, 'GET', PAGE, query='&' * 100000)
    assert response.status_int == 400
    assert work.total <= 3000


@pytest.mark.parametrize('method', ['GET', 'POST'])
def test_field_name_with_many_markers_is_refused_in_linear_work(site,
                                                                method):
    """zope.publisher copies a field's name once per marker: a name of
    20,000 markers costs no more than a name as long without them."""
    responses, works = {}, {}
    for marker in (':', 'A'):
        name = 'x' + (marker + 'ab') * 20000
        if method == 'GET':
            # each marker escaped, as a browser sends it
            request = {'query': name.replace(
                marker, '%%%02X' % ord(marker)) + '=1'}
        else:
            request = {'body': name.encode() + b'=1', 'headers': FORM}
        responses[marker], works[marker] = work_of(site, method, PAGE,
                                                   **request)
    assert responses['A'].status_int == 200
    assert responses[':'].status_int == 400
    assert 'more than 8 markers' in responses[':'].text
    assert works[':'].total <= works['A'].total + MARGIN


def test_field_names_of_a_multipart_body_are_bounded(site):
    boundary = 'b0undary'
    parts = ''.join(
        '--%s\r\nContent-Disposition: form-data; name="r.b%d:default:'
        'records"\r\n\r\n1\r\n' % (boundary, number) for number in range(17))
    body = (parts + '--%s--\r\n' % boundary).encode()
    response = site.request('POST', PAGE, body=body, headers={
        'CONTENT_TYPE': 'multipart/form-data; boundary=%s' % boundary})
    assert response.status_int == 400
    assert 'marked :default or :tuple' in response.text


# -- Accept-Charset


def test_accept_charset_repeated_is_decoded_once_per_distinct_charset(site):
    query = '&'.join(['a=%ff'] * 300)
    decodes = []
    for repeats in (1, 3000):
        response, work = work_of(site, 'GET', PAGE, query=query, headers={
            'HTTP_ACCEPT_CHARSET': ', '.join(['us-ascii'] * repeats)})
        assert response.status_int == 200
        decodes.append(work.calls['decode'])
    # per value: us-ascii fails, then ISO-8859-1 (which zope.publisher
    # adds) decodes it, however often us-ascii is listed
    assert decodes[0] >= 2 * 300
    assert decodes[1] == decodes[0]


# -- Accept-Language


@pytest.fixture
def xml_file_outside_the_locales():
    """A path, without '-' or '_' (which zope.publisher's adapter splits
    at), of an XML file that is no locale."""
    directory = '/tmp/zpal%d' % os.getpid()
    os.mkdir(directory)
    with open(os.path.join(directory, 'notalocale.xml'), 'w') as stream:
        stream.write('<?xml version="1.0"?><nothing/>')
    yield os.path.join(directory, 'notalocale')
    shutil.rmtree(directory)


def test_accept_language_naming_a_file_loads_no_xml_of_the_server(
        site, xml_file_outside_the_locales):
    response, work = work_of(site, 'GET', PAGE, headers={
        'HTTP_ACCEPT_LANGUAGE': xml_file_outside_the_locales})
    assert response.status_int == 200
    assert work.calls['exists'] == 0  # the file was not even looked for


def test_accept_language_with_many_languages_looks_for_a_few_locales(site):
    response, work = work_of(site, 'GET', PAGE, headers={
        'HTTP_ACCEPT_LANGUAGE': ', '.join(
            'x%d' % number for number in range(2000))})
    assert response.status_int == 200
    assert work.calls['exists'] <= 8


# -- Cookie


def test_cookie_of_backslashes_is_unquoted_in_linear_work(site):
    """CVE-2024-7592: the standard library's cookie parser before Python
    3.11.10 searches the rest of a quoted value at each backslash."""
    works = []
    for escapes in (2000, 4000):
        cookie = 'a="%s"' % ('\\"' * escapes)
        response, work = work_of(site, 'GET', PAGE,
                                 headers={'HTTP_COOKIE': cookie})
        assert response.status_int == 200
        works.append(work.calls['search'])
    # the same searches (none of them per escape), whatever their number
    assert works[1] == works[0]
