"""The sample site as etc/site-dev.zcml (development, with the sample
administrator) deploys it, through the full pipeline (WebTest, with
wsgiref.validate), on a database in memory."""

import base64
import os
import re
import shutil

import pytest

from tests.conftest import ROOT

SITE_ZCML = os.path.join(ROOT, 'etc', 'site-dev.zcml')
POPULATE = 'zope.pipeline.sample.content.populate'
ADMIN = ('admin', 'admin')


def settings(debug_headers='true'):
    return {'open_root': {'populate': POPULATE},
            'debug_headers': {'enabled': debug_headers}}


@pytest.fixture
def app(make_testapp):
    return make_testapp(SITE_ZCML, settings())


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


def item_titles(html):
    return re.findall(r'<li><a href="[^"]*/item-\d+">([^<]*)</a></li>', html)


# -- reading


def test_folder_page_lists_the_titles_of_its_ten_items(app):
    response = app.get('/folder/page')
    assert response.status_int == 200
    assert response.content_type == 'text/html'
    assert '<title>A page with 10 items</title>' in response.text
    assert item_titles(response.text) == [
        'Item number %d' % number for number in range(1, 11)]
    assert '/@@/zope.pipeline.sample/style.css' in response.text


def test_home_lists_the_folder_and_the_counter(app):
    response = app.get('/')
    assert 'zope.pipeline sample site' in response.text
    assert '<a href="http://localhost/folder">A folder of pages</a>' in \
        response.text
    assert 'href="http://localhost/counter"' in response.text


def test_folder_lists_its_pages_by_title(app):
    response = app.get('/folder')
    assert 'About the sample site' in response.text
    assert 'A page with 10 items' in response.text


def test_item_shows_its_title_and_body(app):
    response = app.get('/folder/page/item-03')
    assert '<h1>Item number 3</h1>' in response.text
    assert 'The body of item number 3.' in response.text


# -- comments


def test_comment_post_is_stored_and_the_client_is_sent_back_to_the_page(
        app):
    response = app.post('/folder/page/@@add-comment',
                        {'author': 'Ann', 'text': 'First & <best>'})
    assert response.status_int == 303
    assert response.headers['Location'] == \
        'http://localhost/folder/page#comments'
    page = app.get('/folder/page').text
    assert 'Comments (1)' in page
    assert '<strong>Ann</strong>:' in page
    assert 'First &amp; &lt;best&gt;' in page


def test_comments_show_newest_first_and_count_all(app):
    for number in range(12):
        app.post('/folder/page/@@add-comment', {'text': 'note %d' % number})
    page = app.get('/folder/page').text
    assert 'Comments (12)' in page
    shown = re.findall(r'note (\d+)', page)
    assert shown == [str(number) for number in range(11, 1, -1)]
    assert '<strong>anonymous</strong>' in page


def comment_form(html):
    """The comment form of a page, as HTML."""
    return re.search(r'<form id="comment-form".*?</form>', html,
                     re.DOTALL).group(0)


def test_an_empty_comment_is_named_empty_next_to_the_form(app):
    response = app.post('/folder/page/@@add-comment',
                        {'author': 'Ann', 'text': '   '}, status=303)
    assert response.headers['Location'] == (
        'http://localhost/folder/page?comment_error=empty#comment-form')
    page = response.follow()
    assert page.status_int == 200
    assert ('<p class="error" id="comment-error" role="alert">The comment '
            'is empty: write something in the Comment field.</p>'
            in comment_form(page.text))
    assert 'Comments (0)' in page.text


def test_reloading_the_page_of_a_refused_comment_posts_nothing(app):
    """POST-redirect-GET: what the browser reloads is the GET."""
    location = app.post('/folder/page/@@add-comment', {'text': ''},
                        status=303).headers['Location']
    for _reload in range(2):
        page = app.get(location)
        assert 'The comment is empty' in page.text
    assert 'Comments (0)' in app.get('/folder/page').text


def test_a_comment_too_long_is_named_so_next_to_the_form(app):
    response = app.post('/folder/page/@@add-comment',
                        {'text': 'x' * 2001}, status=303)
    assert response.headers['Location'].endswith(
        '?comment_error=too-long#comment-form')
    assert 'A comment needs a text of at most 2000 characters' in \
        comment_form(response.follow().text)
    assert 'Comments (0)' in app.get('/folder/page').text


def test_the_page_shows_only_the_reasons_it_knows(app):
    for query in ({'comment_error': '<b>forged</b>'},
                  {'comment_error:list': 'empty'}, {}):
        form = comment_form(app.get('/folder/page', query).text)
        assert 'class="error"' not in form
        assert 'forged' not in form


# -- what the site demonstrates, and where the reader is


def test_home_says_what_the_site_demonstrates_and_how_to_log_in(app):
    html = app.get('/').text
    about = re.search(r'<section class="about">.*?</section>', html,
                      re.DOTALL).group(0)
    for topic in ('Stages', 'Retry', 'CSRF', 'Metrics'):
        assert '<strong>%s</strong>' % topic in about
    assert 'href="http://localhost/@@pipeline.html"' in about
    assert 'href="http://localhost/@@metrics.html"' in about
    assert 'href="http://localhost/counter"' in about
    assert 'href="http://localhost/folder/page"' in about
    assert 'zope-pipeline show-pipeline' in about
    assert '<code>admin</code>, password\n        <code>admin</code>' in about
    assert 'zope-pipeline adduser' in about
    for doc in ('docs/flow.rst', 'docs/explain.md', 'docs/reliability.md',
                'docs/security.md', 'docs/metrics.md', 'README.md'):
        assert '<code>%s</code>' % doc in about
        assert os.path.exists(os.path.join(ROOT, doc))


def test_only_the_home_page_has_the_introduction(app):
    assert 'class="about"' not in app.get('/folder').text


def test_the_pipeline_page_is_show_pipelines_output_for_the_admin(app):
    app.get('/@@pipeline.html', status=401)
    page = app.get('/@@pipeline.html', extra_environ=basic(*ADMIN))
    text = page.html.find('pre', class_='pipeline').get_text()
    assert text.startswith('Request type: browser\n')
    for name in ('virtual_host', 'retry', 'csrf', 'traverse', 'call'):
        assert re.search(r'^ +\d+\. %s$' % name, text, re.MULTILINE)
    assert 'Request type: xmlrpc' in text


def test_the_pipeline_page_draws_the_outer_chain_once_then_each_inner(app):
    html = app.get('/@@pipeline.html', extra_environ=basic(*ADMIN)).html
    outer = html.find('section', class_='outer')
    assert [box['id'] for box in outer.find_all('li', class_='stage')][
        :3] == ['outer-metrics', 'outer-response_cache_poll',
                'outer-security_headers']
    browser = html.find('section', id='request-type-browser')
    boxes = browser.find_all('li', class_='stage')
    names = [box.find('h3').get_text() for box in boxes]
    assert names[:2] == ['open_root', 'handle_error']
    assert html.find('li', id='outer-response_cache_hit') is not None
    assert names[-1] == 'call'
    assert 'csrf' in names
    assert 'csrf' not in [box.find('h3').get_text() for box in html.find(
        'section', id='request-type-xmlrpc').find_all('li', class_='stage')]
    numbers = [int(box['data-number']) for box in boxes]
    assert numbers == list(range(numbers[0], numbers[0] + len(boxes)))
    retry = html.find('li', id='outer-retry')
    assert 'zope.pipeline.attempt' in retry.find('dl', class_='contract') \
        .get_text()
    assert 'max_body' in retry.find('dl', class_='settings').get_text()
    assert retry.find('p', class_='registered').code['title'].endswith(
        'pipeline.zcml:%s' % retry.find('p', class_='registered').get_text()
        .rsplit(':', 1)[1])
    call = html.find('li', id='browser-call')
    assert call.find('span', class_='badge publishes')
    assert 'proxied' in browser.find('dd', class_='security-text').get_text()


def crumbs(html):
    """[(title, url or None)] of a page's breadcrumbs."""
    nav = re.search(r'<nav class="breadcrumbs".*?</nav>', html,
                    re.DOTALL).group(0)
    return [(title, url or None) for url, title in re.findall(
        r'<(?:a href="([^"]*)"|span aria-current="page")>([^<]*)<', nav)]


def test_breadcrumbs_lead_from_the_home_page_to_the_page_read(app):
    home = ('zope.pipeline sample site', 'http://localhost')
    folder = ('A folder of pages', 'http://localhost/folder')
    page = ('A page with 10 items', 'http://localhost/folder/page')
    assert crumbs(app.get('/').text) == [(home[0], None)]
    assert crumbs(app.get('/folder/page').text) == [
        home, folder, (page[0], None)]
    assert crumbs(app.get('/folder/page/item-03').text) == [
        home, folder, page, ('Item number 3', None)]
    assert crumbs(app.get('/folder/@@search', {'q': 'x'}).text) == [
        home, folder, ('Search', None)]
    assert crumbs(app.get('/folder/page/@@edit',
                          extra_environ=basic(*ADMIN)).text) == [
        home, folder, page, ('Edit', None)]
    assert crumbs(app.get('/@@pipeline.html',
                          extra_environ=basic(*ADMIN)).text) == [
        home, ('Pipeline', None)]


def test_comment_form_answers_get_with_405_allowing_post(app):
    response = app.get('/folder/page/@@add-comment', status=405)
    assert response.headers['Allow'] == 'POST'


# -- search


def test_search_finds_the_titles_containing_every_word(app):
    response = app.get('/@@search', {'q': 'NUMBER 1'})
    assert re.findall(r'<li><a href="([^"]*)">([^<]*)</a></li>',
                      response.text) == [
        ('http://localhost/folder/page/item-01', 'Item number 1'),
        ('http://localhost/folder/page/item-10', 'Item number 10')]
    assert '2 results' in response.text


def test_search_in_a_folder_looks_only_below_it(app):
    response = app.get('/folder/@@search', {'q': 'about'})
    assert 'http://localhost/folder/about' in response.text
    assert '1 results' in response.text


def test_search_stops_at_its_limit(app, monkeypatch):
    from zope.pipeline.sample import views
    monkeypatch.setattr(views, 'SEARCH_LIMIT', 3)
    assert '3 results' in app.get('/@@search', {'q': 'item'}).text


def test_search_without_words_lists_nothing(app):
    response = app.get('/@@search', {'q': '  '})
    assert 'results' not in response.text
    assert 'name="q"' in response.text


# -- editing


def test_edit_view_challenges_anonymous_users_with_401(app):
    response = app.get('/folder/page/@@edit', status=401)
    assert response.headers['WWW-Authenticate'].lower().startswith('basic')


def test_edit_view_refuses_a_wrong_password(app):
    app.get('/folder/page/@@edit', extra_environ=basic('admin', 'wrong'),
            status=401)


def test_sample_admin_edits_a_page(app):
    form = app.get('/folder/page/@@edit', extra_environ=basic(*ADMIN))
    assert form.status_int == 200
    assert 'value="A page with 10 items"' in form.text
    response = app.post('/folder/page/@@edit',
                        {'title': 'Renamed', 'body': 'New body'},
                        extra_environ=basic(*ADMIN))
    assert response.status_int == 303
    page = app.get('/folder/page').text
    assert '<h1>Renamed</h1>' in page
    assert 'New body' in page


def test_sample_admin_reads_the_metrics_page_anonymous_users_cannot(app):
    page = app.get('/@@metrics.html', extra_environ=basic(*ADMIN))
    assert page.status_int == 200
    app.get('/@@metrics.html', status=401)


def test_edit_without_a_title_is_refused_with_400(app):
    response = app.post('/folder/page/@@edit', {'title': '', 'body': 'x'},
                        extra_environ=basic(*ADMIN), status=400)
    assert 'A page needs a title' in response.text
    assert '<h1>A page with 10 items</h1>' in app.get('/folder/page').text


def test_anonymous_post_to_edit_changes_nothing(app):
    app.post('/folder/page/@@edit', {'title': 'Defaced'}, status=401)
    assert 'Defaced' not in app.get('/folder/page').text


# -- errors and static files


def test_unknown_url_gets_the_sites_404_page(app):
    response = app.get('/folder/no-such-page', status=404)
    assert 'There is no page at this address' in response.text
    assert 'action="http://localhost/@@search"' in response.text


def test_stylesheet_is_served_from_the_resource_directory(app):
    response = app.get('/@@/zope.pipeline.sample/style.css')
    assert response.content_type == 'text/css'
    assert b'font-family' in response.body


def test_missing_resource_is_404(app):
    app.get('/@@/zope.pipeline.sample/missing.css', status=404)


# -- counter


def test_counter_post_adds_one_and_get_shows_the_value(app):
    assert app.get('/counter').text == '0'
    assert app.post('/counter/@@increment').text == '1'
    assert app.post('/counter/@@increment').text == '2'
    assert app.get('/counter').text == '2'


def test_counter_increment_refuses_get(app):
    app.get('/counter/@@increment', status=405)
    assert app.get('/counter').text == '0'


# -- debug headers


def test_debug_headers_name_the_serving_process_and_attempt(app):
    response = app.get('/folder/page')
    assert response.headers['X-Pipeline-Pid'] == str(os.getpid())
    assert response.headers['X-Pipeline-Attempt'] == '1'


def test_debug_headers_are_on_error_responses_too(app):
    response = app.get('/nowhere', status=404)
    assert response.headers['X-Pipeline-Pid'] == str(os.getpid())


def test_without_debug_headers_responses_do_not_name_the_process(
        make_testapp):
    app = make_testapp(SITE_ZCML, settings(debug_headers='false'))
    response = app.get('/folder/page')
    assert 'X-Pipeline-Pid' not in response.headers
    assert 'X-Pipeline-Attempt' not in response.headers


# -- the deployment files


def copy_etc(tmp_path):
    etc = tmp_path / 'etc'
    shutil.copytree(os.path.join(ROOT, 'etc'), etc)
    return etc


def test_deploy_ini_serves_the_sample_site_from_sqlite_in_var_data(
        clean_zope, tmp_path):
    import webtest

    from zope.pipeline.serving.startup import load_application
    from zope.pipeline.serving.startup import open_databases
    etc = copy_etc(tmp_path)
    (tmp_path / 'var').mkdir()  # the checkout's var/ (var/README)
    application, publisher = load_application(str(etc / 'deploy.ini'))
    open_databases(publisher)
    assert (tmp_path / 'var' / 'data' / 'main.sqlite3').exists()
    response = webtest.TestApp(application, lint=True).get('/folder/page')
    assert len(item_titles(response.text)) == 10
    assert 'X-Pipeline-Pid' in response.headers


def test_deploy_mysql_ini_names_the_mysql_storage(clean_zope):
    from zope.pipeline.commands.init_db import mysql_target
    from zope.pipeline.commands.init_db import zodb_config_of
    path = zodb_config_of(os.path.join(ROOT, 'etc', 'deploy-mysql.ini'))
    assert path == os.path.join(ROOT, 'etc', 'zodb-mysql.conf')
    target = mysql_target(path)
    assert (target['db'], target['user']) == ('zope_pipeline',
                                              'zope_pipeline')


@pytest.mark.parametrize('name', ['zodb-sqlite.conf', 'zodb-mysql.conf'])
def test_storage_configurations_are_history_free_with_a_local_cache(name):
    from zope.pipeline.zodb.storage import load_database_config
    database = load_database_config(
        os.path.join(ROOT, 'etc', name)).database[0]
    storage = database.config.storage.config
    assert storage.keep_history is False
    assert storage.cache_local_mb > 0
    assert database.config.pool_size >= 4


def test_the_sample_pages_are_compiled_by_chameleon(app):
    from zope.pipeline.publishing.templates import ChameleonProgram
    from zope.pipeline.sample.views import PageView
    assert app.get('/folder/page').status_int == 200
    template = PageView.__dict__['template']
    assert isinstance(template._v_program, ChameleonProgram)
