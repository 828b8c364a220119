"""zope.pipeline.publishing.debugpage: frames split, credentials masked, the
URL of
a request that failed before it was set up."""

import sys

from zope.pipeline.publishing import debugpage


def exc_info_of(function):
    try:
        function()
    except Exception:
        return sys.exc_info()


def test_a_failure_in_the_pipeline_alone_says_so():
    from zope.pipeline.http import wsgi
    info = exc_info_of(lambda: wsgi.run_all([lambda: 1 / 0]))
    page = debugpage.debug_html(info)
    # this test's own lambda is a frame of the site's; run_all's is folded
    assert 'test_debugpage.py' in page.split('<details>')[0]
    assert 'zope/pipeline/http/wsgi.py' not in page.split('<details>')[0]
    assert '<h3>The request</h3>' not in page


def test_only_pipeline_frames_are_named_so():
    info = exc_info_of(lambda: debugpage.masked_value(None, None))
    inside = info[2].tb_next.tb_next  # masked_value's frame alone
    own, folded = debugpage.split_frames(inside)
    assert own == [] and folded == 1
    assert "Only the pipeline's own frames" in debugpage.debug_html(
        (info[0], info[1], inside))


def test_the_url_of_a_request_not_set_up_comes_from_the_environ():
    class Request:
        principal = None
        form = {}

        def getURL(self):
            raise ValueError('not traversed')

    environ = {'wsgi.url_scheme': 'https', 'HTTP_HOST': 'example.org',
               'SCRIPT_NAME': '/site', 'PATH_INFO': '/page',
               'QUERY_STRING': 'token=x', 'REQUEST_METHOD': 'GET'}
    assert debugpage.request_url(environ, Request()) == \
        'https://example.org/site/page'
    rows = dict(debugpage.request_rows(environ))
    assert rows['Principal'] == '(not authenticated yet)'
    assert rows['Form fields'] == '(none)'
    assert rows['Host'] == 'example.org'


def test_a_gateways_cgi_authorization_is_masked():
    assert debugpage.masked_value('HTTP_CGI_AUTHORIZATION',
                                  'Basic c2VrcmV0') == '(masked)'


def test_session_and_secret_headers_are_masked():
    assert debugpage.masked_value('HTTP_X_SESSION_ID', 'v') == '(masked)'
    assert debugpage.masked_value('HTTP_X_CLIENT_SECRET', 'v') == '(masked)'
    assert debugpage.masked_value('HTTP_ACCEPT', 'v') == 'v'
