"""The error page in debug mode (handle_error.debug = true): the site's
frames first, the pipeline's folded, the request with its credentials
masked; and werkzeug's interactive debugger (debugger = true): for local
clients of a development site only."""

import logging

import pytest
import webtest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.app import make_app

from . import inner

pytest.importorskip('werkzeug')


@pytest.fixture
def debug_app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path, handle_error__debug='true')


def failing_page(app, **headers):
    return app.get('/folder/doc/@@fail?kind=boom&token=sekrit', status=500,
                   headers=headers)


def test_debug_page_shows_the_sites_frames_before_the_folded_pipeline(
        debug_app):
    page = failing_page(debug_app).text
    folded = page.index('<details>')
    # the view's frame (tests/functional/inner/views.py) comes first
    assert 'inner/views.py' in page[:folded]
    assert 'zope/pipeline/stages/' not in page[:folded]
    # the pipeline's frames are in the folded full traceback
    assert 'zope/pipeline/stages/call.py' in page[folded:]
    assert 'frames of the pipeline folded' in page


def test_debug_page_shows_the_request(debug_app):
    page = failing_page(debug_app, **{'X-Custom': 'visible'}).text
    assert '<th>Method</th><td>GET</td>' in page
    assert 'http://localhost/folder/doc/@@fail' in page
    assert '<th>Form fields</th><td>kind, token</td>' in page
    assert '<th>X-Custom</th><td>visible</td>' in page
    assert '<th>Principal</th>' in page


@pytest.mark.parametrize('header', [
    'Authorization', 'Cookie', 'Proxy-Authorization', 'X-Auth-Token',
    'X-Api-Key'])
def test_debug_page_masks_credential_headers(debug_app, header):
    page = failing_page(debug_app, **{header: 'Basic c2VrcmV0'}).text
    assert 'c2VrcmV0' not in page
    assert '<th>%s</th><td>(masked)</td>' % header in page


def test_debug_page_never_shows_a_clients_cgi_authorization(debug_app):
    # create_request removes it from the environ unless trusted
    # (create_request.trust_cgi_authorization); the page masks it when a
    # gateway sets it (tests/unit/test_debugpage.py)
    page = failing_page(debug_app,
                        **{'Cgi-Authorization': 'Basic c2VrcmV0'}).text
    assert 'c2VrcmV0' not in page
    assert 'Cgi-Authorization' not in page


def test_debug_page_never_shows_form_values(debug_app):
    # the query string and form values may hold a token or a password
    page = failing_page(debug_app).text
    assert 'sekrit' not in page


def test_without_debug_the_page_has_no_request_data(make_testapp, tmp_path):
    app = inner.build(make_testapp, tmp_path)
    page = failing_page(app, **{'X-Custom': 'visible'}).text
    assert 'visible' not in page
    assert '<details>' not in page


# -- the interactive debugger


def debugger_app(tmp_path, development=True, **environ):
    publisher = make_app(inner.site_zcml(tmp_path), inner.settings(),
                         development=development, debugger=True)
    environ.setdefault('REMOTE_ADDR', '127.0.0.1')
    return webtest.TestApp(publisher, extra_environ=environ, lint=False)


def test_the_debugger_shows_a_local_clients_server_error(clean_zope,
                                                         tmp_path, caplog):
    inner.reset()
    app = debugger_app(tmp_path)
    # werkzeug writes the traceback to wsgi.errors too
    response = app.get('/folder/doc/@@fail?kind=boom', status=500,
                       expect_errors=True)
    assert 'Werkzeug Debugger' in response.text
    assert 'RuntimeError' in response.text
    # logged as any server error
    assert any(record.getMessage().startswith('GET /folder/doc/@@fail failed')
               for record in caplog.records
               if record.levelno == logging.ERROR)


def test_the_debugger_leaves_client_errors_to_the_site(clean_zope,
                                                       tmp_path):
    inner.reset()
    app = debugger_app(tmp_path)
    response = app.get('/folder/missing', status=404)
    assert 'Werkzeug' not in response.text


def test_the_debugger_logs_its_pin(clean_zope, tmp_path, caplog):
    caplog.set_level(logging.WARNING, 'zope.pipeline.debugger')
    debugger_app(tmp_path)
    [record] = [record for record in caplog.records
                if record.name == 'zope.pipeline.debugger']
    assert 'PIN' in record.getMessage()


@pytest.mark.parametrize('environ', [
    {'REMOTE_ADDR': '192.0.2.7'},
    {'REMOTE_ADDR': '127.0.0.1', 'HTTP_X_FORWARDED_FOR': '192.0.2.7'},
    {'REMOTE_ADDR': '127.0.0.1', 'HTTP_FORWARDED': 'for=192.0.2.7'},
    {'REMOTE_ADDR': ''},
])
def test_the_debugger_is_refused_to_a_client_not_on_this_machine(
        clean_zope, tmp_path, environ):
    inner.reset()
    app = debugger_app(tmp_path, **environ)
    page = app.get('/folder/doc/@@fail?kind=boom', status=500).text
    assert 'Werkzeug' not in page
    assert 'Traceback' not in page
    app.get('/?__debugger__=yes&cmd=resource&f=style.css', status=403)


def test_a_production_site_with_the_debugger_does_not_start(clean_zope,
                                                            tmp_path):
    with pytest.raises(ConfigurationError) as caught:
        debugger_app(tmp_path, development=False)
    assert 'development' in str(caught.value)


def test_a_production_site_whose_zcml_adds_the_debugger_does_not_start(
        clean_zope, tmp_path):
    zcml = inner.site_zcml(tmp_path, '<include package="zope.pipeline" '
                           'file="debugger.zcml" />')
    with pytest.raises(ConfigurationError) as caught:
        make_app(zcml, inner.settings())
    assert 'debugger stage' in str(caught.value)


def test_the_debugger_closes_the_sites_body_once(clean_zope, tmp_path):
    from zope.pipeline.stages.debugger import DebuggerStage
    closed = []

    class Body(list):
        def close(self):
            closed.append(True)

    stage = DebuggerStage(lambda environ, start: Body([b'x']))
    body = stage({'REMOTE_ADDR': '127.0.0.1', 'REQUEST_METHOD': 'GET',
                  'PATH_INFO': '/', 'wsgi.url_scheme': 'http',
                  'SERVER_NAME': 'localhost', 'SERVER_PORT': '80'},
                 lambda status, headers, exc_info=None: None)
    next(iter(body))  # a server that stops early
    body.close()
    assert closed == [True]
