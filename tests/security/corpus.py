"""A corpus of hostile requests to the sample site, each with the status
it must get: a 4xx (or a harmless 200/30x), never a 500.

Paths are PATH_INFO as a server hands it over (PEP 3333): percent escapes
decoded, the bytes then decoded as latin-1, so invalid UTF-8 appears as
latin-1 characters (``'\\xff'``).  Requests that the fuzz tests found to
give a 500 were added here once fixed (marked "found by fuzzing").
"""

import base64
from typing import NamedTuple

#: The largest body the corpus site accepts (conftest.MAX_BODY).
LIMIT = 100000

PAGE = '/folder/page'
COMMENT = PAGE + '/@@add-comment'
XML = {'CONTENT_TYPE': 'text/xml'}
FORM = {'CONTENT_TYPE': 'application/x-www-form-urlencoded'}


class Case(NamedTuple):
    id: str
    status: int
    method: str = 'GET'
    path: str = '/'
    query: str = ''
    body: bytes = b''
    headers: dict = {}
    content_length: str = None
    terminated: bool = False


def basic(credentials):
    return {'HTTP_AUTHORIZATION':
            'Basic ' + base64.b64encode(credentials).decode('ascii')}


def multipart(parts, boundary='b0undary'):
    return {'CONTENT_TYPE': 'multipart/form-data; boundary=%s' % boundary}, \
        parts


def xmlrpc_call(method, params=b''):
    return (b'<?xml version="1.0"?><methodCall><methodName>' + method +
            b'</methodName><params>' + params + b'</params></methodCall>')


def xmlrpc_param(value):
    return b'<param><value>' + value + b'</value></param>'


def billion_laughs():
    entities = [b'<!ENTITY lol0 "lol">']
    for level in range(1, 10):
        entities.append(b'<!ENTITY lol%d "%s">' % (
            level, b''.join(b'&lol%d;' % (level - 1) for _ in range(10))))
    return (b'<?xml version="1.0"?><!DOCTYPE lolz [' + b''.join(entities) +
            b']><methodCall><methodName>&lol9;</methodName></methodCall>')


def quadratic_blowup():
    return (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "' +
            b'A' * 20000 + b'">]><methodCall><methodName>' + b'&a;' * 4000 +
            b'</methodName></methodCall>')


def deep_xmlrpc_nesting(depth=2000):
    return xmlrpc_call(b'x', xmlrpc_param(
        b'<array><data><value>' * depth + b'<int>1</int>' +
        b'</value></data></array>' * depth))


PATHS = [
    # invalid percent-encoding: the server leaves it as it is
    Case('percent-bad-hex', 404, path='/folder/%zz'),
    Case('percent-truncated', 404, path='/folder/%'),
    Case('percent-truncated-one-digit', 404, path='/folder/%4'),
    Case('percent-double-encoded-slash', 404, path='/folder%252fpage'),
    Case('percent-encoded-slash-decoded', 404, path='/folder%2fpage'),
    # invalid UTF-8, decoded as latin-1 by the server
    Case('utf8-invalid-start-byte', 400, path='/folder/\xff\xfe'),
    Case('utf8-bad-continuation', 400, path='/folder/\xc3\x28'),
    Case('utf8-overlong-slash', 400, path='/folder/\xc0\xaf'),
    Case('utf8-overlong-dot-dot', 400, path='/\xc0\xae\xc0\xae/etc'),
    Case('utf8-surrogate', 400, path='/folder/\xed\xa0\x80'),
    Case('utf8-truncated-sequence', 400, path='/folder/\xe2\x82'),
    Case('utf8-valid-unknown-name', 404, path='/folder/\xc3\xa9t\xc3\xa9'),
    Case('utf8-emoji-unknown-name', 404, path='/\xf0\x9f\x92\xa9'),
    # dot segments and their escapes: never above the root
    Case('dot-dot-to-etc-passwd', 400, path='/../../../etc/passwd'),
    Case('dot-dot-above-root', 400, path='/folder/../..'),
    Case('dot-dot-percent-encoded', 404, path='/%2e%2e/%2e%2e/etc/passwd'),
    Case('dot-dot-double-encoded', 404, path='/%252e%252e/etc/passwd'),
    Case('dot-dot-backslash', 404, path='/..\\..\\etc\\passwd'),
    Case('dot-dot-in-resource', 400,
         path='/@@/zope.pipeline.sample/../../../../setup.py'),
    Case('dot-dot-encoded-in-resource', 404,
         path='/@@/zope.pipeline.sample/%2e%2e/%2e%2e/setup.py'),
    Case('resource-absolute-path', 404,
         path='/@@/zope.pipeline.sample//etc/passwd'),
    Case('triple-dot', 404, path='/folder/...'),
    # NUL and control characters
    Case('nul-in-segment', 404, path='/folder/a\x00b'),
    Case('nul-alone', 404, path='/\x00'),
    Case('nul-after-view', 404, path='/folder/page/@@index.html\x00.txt'),
    Case('newline-in-path', 404, path='/folder/a\r\nSet-Cookie: x=y'),
    Case('tab-and-escape-in-path', 404, path='/folder/\t\x1b[31m'),
    # overlong paths
    Case('path-100kb-one-segment', 404, path='/' + 'a' * 100000),
    Case('path-100kb-many-segments', 404, path='/a' * 50000),
    Case('path-10k-empty-segments', 200, path='/' * 10000),
    Case('path-deep-dot-segments', 200, path='/folder/..' * 5000),
    # namespaces
    Case('namespace-unknown', 404, path='/++foo++bar'),
    Case('namespace-empty-name', 404, path='/++'),
    Case('namespace-only-pluses', 404, path='/++++'),
    Case('namespace-unterminated', 404, path='/++etc'),
    Case('namespace-etc-site-anonymous', 404, path='/++etc++site'),
    Case('namespace-etc-unknown', 404, path='/++etc++nonsense'),
    Case('namespace-attribute-class', 404, path='/++attribute++__class__'),
    Case('namespace-attribute-p-jar', 404,
         path='/folder/++attribute++_p_jar'),
    Case('namespace-attribute-dict', 404,
         path='/folder/++attribute++__dict__'),
    Case('namespace-item-missing', 404, path='/++item++nothing'),
    Case('namespace-view-missing', 404, path='/++view++nothing'),
    Case('namespace-resource-missing', 404, path='/++resource++nothing'),
    Case('namespace-skin-unknown', 404, path='/++skin++Nope/folder'),
    Case('namespace-lang-junk', 400, path='/++lang++\x00\xff/folder'),
    Case('namespace-acquire', 200, path='/folder/++acquire++folder'),
    Case('namespace-annotations-anonymous', 404,
         path='/folder/++annotations++x'),
    Case('view-empty-name', 200, path='/@@'),
    Case('view-unknown', 404, path='/folder/@@nothing'),
    Case('view-of-view', 404, path='/folder/page/@@index.html/@@index.html'),
    Case('view-double-at-resource-empty', 200, path='/@@/'),
    # ++vh++ with bad hosts and ports
    Case('vh-port-not-a-number', 400, path='/++vh++http:example.com:abc/++'),
    Case('vh-port-too-large', 400, path='/++vh++http:example.com:99999/++'),
    Case('vh-port-negative', 400, path='/++vh++http:example.com:-1/++'),
    Case('vh-port-missing', 400, path='/++vh++http:example.com/++'),
    Case('vh-port-empty', 400, path='/++vh++http:example.com:/++'),
    Case('vh-empty', 400, path='/++vh++'),
    Case('vh-without-terminator', 400,
         path='/++vh++http:example.com:80/folder'),
    Case('vh-scheme-javascript', 400,
         path='/++vh++javascript:example.com:80/++'),
    Case('vh-host-with-script', 400,
         path='/++vh++http:<script>:80/++'),
    Case('vh-host-with-space', 400, path='/++vh++http:a b:80/++'),
    Case('vh-ipv6-host', 400, path='/++vh++http:[::1]:80/++'),
    Case('vh-twice-from-a-client', 400,
         path='/++vh++http:a.com:80/++/++vh++http:b.com:80/++'),
    Case('vh-from-a-client-to-another-host', 400,
         path='/++vh++https:evil.example:443/++/folder/page'),
    Case('vh-dot-dot-above-the-virtual-root', 400,
         path='/++vh++http:localhost:80/++/x/../..'),
    # protected and private names
    Case('private-p-jar', 404, path='/_p_jar'),
    Case('private-class', 404, path='/__class__'),
    Case('private-dict', 404, path='/folder/__dict__'),
    Case('private-globals-of-view', 404,
         path='/folder/page/@@index.html/__call__/__globals__'),
    Case('private-func-of-view', 404,
         path='/folder/page/@@index.html/__init__/__func__'),
    Case('private-im-func', 404, path='/folder/page/@@index.html/im_func'),
    Case('private-func-globals', 404,
         path='/counter/@@increment/__call__/func_globals'),
    Case('private-parent', 404, path='/folder/__parent__'),
    Case('private-data', 404, path='/folder/data'),
    Case('private-sitemanager', 404, path='/getSiteManager'),
    Case('private-p-oid', 404, path='/folder/page/_p_oid'),
    Case('edit-view-anonymous', 401, path=PAGE + '/@@edit'),
]

HEADERS = [
    Case('header-100kb-unknown', 200, headers={'HTTP_X_JUNK': 'a' * 100000}),
    Case('header-100kb-cookie', 200,
         headers={'HTTP_COOKIE': 'a=' + 'b' * 100000}),
    Case('header-malformed-cookie', 200,
         headers={'HTTP_COOKIE': ';;=;\x00;"\xff=\x01'}),
    Case('header-100kb-accept-language', 200,
         headers={'HTTP_ACCEPT_LANGUAGE': 'en;q=0.5,' * 10000}),
    Case('header-bad-accept-language', 200,
         headers={'HTTP_ACCEPT_LANGUAGE': ';q=x,,\xff;q=-1'}),
    Case('header-bad-accept-charset', 200,
         headers={'HTTP_ACCEPT_CHARSET': 'nope;q=x, \xff'}),
    Case('header-100kb-host', 400, headers={'HTTP_HOST': 'a' * 100000}),
    Case('header-host-with-script', 400,
         headers={'HTTP_HOST': 'evil<script>alert(1)</script>'}),
    Case('header-host-with-path', 400, headers={'HTTP_HOST': 'a.com/x'}),
    Case('header-host-port-junk', 400, headers={'HTTP_HOST': 'a.com:8x'}),
    Case('header-host-with-userinfo', 400,
         headers={'HTTP_HOST': 'user@a.com'}),
    Case('header-host-empty-ipv6', 400, headers={'HTTP_HOST': '[]'}),
    Case('header-host-not-allowed', 400,
         headers={'HTTP_HOST': 'evil.example'}),
    Case('header-host-below-an-allowed-name', 400,
         headers={'HTTP_HOST': 'localhost.evil.example:80'}),
    Case('auth-basic-not-base64', 200,
         headers={'HTTP_AUTHORIZATION': 'Basic !!!'}),
    Case('auth-basic-no-colon', 200, headers=basic(b'nocolon')),
    # found by probing: invalid UTF-8 credentials gave a 500
    Case('auth-basic-not-utf8', 200, headers=basic(b'\xff:\xfe')),
    Case('auth-basic-wrong-password', 200, headers=basic(b'admin:wrong')),
    Case('auth-basic-100kb', 200, headers=basic(b'a:' + b'b' * 100000)),
    Case('auth-unknown-scheme', 200,
         headers={'HTTP_AUTHORIZATION': 'Negotiate \xff\x00'}),
    Case('auth-basic-empty', 200, headers={'HTTP_AUTHORIZATION': 'Basic'}),
    Case('method-put', 405, method='PUT'),
    Case('method-delete', 405, method='DELETE'),
    Case('method-unknown', 405, method='FOO'),
    Case('method-trace', 405, method='TRACE'),
    Case('method-lowercase-get', 200, method='get'),
]

FORMS = [
    Case('marker-int-not-a-number', 400, query='x:int=abc'),
    Case('marker-float-not-a-number', 400, query='x:float=abc'),
    Case('marker-long-not-a-number', 400, query='x:long=1.5'),
    Case('marker-date-junk-ignored', 200, query='x:date=yesterday%00'),
    Case('marker-list-int-junk', 400, query='x:list:int=1&x:list:int=b'),
    Case('marker-required-empty', 400, query='x:required='),
    Case('marker-unknown-type', 200, query='x:nonsense=1'),
    Case('marker-record-nested', 200, query='a.b:record:record=1'),
    Case('marker-record-then-plain', 200, query='a:record=1&a=2'),
    Case('marker-record-empty-name', 200, query='.:record=1'),
    Case('marker-record-deep-dots', 200, query='a.b.c.d:record=1'),
    # found by probing: zope.publisher's AttributeError gave a 500
    Case('marker-records-mixed', 400,
         query='a.x:records=1&a:list=2&a.y:record=3'),
    Case('marker-ignore-empty-int', 200, query='x:ignore_empty:int='),
    Case('marker-default-int-junk', 400, query='x:default:int=abc'),
    Case('marker-int-invalid-utf8', 400, query='x:int=%ff'),
    Case('marker-value-invalid-utf8', 400, query='x=%ff%fe'),
    Case('marker-name-invalid-utf8', 200, query='%ff=1'),
    Case('marker-method-private', 404, query=':method=__class__'),
    # found by probing: a :method value reached traversal as bytes (500)
    Case('marker-method-existing', 200, query=':method=folder'),
    Case('marker-method-invalid-utf8', 400, query=':method=%ff'),
    Case('marker-action-unknown', 404, query='x:action=nothing'),
    Case('marker-default-method-unknown', 404,
         query='x:default_method=nothing'),
    Case('marker-on-comment-int-junk', 400, method='POST', path=COMMENT,
         body=b'text:int=abc&author=x', headers=FORM),
    # found by probing: the view got a Record for its text (500)
    Case('marker-on-comment-record-text', 400, method='POST', path=COMMENT,
         body=b'text.a:record=1', headers=FORM),
    Case('marker-on-comment-list-author', 400, method='POST', path=COMMENT,
         body=b'text=hi&author:list=a&author:list=b', headers=FORM),
    Case('marker-on-search-list', 400, path='/@@search',
         query='q:list=a&q:list=b'),
    Case('marker-on-search-record', 400, path='/@@search',
         query='q.a:record=%3Cscript%3E'),
    Case('marker-on-search-tuple', 400, path='/@@search', query='q:tuple=a'),
    Case('marker-on-search-int', 400, path='/@@search', query='q:int=1'),
    # refused, and sent back to the form, which says why (POST-redirect-GET)
    Case('comment-empty-text', 303, method='POST', path=COMMENT,
         body=b'text=+++', headers=FORM),
    Case('comment-get-not-allowed', 405, path=COMMENT),
    Case('query-percent-bad', 200, query='a%zz=1&%=%'),
    Case('query-1mb-value', 200, query='a=' + 'x' * 1000000),
    Case('query-100k-ampersands', 400, query='&' * 100000),
    Case('query-200k-fields', 400, query='a=1&' * 200000),
    Case('query-nul-bytes', 200, query='a=%00&%00=b'),
    Case('form-unknown-charset', 400, method='POST', path=COMMENT,
         body=b'text=hi', headers={
             'CONTENT_TYPE': 'application/x-www-form-urlencoded; '
                             'charset=nope'}),
    # found by probing: a body not in its declared charset gave a 500
    Case('form-body-not-in-its-charset', 400, method='POST', path='/',
         body=b'a=\xff\xfe', headers={
             'CONTENT_TYPE': 'application/x-www-form-urlencoded; '
                             'charset=utf-8'}),
    Case('form-body-raw-invalid-utf8', 400, method='POST', path=COMMENT,
         body=b'text=\xff', headers=FORM),
]

_MULTIPART, _ = multipart(b'')

BODIES = [
    Case('body-over-max-body', 413, method='POST', path=COMMENT,
         body=b'text=' + b'x' * LIMIT, headers=FORM),
    Case('body-content-length-over-max-body', 413, method='POST',
         path=COMMENT, body=b'text=x', content_length=str(LIMIT * 10)),
    Case('body-content-length-huge', 413, method='POST', path=COMMENT,
         body=b'text=x', content_length='9' * 18),
    Case('body-content-length-too-many-digits', 413, method='POST',
         path=COMMENT, body=b'text=x', content_length='9' * 40),
    Case('body-shorter-than-content-length', 400, method='POST',
         path=COMMENT, body=b'text=x', content_length='100'),
    Case('body-content-length-not-a-number', 400, method='POST',
         path=COMMENT, body=b'text=x', content_length='abc'),
    Case('body-content-length-negative', 400, method='POST', path=COMMENT,
         body=b'text=x', content_length='-5'),
    Case('body-content-length-hex', 400, method='POST', path=COMMENT,
         body=b'text=x', content_length='0x10'),
    Case('body-content-length-two-values', 400, method='POST',
         path=COMMENT, body=b'text=x', content_length='6, 6'),
    Case('body-chunked-over-max-body', 413, method='POST', path=COMMENT,
         body=b'text=' + b'x' * LIMIT, headers=dict(
             FORM, HTTP_TRANSFER_ENCODING='chunked'), content_length='',
         terminated=True),
    Case('body-chunked-empty-comment', 303, method='POST', path=COMMENT,
         body=b'text=', headers=dict(
             FORM, HTTP_TRANSFER_ENCODING='chunked'), content_length='',
         terminated=True),
    Case('body-chunked-with-content-length', 400, method='POST',
         path=COMMENT, body=b'text=x', headers=dict(
             FORM, HTTP_TRANSFER_ENCODING='chunked'), content_length='abc',
         terminated=True),
    Case('multipart-no-boundary', 400, method='POST', path=COMMENT,
         body=b'garbage', headers={'CONTENT_TYPE': 'multipart/form-data'}),
    Case('multipart-truncated', 400, method='POST', path=COMMENT,
         body=b'--b0undary\r\nbroken', headers=_MULTIPART),
    Case('multipart-no-final-boundary', 400, method='POST', path=COMMENT,
         body=b'--b0undary\r\nContent-Disposition: form-data; name="text"'
              b'\r\n\r\nhi\r\n', headers=_MULTIPART),
    Case('multipart-no-disposition', 400, method='POST', path=COMMENT,
         body=b'--b0undary\r\nX: y\r\n\r\nhi\r\n--b0undary--\r\n',
         headers=_MULTIPART),
    Case('multipart-header-without-colon', 400, method='POST',
         path=COMMENT, body=b'--b0undary\r\nnonsense\r\n\r\nhi\r\n'
                            b'--b0undary--\r\n', headers=_MULTIPART),
    Case('multipart-garbage-before-boundary', 400, method='POST',
         path=COMMENT, body=b'\x00\xff' * 100, headers=_MULTIPART),
    Case('multipart-value-invalid-utf8', 400, method='POST', path=COMMENT,
         body=b'--b0undary\r\nContent-Disposition: form-data; name="text"'
              b'\r\n\r\n\xff\xfe\r\n--b0undary--\r\n', headers=_MULTIPART),
    Case('multipart-oversized', 413, method='POST', path=COMMENT,
         body=b'--b0undary\r\nContent-Disposition: form-data; name="text"'
              b'\r\n\r\n' + b'x' * LIMIT + b'\r\n--b0undary--\r\n',
         headers=_MULTIPART),
    Case('multipart-too-many-parts', 400, method='POST', path=COMMENT,
         body=b''.join(b'--b0undary\r\nContent-Disposition: form-data; '
                       b'name="a"\r\n\r\n1\r\n' for _ in range(1200)) +
         b'--b0undary--\r\n', headers=_MULTIPART),
    Case('multipart-boundary-too-long', 400, method='POST', path=COMMENT,
         body=b'x', headers={'CONTENT_TYPE': 'multipart/form-data; '
                                             'boundary=' + 'b' * 200}),
]

#: XML-RPC answers its errors with a fault (status 200), the protocol's
#: way; what the corpus test checks there is that the answer is a fault.
XMLRPC = [
    Case('xmlrpc-malformed', 200, method='POST',
         body=b'<?xml version="1.0"?><methodCall><methodName>x',
         headers=XML),
    Case('xmlrpc-empty-body', 200, method='POST', headers=XML,
         content_length='0'),
    Case('xmlrpc-not-xml', 200, method='POST', body=b'\xff\xfe<',
         headers=XML),
    Case('xmlrpc-unknown-charset', 200, method='POST', body=b'<x/>',
         headers={'CONTENT_TYPE': 'text/xml; charset=nope'}),
    Case('xmlrpc-billion-laughs', 200, method='POST', body=billion_laughs(),
         headers=XML),
    Case('xmlrpc-quadratic-blowup', 200, method='POST',
         body=quadratic_blowup(), headers=XML),
    Case('xmlrpc-external-entity', 200, method='POST', headers=XML,
         body=b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM '
              b'"file:///etc/passwd">]><methodCall><methodName>&e;'
              b'</methodName></methodCall>'),
    Case('xmlrpc-bad-int', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'x', xmlrpc_param(b'<int>abc</int>'))),
    Case('xmlrpc-bad-double', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'x', xmlrpc_param(b'<double>x</double>'))),
    Case('xmlrpc-bad-base64', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'x', xmlrpc_param(b'<base64>!!!</base64>'))),
    Case('xmlrpc-bad-boolean', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'x', xmlrpc_param(b'<boolean>7</boolean>'))),
    Case('xmlrpc-unknown-type', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'x', xmlrpc_param(b'<foo>7</foo>'))),
    Case('xmlrpc-struct-member-without-name', 200, method='POST',
         headers=XML, body=xmlrpc_call(b'x', xmlrpc_param(
             b'<struct><member><value><int>1</int></value></member>'
             b'</struct>'))),
    Case('xmlrpc-deep-nesting', 200, method='POST', headers=XML,
         body=deep_xmlrpc_nesting()),
    Case('xmlrpc-private-method', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'__class__')),
    Case('xmlrpc-unknown-method', 200, method='POST', headers=XML,
         body=xmlrpc_call(b'nothing')),
    Case('xmlrpc-oversized', 413, method='POST', headers=XML,
         body=xmlrpc_call(b'x' * LIMIT)),
]

CORPUS = PATHS + HEADERS + FORMS + BODIES + XMLRPC

#: The cases whose answer is an XML-RPC fault (the external entity is
#: not read, so that call names the site itself and succeeds).
FAULTS = {case.id for case in XMLRPC
          if case.status == 200 and case.id != 'xmlrpc-external-entity'}
