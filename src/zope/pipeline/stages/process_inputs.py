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

Every form is bounded before zope.publisher reads it, so that its work
grows linearly with the request: the query string of a GET or HEAD has at
most ``max_query_fields`` fields (a body has at most zope.publisher's
1,024 parts); a field name has at most ``max_field_markers`` ``:``
markers (zope.publisher copies the name once per marker); at most
``max_default_fields`` fields are marked ``:default`` or ``:tuple``
(zope.publisher applies each to every record of its name).  Beyond
them: 400.  An XML-RPC body is read once, not line by line
(``factories.read_xmlrpc_call``), and is at most ``xmlrpc_max_body``
bytes (413 beyond).
"""

import codecs
import functools
import re
import xml.parsers.expat
import xmlrpc.client
from urllib.parse import unquote_plus

import multipart
from multipart import MultipartError
from multipart import MultipartSegment
from multipart import PushMultipartParser
from multipart import parse_options_header
from zope.interface import Interface
from zope.publisher.browser import MULIPART_PART_LIMIT
from zope.publisher.browser import BrowserRequest
from zope.publisher.browser import Record
from zope.publisher.interfaces.xmlrpc import IXMLRPCRequest
from zope.publisher.xmlrpc import XMLRPCRequest
from zope.schema import Int

from zope.pipeline import environ as keys
from zope.pipeline.engine import factories
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http.errors import BadInput
from zope.pipeline.http.errors import PayloadTooLarge

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


#: The markers after which zope.publisher applies a field to every record
#: (or value) of its name.
SPREAD_MARKERS = frozenset(('default', 'tuple'))
#: A Content-Length: decimal digits.
DIGITS_RE = re.compile(r'[0-9]+')


class IProcessInputsSettings(Interface):

    max_query_fields = Int(
        title='The most fields in the query string of a GET or HEAD '
              '(400 beyond)', default=400, min=1)
    max_field_markers = Int(
        title="The most ':' markers (:int, :list, :records...) in one "
              "form field's name (400 beyond)", default=8, min=1)
    max_default_fields = Int(
        title='The most fields marked :default or :tuple in one form, '
              'each applied to every record of its name (400 beyond)',
        default=16, min=0)
    xmlrpc_max_body = Int(
        title='Largest XML-RPC body, in bytes (413 above it); 0: only '
              'retry.max_body', default=1 << 20, min=0)


class FormLimits:
    """What one form may hold: the stage's settings."""

    __slots__ = ('query_fields', 'field_markers', 'default_fields')

    def __init__(self, query_fields, field_markers, default_fields):
        self.query_fields = query_fields
        self.field_markers = field_markers
        self.default_fields = default_fields


#: The limits of the settings' defaults.
DEFAULT_LIMITS = FormLimits(
    IProcessInputsSettings['max_query_fields'].default,
    IProcessInputsSettings['max_field_markers'].default,
    IProcessInputsSettings['max_default_fields'].default)


def check_body(environ, limits=DEFAULT_LIMITS):
    """Raise BadInput for a form body zope.publisher would misread, or
    whose field names are beyond ``limits``.

    zope.publisher has the ``multipart`` library parse bodies with errors
    suppressed: a malformed multipart body, an unknown charset, too many
    fields or too large a body become a silently empty or partial form.
    The body is read once more here with errors reported (the structure
    and the field names only, for multipart), then rewound.  Only a
    seekable body (the retry stage's buffer) is checked.
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
            names = check_multipart(stream, options.get('boundary'))
        elif content_type in URLENCODED:
            forms, _ = multipart.parse_form_data(
                {'wsgi.input': stream, 'CONTENT_TYPE': content_type,
                 'CONTENT_LENGTH': environ.get('CONTENT_LENGTH') or -1},
                part_limit=MULIPART_PART_LIMIT, ignore_errors=False)
            names = [name for name, _ in forms.iterallitems()]
        else:
            names = ()
    except MultipartError as exc:
        raise BadInput('The form could not be read: %s' % exc) from exc
    except UnicodeDecodeError as exc:
        raise BadInput('The form is not in its charset %s.'
                       % exc.encoding) from exc
    finally:
        stream.seek(start)
    check_field_names(names, limits)


def check_charset(charset):
    try:
        codecs.lookup(charset)
    except LookupError:
        raise BadInput('The form has an unknown charset: %r'
                       % charset) from None


def check_multipart(stream, boundary):
    """Parse a multipart body's structure; return the names of its
    parts."""
    if not boundary:
        raise BadInput('The multipart body has no boundary.')
    names = []
    with PushMultipartParser(
            boundary, max_segment_count=MULIPART_PART_LIMIT) as parser:
        for chunk in iter(functools.partial(stream.read, CHUNK), b''):
            for event in parser.parse(chunk):
                if isinstance(event, MultipartSegment):
                    names.append(event.name)
    return names


def check_query(query, limits=DEFAULT_LIMITS):
    """Raise BadInput for a query string beyond ``limits``: more than
    ``limits.query_fields`` fields (``&``-separated, as ``parse_qsl``
    counts them), or field names ``check_field_names`` refuses."""
    if query.count('&') >= limits.query_fields:
        raise BadInput('The query string has more than %d fields.'
                       % limits.query_fields)
    check_field_names(query_names(query), limits)


def query_names(query):
    """The field names of a query string, as zope.publisher's
    ``parse_qsl`` decodes them."""
    for field in query.split('&'):
        if field:
            yield unquote_plus(field.partition('=')[0],
                               encoding='ISO-8859-1', errors='replace')


def check_field_names(names, limits=DEFAULT_LIMITS):
    """Raise BadInput for a form whose field names would cost
    zope.publisher more than linear work: a name with more than
    ``limits.field_markers`` ``:`` markers (it copies the name once per
    marker), or more than ``limits.default_fields`` names marked
    ``:default`` or ``:tuple`` (it applies each to every record of its
    name)."""
    spread = 0
    for name in names:
        if name.count(':') > limits.field_markers:
            raise BadInput('A form field name has more than %d markers '
                           '(:int, :list...).' % limits.field_markers)
        if ':' in name and SPREAD_MARKERS.intersection(name.split(':')):
            spread += 1
    if spread > limits.default_fields:
        raise BadInput('The form has more than %d fields marked :default '
                       'or :tuple.' % limits.default_fields)


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
    # the request's environment (``request.environment``, read without
    # making its mapping object)
    return (type(request).processInputs is BrowserRequest.processInputs
            and request._environ.get('QUERY_STRING') == ''
            and not request.form)


def process_form(environ, request, limits=DEFAULT_LIMITS):
    if environ.get('REQUEST_METHOD') not in ('GET', 'HEAD'):
        check_body(environ, limits)
    elif nothing_to_process(request):
        return
    else:
        check_query(environ.get('QUERY_STRING') or '', limits)
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


#: ``processInputs`` methods that ``factories.read_xmlrpc_call`` does the
#: work of, in linear time and within a body limit.
XMLRPC_READERS = (XMLRPCRequest.processInputs,
                  factories.XMLRPCRequest.processInputs)


def process_xmlrpc(environ, request, max_body=0):
    """Read an XML-RPC call: a body longer than ``max_body`` bytes (0: no
    limit) is refused with 413 before it is parsed."""
    length = (environ.get('CONTENT_LENGTH') or '').strip()
    if max_body and DIGITS_RE.fullmatch(length) and int(length) > max_body:
        raise PayloadTooLarge('The XML-RPC call is larger than %d bytes.'
                              % max_body)
    try:
        if type(request).processInputs in XMLRPC_READERS:
            factories.read_xmlrpc_call(request, max_body)
        else:
            request.processInputs()
    except XMLRPC_ERRORS as exc:
        raise BadInput('The XML-RPC call could not be read: %s'
                       % type(exc).__name__) from exc


class ProcessInputsStage:
    """Read the request's input; input it cannot understand is a 400."""

    settings_schema = IProcessInputsSettings
    contract = Contract(reads=(keys.REQUEST_KEY,))

    def __init__(self, next_app, max_query_fields=400, max_field_markers=8,
                 max_default_fields=16, xmlrpc_max_body=1 << 20,
                 build=None):
        self.next_app = next_app
        self.limits = FormLimits(max_query_fields, max_field_markers,
                                 max_default_fields)
        self.xmlrpc_max_body = xmlrpc_max_body
        # Registered per request interface: the chain's interfaces decide
        # which input it reads, once.
        if build is not None and build.spec is not None:
            self.process = (self.xmlrpc_input
                            if build.provides(IXMLRPCRequest)
                            else self.form_input)
        else:
            self.process = self.any_input

    def __call__(self, environ, start_response):
        self.process(environ, environ[keys.REQUEST_KEY])
        return self.next_app(environ, start_response)

    def xmlrpc_input(self, environ, request):
        process_xmlrpc(environ, request, self.xmlrpc_max_body)

    def form_input(self, environ, request):
        process_form(environ, request, self.limits)

    def any_input(self, environ, request):
        """Without a build context (a stage built by hand): decide per
        request."""
        if IXMLRPCRequest.providedBy(request):
            self.xmlrpc_input(environ, request)
        else:
            self.form_input(environ, request)
