"""process_inputs: zope.publisher's form (or XML-RPC body) processing.

Form marshalling (``:int``, ``:list``, ``:record``, ``:method``...) and
charset negotiation (Accept-Charset) are zope.publisher's.  What it cannot
understand becomes a BadInput here (a 400, or an XML-RPC fault), not a
500: a bad ``:int`` or ``:float``, an unknown charset, a form value in none
of the acceptable charsets (which zope.publisher would hand to the view as
bytes), a malformed XML-RPC body, and a malformed multipart body (which
zope.publisher's lenient parser would turn into a silently empty or
partial form, as it would a body in an unknown charset or with too many
fields: the body is checked first, by the same parser with its errors
reported, then rewound).

A GET or HEAD whose query string is empty gives zope.publisher's
BrowserRequest nothing to read, so its ``processInputs`` is not called
then (a request class with a ``processInputs`` of its own always gets it
called).
"""

import codecs
import functools
import xml.parsers.expat
import xmlrpc.client

import multipart
from multipart import MultipartError
from multipart import PushMultipartParser
from multipart import parse_options_header
from zope.interface import Interface
from zope.publisher.browser import MULIPART_PART_LIMIT
from zope.publisher.browser import BrowserRequest
from zope.publisher.browser import Record
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest

from zope.pipeline import environ as keys
from zope.pipeline.errors import BadInput

#: What zope.publisher raises for form input it cannot understand
#: (AttributeError: a ``:record`` field of a name already a ``:list``).
FORM_ERRORS = (ValueError, LookupError, AttributeError)
#: What xmlrpc.client raises for a body it cannot understand.
XMLRPC_ERRORS = FORM_ERRORS + (TypeError, xml.parsers.expat.ExpatError,
                               xmlrpc.client.Error)
#: Bytes read at a time when checking a multipart body.
CHUNK = 1 << 16
#: Content types zope.publisher parses as url-encoded forms.
URLENCODED = ('application/x-www-form-urlencoded',
              'application/x-url-encoded')


class IProcessInputsSettings(Interface):
    """process_inputs has no settings."""


#: The stage contract (zope.pipeline.contract): the environ keys this
#: stage needs, reads when present, and writes.
reads = (keys.REQUEST_KEY,)
reads_if_present = ()
writes = ()


def check_body(environ):
    """Raise BadInput for a form body zope.publisher would misread.

    zope.publisher has the ``multipart`` library parse bodies with errors
    suppressed: a malformed multipart body, an unknown charset, too many
    fields or too large a body become a silently empty or partial form.
    The body is read once more here with errors reported (the structure
    only, for multipart), then rewound.  Only a seekable body (the retry
    stage's buffer) is checked.
    """
    stream = environ.get('wsgi.input')
    if stream is None or not stream.seekable():
        return
    content_type, options = parse_options_header(
        environ.get('CONTENT_TYPE') or '')
    if not content_type and environ.get('REQUEST_METHOD') == 'POST':
        content_type = 'application/x-www-form-urlencoded'
    start = stream.tell()
    try:
        if 'charset' in options:
            check_charset(options['charset'])
        if content_type.startswith('multipart/'):
            check_multipart(stream, options.get('boundary'))
        elif content_type in URLENCODED:
            multipart.parse_form_data(
                {'wsgi.input': stream, 'CONTENT_TYPE': content_type,
                 'CONTENT_LENGTH': environ.get('CONTENT_LENGTH') or -1},
                part_limit=MULIPART_PART_LIMIT, ignore_errors=False)
    except MultipartError as exc:
        raise BadInput('The form could not be read: %s' % exc) from exc
    except UnicodeDecodeError as exc:
        raise BadInput('The form is not in its charset %s.'
                       % exc.encoding) from exc
    finally:
        stream.seek(start)


def check_charset(charset):
    try:
        codecs.lookup(charset)
    except LookupError:
        raise BadInput('The form has an unknown charset: %r'
                       % charset) from None


def check_multipart(stream, boundary):
    if not boundary:
        raise BadInput('The multipart body has no boundary.')
    with PushMultipartParser(
            boundary, max_segment_count=MULIPART_PART_LIMIT) as parser:
        for chunk in iter(functools.partial(stream.read, CHUNK), b''):
            for _ in parser.parse(chunk):
                pass


def undecodable(value):
    """Whether a form value (or a value in a list or record) stayed bytes
    because no acceptable charset could decode it."""
    if isinstance(value, bytes):
        return True
    if isinstance(value, (list, tuple)):
        return any(undecodable(item) for item in value)
    if isinstance(value, Record):
        return any(undecodable(item) for item in vars(value).values())
    return False


def decode_path_suffix(request):
    """zope.publisher adds the value of a ``:method`` field to the path
    undecoded (bytes), which traversal and URLs cannot use: decode it."""
    suffix = getattr(request, '_path_suffix', None) or ()
    if not any(isinstance(step, bytes) for step in suffix):
        return
    try:
        request.setPathSuffix([
            step.decode('utf-8') if isinstance(step, bytes) else step
            for step in suffix])
    except UnicodeDecodeError as exc:
        raise BadInput('A :method field is not UTF-8.') from exc


def nothing_to_process(request):
    """Whether zope.publisher's own ``processInputs`` would only find the
    empty query string of a GET or HEAD (it reads nothing else for them):
    then it need not run."""
    return (type(request).processInputs is BrowserRequest.processInputs
            and request.environment.get('QUERY_STRING') == ''
            and not request.form)


def process_form(environ, request):
    if environ.get('REQUEST_METHOD') not in ('GET', 'HEAD'):
        check_body(environ)
    elif nothing_to_process(request):
        return
    try:
        request.processInputs()
    except FORM_ERRORS as exc:
        raise BadInput('The form could not be read: %s' % exc) from exc
    decode_path_suffix(request)
    names = [name for name, value in request.form.items()
             if undecodable(value)]
    if names:
        raise BadInput('Form values in none of the accepted charsets: %s'
                       % ', '.join(sorted(names)))


def process_xmlrpc(request):
    try:
        request.processInputs()
    except XMLRPC_ERRORS as exc:
        raise BadInput('The XML-RPC call could not be read: %s'
                       % type(exc).__name__) from exc


class ProcessInputsStage:
    """Read the request's input; input it cannot understand is a 400."""

    settings_schema = IProcessInputsSettings
    reads = reads
    reads_if_present = reads_if_present
    writes = writes

    def __init__(self, next_app, build=None):
        self.next_app = next_app
        # Registered per request interface: the chain's interfaces decide
        # which input it reads, once.
        if build is not None and build.spec is not None:
            self.process = (xmlrpc_input if build.provides(IXMLRPCRequest)
                            else form_input)
        else:
            self.process = any_input

    def __call__(self, environ, start_response):
        self.process(environ, environ[keys.REQUEST_KEY])
        return self.next_app(environ, start_response)


def xmlrpc_input(environ, request):
    process_xmlrpc(request)


def form_input(environ, request):
    process_form(environ, request)


def any_input(environ, request):
    """Without a build context (a stage built by hand): decide per
    request."""
    if IXMLRPCRequest.providedBy(request):
        process_xmlrpc(request)
    else:
        process_form(environ, request)
