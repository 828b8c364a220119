"""The fix_relative_links stage: the base tag of pages whose URL does not
name them (default views, :method), on string and streamed bodies, and the
redirect mode."""

import os

import pytest

from fixtures.testing import call_wsgi
from fixtures.testing import classic_app
from fixtures.views import PROBE

HERE = os.path.dirname(os.path.abspath(__file__))
WITHOUT_STAGE = os.path.join(HERE, 'without_fix_relative_links.zcml')


@pytest.fixture
def app(make_testapp):
    return classic_app(make_testapp)


def base_tag(url):
    return b'<head>\n<base href="' + url.encode() + b'" />\n'


# -- when a base is inserted

def test_base_is_inserted_after_head_for_a_folder_default_view(app):
    response = app.get('/folder')
    assert base_tag('http://localhost/folder/@@index.html') in response.body
    assert response.body.count(b'<base') == 1


def test_base_is_inserted_after_head_for_a_document_default_view(app):
    response = app.get('/folder/doc')
    assert response.body.startswith(
        b'<html>\n' + base_tag('http://localhost/folder/doc/index.html') +
        b'\n<title>Hello</title>')


def test_base_is_inserted_for_a_method_suffix(app):
    response = app.post('/folder/doc', {'index.html:method': ''})
    assert base_tag('http://localhost/folder/doc/index.html') in response.body


@pytest.mark.parametrize('path', ['/folder/', '/folder/doc/index.html',
                                  '/folder/doc/@@index.html', '/'])
def test_no_base_when_the_url_names_the_page(app, path):
    assert b'<base' not in app.get(path).body


def test_content_length_counts_the_base_tag(app):
    response = app.get('/folder/doc')
    assert int(response.headers['Content-Length']) == len(response.body)
    plain = app.get('/folder/doc/index.html')
    inserted = len(b'\n<base href="http://localhost/folder/doc/index.html"'
                   b' />\n')
    assert len(response.body) == len(plain.body) + inserted


def test_no_base_when_the_page_has_its_own(app):
    response = app.post('/folder/doc', {'own-base.html:method': ''})
    assert response.body.count(b'<base') == 1
    assert b'<base href="http://elsewhere/" />' in response.body


def test_no_base_in_a_body_that_is_not_html(app):
    response = app.post('/folder/doc', {'not-html.html:method': ''})
    assert response.body == b'<head>not html</head>'
    assert response.content_type == 'text/plain'


def test_untyped_html_is_guessed_with_a_warning_and_gets_a_base(app):
    response = app.post('/folder/doc', {'untyped.html:method': ''})
    assert response.headers['Content-Type'] == 'text/html'
    assert response.headers['X-Content-Type-Warning'] == \
        'guessed from content'
    assert base_tag('http://localhost/folder/doc/untyped.html') in \
        response.body
    assert int(response.headers['Content-Length']) == len(response.body)


def test_virtual_host_urls_are_the_base(make_testapp):
    app = classic_app(make_testapp, virtual_host={
        'trusted_proxies': '127.0.0.1',
        'allowed_hosts': 'localhost example.com'})
    response = app.get('/++vh++https:example.com:443/++/folder')
    assert base_tag('https://example.com/folder/@@index.html') in \
        response.body


def test_error_pages_get_no_base(app):
    response = app.get('/folder/doc/fail.html', status=409)
    assert b'<base' not in response.body


# -- streamed bodies

def test_streamed_html_gets_its_base_from_the_first_chunks_only(app):
    started, body = call_wsgi(app.app, '/folder/streamed')
    try:
        first = next(iter(body))
        # Two of the eleven chunks make the head: nothing else was read.
        assert PROBE.produced == 2
        assert first == (b'<html><head>\n<base href="http://127.0.0.1/'
                         b'folder/streamed/stream.html" />\n'
                         b'<title>Streamed</title></head><body>')
        assert started.status == '200 Ok'
        rest = b''.join(body)
    finally:
        body.close()
    assert PROBE.produced == 11
    assert rest.endswith(b'</body></html>')


def test_streamed_html_with_a_length_gets_the_length_recomputed(app):
    response = app.get('/folder/streamed?with_length:boolean=1')
    assert b'<base href="http://localhost/folder/streamed/stream.html" />' \
        in response.body
    assert int(response.headers['Content-Length']) == len(response.body)


def test_streamed_html_without_content_type_is_guessed(app):
    started, body = call_wsgi(app.app, '/folder/streamed',
                              query='untyped:boolean=1&with_length:boolean=1')
    try:
        data = b''.join(body)
    finally:
        body.close()
    assert started.header('Content-Type') == 'text/html'
    assert started.header('X-Content-Type-Warning') == 'guessed from content'
    assert int(started.header('Content-Length')) == len(data)
    assert b'<base href=' in data


def test_streamed_head_reads_the_head_and_closes_the_stream(app):
    get = app.get('/folder/streamed?with_length:boolean=1')
    head = app.head('/folder/streamed?with_length:boolean=1')
    assert head.body == b''
    assert head.headers['Content-Length'] == get.headers['Content-Length']
    assert PROBE.produced == 2
    assert PROBE.closed == 1


# -- without the stage

def test_without_the_stage_no_base_is_inserted(make_testapp):
    app = classic_app(make_testapp, WITHOUT_STAGE)
    response = app.get('/folder/doc')
    assert b'<h1>Hello</h1>' in response.body
    assert b'<base' not in response.body
    assert b'<base' not in app.get('/folder/streamed').body


def test_base_mode_is_not_called_its_filter_is_its_work():
    """In the 'base' mode the stage passes every request through (the
    chain calls the next stage directly: zope.pipeline.engine.publisher); in
    the
    'redirect' mode it is called."""
    from zope.pipeline.stages.fix_relative_links import FixRelativeLinksStage

    def next_app(environ, start_response):
        return []

    assert FixRelativeLinksStage(next_app).passes_through is True
    assert FixRelativeLinksStage(next_app, mode='redirect').passes_through \
        is False


def called_by(stage):
    """The stage ``stage`` calls next (the chain: its first), through its
    bound ``__call__`` (zope.pipeline.engine.publisher.call_link)."""
    called = getattr(stage, 'next_app', getattr(stage, 'app', None))
    return getattr(called, '__self__', called)


def test_base_mode_leaves_the_stage_out_of_the_calls(app):
    publisher = app.app
    checked = []
    for name, (_registration, spec) in publisher.request_types.items():
        chain = publisher.chain_for(spec)
        if 'fix_relative_links' not in chain.names():
            continue
        apps = [stage.app for stage in chain.stages]
        fix = apps[chain.names().index('fix_relative_links')]
        assert not any(called_by(stage) is fix
                       for stage in apps)
        assert called_by(chain) is not fix
        checked.append(name)
    assert 'browser' in checked  # the loop ran on a chain with the stage


# -- redirect mode

@pytest.fixture
def redirecting(make_testapp):
    return classic_app(make_testapp,
                       fix_relative_links={'mode': 'redirect'})


def test_redirect_mode_redirects_a_default_view_to_the_trailing_slash(
        redirecting):
    response = redirecting.get('/folder', status=301)
    assert response.headers['Location'] == 'http://localhost/folder/'
    response = redirecting.get('/folder/doc?x=1', status=301)
    assert response.headers['Location'] == 'http://localhost/folder/doc/?x=1'
    response = redirecting.head('/folder', status=301)
    assert response.headers['Location'] == 'http://localhost/folder/'


def test_redirect_mode_is_called(redirecting):
    publisher = redirecting.app
    chain = publisher.chain_for(publisher.request_types['browser'][1])
    apps = [stage.app for stage in chain.stages]
    fix = apps[chain.names().index('fix_relative_links')]
    assert any(called_by(stage) is fix for stage in apps)


def fix_relative_links_described(publisher):
    """show-pipeline's data and text for the browser chain's stage."""
    from zope.pipeline.engine.introspect import describe
    from zope.pipeline.engine.introspect import format_text
    data = describe(publisher)
    stages = data['request_types']['browser']['stages']
    stage = [stage for stage in stages
             if stage['name'] == 'fix_relative_links'][0]
    return stage, format_text(data)


def test_show_pipeline_says_the_base_mode_is_left_out_of_the_calls(app):
    stage, text = fix_relative_links_described(app.app)
    assert stage['passes_through'] is True
    assert 'called:        no: it passes every request through' in text


def test_show_pipeline_says_nothing_of_the_called_redirect_mode(
        redirecting):
    stage, text = fix_relative_links_described(redirecting.app)
    assert stage['passes_through'] is False
    assert 'called:        no' not in text


def test_redirect_mode_serves_the_slashed_url_without_a_base(redirecting):
    response = redirecting.get('/folder/')
    assert b'<a href="doc">doc</a>' in response.body
    assert b'<base' not in response.body
    assert b'<h1>Hello</h1>' in redirecting.get('/folder/doc/').body


def test_redirect_mode_stays_on_the_virtual_host_of_a_trusted_proxy(
        make_testapp):
    app = classic_app(make_testapp, fix_relative_links={'mode': 'redirect'},
                      virtual_host={'trusted_proxies': '127.0.0.1',
                                    'allowed_hosts': 'localhost example.com'})
    response = app.get('/++vh++https:example.com:443/++/folder', status=301)
    assert response.headers['Location'] == 'https://example.com/folder/'


def test_redirect_mode_never_redirects_off_the_request_host():
    from zope.pipeline import environ as keys
    from zope.pipeline.stages.fix_relative_links import trailing_slash_url

    class Request:
        def getURL(self, level=0):
            return 'http://evil.example/folder'

        def getApplicationURL(self):
            return 'http://localhost'
    environ = {keys.DEFAULT_VIEW: ('@@index.html',), 'PATH_INFO': '/folder',
               keys.REQUEST_KEY: Request()}
    assert trailing_slash_url(environ) is None


def test_redirect_mode_still_inserts_a_base_where_it_cannot_redirect(
        redirecting):
    response = redirecting.post('/folder')
    assert base_tag('http://localhost/folder/@@index.html') in response.body
    response = redirecting.post('/folder/doc', {'index.html:method': ''})
    assert base_tag('http://localhost/folder/doc/index.html') in \
        response.body


# -- the filter on streams, directly

class Stream:
    """A streamed body that records how it was used."""

    def __init__(self, *chunks, error=None):
        self.chunks = chunks
        self.error = error
        self.closed = 0

    def __iter__(self):
        yield from self.chunks
        if self.error is not None:
            raise self.error

    def close(self):
        self.closed += 1


def filtered(stream, content_type=None, base='http://localhost/a/b.html'):
    from zope.publisher.browser import TestRequest

    from zope.pipeline.stages.fix_relative_links import BaseTagFilter

    response = TestRequest().response
    if content_type is not None:
        response.setHeader('Content-Type', content_type)
    response.setBase(base)
    body = BaseTagFilter(scan_limit=64)(response, stream)
    data = b''.join(body)
    body.close()
    return response, data


def test_empty_stream_stays_empty(clean_zope):
    stream = Stream()
    response, data = filtered(stream, 'text/html')
    assert data == b''
    assert stream.closed == 1


def test_untyped_stream_that_is_not_html_is_left_alone(clean_zope):
    stream = Stream(b'plain ', b'<head> text')
    response, data = filtered(stream)
    assert data == b'plain <head> text'
    assert response.getHeader('Content-Type') is None


def test_head_is_looked_for_in_the_first_scan_limit_bytes_only(clean_zope):
    stream = Stream(b'<html>' + b' ' * 70, b'<head></head>')
    response, data = filtered(stream, 'text/html')
    assert b'<base' not in data


def test_stream_failing_before_its_head_is_complete_is_closed(clean_zope):
    stream = Stream(b'<html><he', error=RuntimeError('broken stream'))
    with pytest.raises(RuntimeError):
        filtered(stream, 'text/html')
    assert stream.closed == 1


def test_base_is_written_in_the_charset_of_the_page(clean_zope):
    base = 'http://localhost/caf\u00e9/index.html'
    response, data = filtered(Stream(b'<head></head>'),
                              'text/html;charset=iso-8859-1', base)
    assert b'<base href="http://localhost/caf\xe9/index.html" />' in data
    response, data = filtered(Stream(b'<head></head>'),
                              'text/html;charset=no-such', base)
    assert b'<base href="http://localhost/caf\xc3\xa9/index.html" />' in data


def test_an_encoded_base_is_remembered_per_base_and_content_type(
        clean_zope, monkeypatch):
    from zope.pipeline.stages import fix_relative_links
    fix_relative_links.clear_bases()
    monkeypatch.setattr(fix_relative_links, 'MAX_BASES', 3)
    base = 'http://localhost/caf\u00e9/<i>.html'
    for _ in range(2):
        for content_type, expected in [
                ('text/html;charset=iso-8859-1', b'caf\xe9/&lt;i&gt;'),
                ('text/html', b'caf\xc3\xa9/&lt;i&gt;'),
                ('text/html;charset=ascii', b'caf&#233;/&lt;i&gt;')]:
            response, data = filtered(Stream(b'<head></head>'),
                                      content_type, base)
            assert b'<base href="http://localhost/%s.html" />' % expected \
                in data
    assert len(fix_relative_links._bases) == 3
    response, data = filtered(Stream(b'<head></head>'), 'text/html',
                              'http://localhost/other')
    assert b'<base href="http://localhost/other" />' in data
    assert len(fix_relative_links._bases) == 1
