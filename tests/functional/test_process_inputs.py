"""The process_inputs stage: zope.publisher's form marshalling and charset
negotiation, and a 400 (an XML-RPC fault for XML-RPC), never a 500, for
input it cannot understand."""

import xmlrpc.client

import pytest

from fixtures.testing import classic_app

FORM = '/folder/doc/form.html'
BOUNDARY = 'xYzZY'


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def multipart(*parts, boundary=BOUNDARY, end=True):
    lines = []
    for name, value, filename in parts:
        disposition = 'form-data; name="%s"' % name
        if filename:
            disposition += '; filename="%s"' % filename
        lines += ['--' + boundary, 'Content-Disposition: ' + disposition,
                  '', value]
    if end:
        lines.append('--' + boundary + '--')
    return '\r\n'.join(lines + ['']).encode('utf-8')


def post_multipart(app, body, boundary=BOUNDARY, **kw):
    content_type = 'multipart/form-data'
    if boundary:
        content_type += '; boundary=' + boundary
    return app.post(FORM, body, headers={'Content-Type': content_type}, **kw)


# -- marshalling

def test_int_float_and_boolean_converters(app):
    response = app.get(FORM, {'n:int': '42', 'x:float': '1.5',
                              'yes:boolean': 'on'})
    assert response.text == 'n=int:42\nx=float:1.5\nyes=bool:True'


def test_list_converter_collects_repeated_fields(app):
    response = app.get(FORM + '?tags:list=a&tags:list=b&one:list=c&'
                       'n:list:int=1&n:list:int=2')
    assert response.text == ('n=[int:1, int:2]\none=[str:c]\n'
                             'tags=[str:a, str:b]')


def test_record_converter_builds_records(app):
    response = app.get(FORM + '?person.name:record=Ann&'
                       'person.age:record:int=7')
    assert response.text == 'person={age: int:7, name: str:Ann}'


def test_method_suffix_publishes_the_named_view(app):
    response = app.post('/folder/doc', {'add.html:method': '',
                                        'a:int': '1', 'b:int': '2'})
    assert response.text == '1 + 2 = 3'
    assert response.headers['X-Reached'].split()[-1] == 'add.html'


def test_multipart_form_with_a_file_upload(app):
    body = multipart(('title', 'Hello', None),
                     ('upload', 'file content', 'notes.txt'))
    response = post_multipart(app, body)
    assert response.text == ("title=str:Hello\n"
                             "upload=upload(notes.txt, b'file content')")


# -- charsets

def test_form_in_the_negotiated_charset_is_decoded(app):
    response = app.get('/folder/doc/echo.html?text=caf%E9',
                       headers={'Accept-Charset': 'iso-8859-1'})
    assert response.headers['Content-Type'] == \
        'text/plain;charset=iso-8859-1'
    assert response.body == 'caf\u00e9 (GET caf\u00e9)'.encode('latin-1')


def test_form_in_utf8_is_decoded_by_default(app):
    response = app.get('/folder/doc/echo.html?text=caf%C3%A9')
    assert response.text == 'caf\u00e9 (GET caf\u00e9)'


# -- input that cannot be understood: 400, never 500

@pytest.mark.parametrize('query', [
    'n:int=abc', 'x:float=abc', 'n:list:int=1&n:list:int=x',
    'person.age:record:int=old', 'name:required=',
])
def test_bad_conversion_is_a_bad_request(app, query):
    response = app.get(FORM + '?' + query, status=400)
    assert b'Traceback' not in response.body


@pytest.mark.parametrize('query', ['text=%FF%FE', 'text=caf%E9',
                                   'tags:list=ok&tags:list=%FF'])
def test_form_in_none_of_the_accepted_charsets_is_a_bad_request(app, query):
    app.get('/folder/doc/echo.html?' + query, status=400)


def test_unknown_charset_of_a_form_body_is_a_bad_request(app):
    app.post(FORM, b'title=x', status=400, headers={
        'Content-Type': 'application/x-www-form-urlencoded; '
                        'charset=no-such-charset'})


def test_form_with_too_many_fields_is_a_bad_request(app):
    body = '&'.join('f%d=x' % number for number in range(1100))
    app.post(FORM, body, status=400)


def test_truncated_multipart_body_is_a_bad_request(app):
    body = multipart(('title', 'Hello', None), end=False)[:-6]
    post_multipart(app, body, status=400)


def test_multipart_body_without_its_boundary_is_a_bad_request(app):
    post_multipart(app, b'no parts at all', status=400)
    post_multipart(app, multipart(('title', 'Hello', None)), boundary=None,
                   status=400)


def test_malformed_xmlrpc_body_is_a_fault_not_a_server_error(app):
    for body in (b'', b'<not xml', b'<methodCall></methodCall>',
                 b'<?xml version="1.0"?><methodCall><methodName>title'
                 b'</methodName><params><param><value><boolean>7</boolean>'
                 b'</value></param></params></methodCall>'):
        response = app.post('/folder/doc/rpc', body,
                            content_type='text/xml')
        with pytest.raises(xmlrpc.client.Fault) as fault:
            xmlrpc.client.loads(response.body)
        assert 'BadInput: The XML-RPC call could not be read' in \
            fault.value.faultString


def test_unknown_charset_the_client_accepts_is_skipped(app):
    # zope.publisher adds ISO-8859-1 to a list without it or "*"
    response = app.get('/folder/doc/echo.html?text=caf%E9',
                       headers={'Accept-Charset': 'no-such-charset, hex'})
    assert response.text == 'caf\u00e9 (GET caf\u00e9)'


def test_form_in_no_known_charset_the_client_accepts_is_a_bad_request(app):
    # "*": zope.publisher adds UTF-8 and not ISO-8859-1
    app.get('/folder/doc/echo.html?text=caf%E9', status=400,
            headers={'Accept-Charset': 'no-such-charset, *'})


def test_body_that_is_not_a_form_is_left_to_the_view(app):
    response = app.post(FORM, b'{"title": "x"}',
                        headers={'Content-Type': 'application/json'})
    assert response.text == ''


def test_body_that_cannot_be_rewound_is_not_checked():
    from zope.pipeline.stages.process_inputs import check_body

    class Unseekable:
        def seekable(self):
            return False

        def read(self, size=-1):
            raise AssertionError('read')

    check_body({'wsgi.input': Unseekable(), 'REQUEST_METHOD': 'POST',
                'CONTENT_TYPE': 'multipart/form-data'})
