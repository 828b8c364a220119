"""What the error page shows in debug mode (``handle_error.debug =
true``, development only): the error, the site's own frames first (the
pipeline's folded away under the full traceback), and the request that
failed, its credentials masked.

A frame is the pipeline's when its file is in the zope.pipeline package
(but for its sample site, which is an application like the user's);
every other frame (the site's code, its templates, the libraries it
calls) is listed first, innermost last, as Python lists them.  The
request shows its method, URL (without the query string, which may hold
a token), principal, the names of its form fields (not their values: a
password field is one) and its headers, the value of each credential
header (``CREDENTIAL_HEADERS``, and any whose name says token, secret,
password, session or key) replaced by ``MASK``.
"""

import html
import os
import re
import traceback

#: The zope.pipeline package's directory, whose frames are folded.
PIPELINE_DIRECTORY = os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))) + os.sep
#: ... but for the sample site's, an application.
SAMPLE_DIRECTORY = os.path.join(PIPELINE_DIRECTORY, 'sample') + os.sep

#: The environ keys of the headers carrying credentials.
CREDENTIAL_HEADERS = frozenset((
    'HTTP_AUTHORIZATION', 'HTTP_PROXY_AUTHORIZATION', 'HTTP_COOKIE',
    'HTTP_CGI_AUTHORIZATION', 'HTTP_X_CSRF_TOKEN', 'HTTP_X_API_KEY',
))
#: ... and any header whose name holds one of these words.
CREDENTIAL_WORDS = re.compile(
    r'AUTH|TOKEN|SECRET|PASSWORD|PASSWD|SESSION|COOKIE|KEY', re.I)
MASK = '(masked)'

STYLE = '''\
<style>
.debug { font-family: system-ui, sans-serif; max-width: 72rem; }
.debug pre { white-space: pre-wrap; overflow-wrap: anywhere;
  background: #f6f6f4; padding: .5rem; border-radius: 4px; }
.debug .frame { margin: .25rem 0; }
.debug .where { color: #555; font-size: .9em; overflow-wrap: anywhere; }
.debug table { border-collapse: collapse; width: 100%; }
.debug th, .debug td { text-align: left; vertical-align: top;
  padding: .15rem .5rem; border-bottom: 1px solid #ddd;
  overflow-wrap: anywhere; }
.debug th { width: 14rem; font-weight: 600; }
</style>
'''


def is_pipeline_frame(filename):
    """Whether a frame of ``filename`` is the pipeline's own."""
    path = os.path.abspath(filename)
    return path.startswith(PIPELINE_DIRECTORY) and \
        not path.startswith(SAMPLE_DIRECTORY)


def split_frames(tb):
    """(the site's frames, the number of the pipeline's) of a
    traceback, as ``traceback.FrameSummary`` objects."""
    frames = traceback.extract_tb(tb)
    own = [frame for frame in frames if not is_pipeline_frame(frame.filename)]
    return own, len(frames) - len(own)


def masked_value(key, value):
    """The value shown for the environ ``key``: ``MASK`` for a
    credential."""
    if key in CREDENTIAL_HEADERS or CREDENTIAL_WORDS.search(key[5:]):
        return MASK
    return value


def request_rows(environ, request=None):
    """(label, value) of the failed request, credentials masked."""
    rows = [('Method', environ.get('REQUEST_METHOD', '')),
            ('URL', request_url(environ, request))]
    principal = getattr(request, 'principal', None)
    rows.append(('Principal', '%s (%s)' % (principal.id, principal.title)
                 if principal is not None else '(not authenticated yet)'))
    form = getattr(request, 'form', None) or {}
    rows.append(('Form fields', ', '.join(sorted(map(str, form)))
                 or '(none)'))
    for key in sorted(environ):
        if key.startswith('HTTP_'):
            name = key[5:].replace('_', '-').title()
            rows.append((name, masked_value(key, str(environ[key]))))
    return rows


def request_url(environ, request=None):
    """The URL the client asked for, without its query string."""
    if request is not None:
        try:
            return request.getURL()
        except Exception:  # an error before traversal set it up
            pass
    scheme = environ.get('wsgi.url_scheme', 'http')
    host = environ.get('HTTP_HOST') or environ.get('SERVER_NAME', '')
    return '%s://%s%s%s' % (scheme, host, environ.get('SCRIPT_NAME', ''),
                            environ.get('PATH_INFO', ''))


def frame_html(frame):
    return ('<div class="frame"><div class="where">%s, line %s, in '
            '<b>%s</b></div><pre>%s</pre></div>' % (
                html.escape(frame.filename), frame.lineno,
                html.escape(frame.name),
                html.escape((frame.line or '').strip() or '(no source)')))


def debug_html(exc_info, environ=None, request=None):
    """The debug part of an error page: the error, the site's frames, the
    full traceback folded (``<details>``), the request."""
    error_type, error, tb = exc_info
    own, folded = split_frames(tb)
    parts = ['<div class="debug">', STYLE,
             '<h2>%s</h2>' % html.escape(
                 ''.join(traceback.format_exception_only(error_type, error))
                 .strip()),
             '<h3>Where it failed (innermost last)</h3>']
    parts.extend(frame_html(frame) for frame in own)
    if not own:
        parts.append('<p>Only the pipeline\'s own frames.</p>')
    parts.append('<details><summary>The full traceback (%d frames of the '
                 'pipeline folded above)</summary><pre>%s</pre></details>'
                 % (folded, html.escape(''.join(
                     traceback.format_exception(*exc_info)))))
    if environ is not None:
        parts.append('<h3>The request</h3><table>')
        parts.extend('<tr><th>%s</th><td>%s</td></tr>'
                     % (html.escape(label), html.escape(value))
                     for label, value in request_rows(environ, request))
        parts.append('</table>')
    parts.append('</div>')
    return ''.join(parts)
