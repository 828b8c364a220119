"""The response cache stage through the full pipeline, on the sample site
(etc/site-dev.zcml) stored in RelStorage on SQLite.

"Another process" is a second ``ZODB.DB`` opened on the same SQLite
files: what it commits reaches the site's database only through
RelStorage's invalidation polling, as a commit of another mod_wsgi
process or host does.
"""

import base64
import os
import time

import pytest
import transaction
from ZODB.Connection import Connection
from zope.component import getGlobalSiteManager
from zope.interface import directlyProvides
from zope.publisher.interfaces import IDefaultSkin
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.publisher.interfaces.browser import IBrowserSkinType
from zope.publisher.interfaces.browser import IDefaultBrowserLayer
from zope.securitypolicy.principalpermission import (
    AnnotationPrincipalPermissionManager,
)

from zope.pipeline.zodb import storage
from zope.pipeline.zodb.responsecache import RecordingConnection

from .inner import sqlite_config
from tests.conftest import ROOT
from tests.exposition import key
from tests.exposition import samples

SITE_ZCML = os.path.join(ROOT, 'etc', 'site-dev.zcml')
POPULATE = 'zope.pipeline.sample.content.populate'
#: A cookie the site does not list as irrelevant: the cache stays out of
#: the way, the request is rendered by the same pipeline.
FRESH = {'Cookie': 'fresh=1'}
#: The headers only stored pages carry, and Age.
CACHE_HEADERS = ('Age', 'ETag', 'Cache-Control', 'Vary')


def settings(config, **cache):
    cache.setdefault('enabled', 'true')
    return {'open_root': {'populate': POPULATE, 'zodb_config': config},
            'metrics': {'modwsgi': 'false', 'flush_interval': '3600'},
            'response_cache': cache}


@pytest.fixture
def config(tmp_path):
    return sqlite_config(tmp_path)


@pytest.fixture
def app(make_testapp, config):
    return make_testapp(SITE_ZCML, settings(config))


@pytest.fixture
def other(app, config):
    """Commits as another process: a DB of its own on the same files."""
    app.get('/')            # the site's process created the database
    db = storage.open_database(config)
    yield OtherProcess(db)
    db.close()


class OtherProcess:

    def __init__(self, db):
        self.db = db

    def commit(self, change):
        """Run ``change(site root)`` in a transaction of its own, commit."""
        manager = transaction.TransactionManager(explicit=True)
        connection = self.db.open(transaction_manager=manager)
        try:
            manager.begin()
            change(connection.root()['Application'])
            manager.commit()
        finally:
            connection.close()


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


def stored(app, path, **kw):
    """Ask twice: the key is learned, then the page recorded and stored."""
    app.get(path, **kw)
    return app.get(path, **kw)


def is_hit(response):
    return 'Age' in response.headers


# -- hits, validators


def test_the_third_request_of_a_page_is_a_hit_with_age_and_etag(app):
    first = app.get('/folder/page')
    second = app.get('/folder/page')
    third = app.get('/folder/page')
    assert 'ETag' not in first.headers and not is_hit(first)
    assert 'ETag' in second.headers and not is_hit(second)
    assert is_hit(third) and int(third.headers['Age']) >= 0
    assert third.headers['ETag'] == second.headers['ETag']
    assert third.headers['Cache-Control'] == 'no-cache'
    assert third.body == second.body == first.body


@pytest.fixture
def requests_made(monkeypatch):
    """The browser requests made, counted."""
    from zope.pipeline.engine.factories import BrowserRequest
    made = []
    init = BrowserRequest.__init__

    def counting(self, *args, **kw):
        made.append(self)
        init(self, *args, **kw)
    monkeypatch.setattr(BrowserRequest, '__init__', counting)
    return made


def test_a_hit_is_answered_before_the_request_is_made(app, requests_made):
    stored(app, '/folder/page')
    assert len(requests_made) == 2
    assert is_hit(app.get('/folder/page'))
    assert is_hit(app.get('/folder/page', headers={
        'Accept-Language': 'de'})) is False     # another key: rendered
    assert len(requests_made) == 3


class IThemed(IDefaultBrowserLayer):
    """A layer of the tests' own."""


directlyProvides(IThemed, IBrowserSkinType)


def themed(request):
    """A default skin adapter called with the request (not the class's
    alone): the front door cannot make its requests' keys."""
    return IThemed if request.getHeader('X-Theme') else IDefaultBrowserLayer


def test_pages_of_a_skin_chosen_per_request_are_answered_after_the_request(
        make_testapp, config, requests_made):
    app = make_testapp(SITE_ZCML, settings(config, vary='X-Theme'))
    getGlobalSiteManager().registerAdapter(themed, (IBrowserRequest,),
                                           IDefaultSkin)
    plain = stored(app, '/folder/page')
    dark = stored(app, '/folder/page', headers={'X-Theme': 'dark'})
    made = len(requests_made)
    again = app.get('/folder/page')
    dark_again = app.get('/folder/page', headers={'X-Theme': 'dark'})
    assert is_hit(again) and is_hit(dark_again)
    assert again.headers['ETag'] == plain.headers['ETag']
    assert dark_again.headers['ETag'] == dark.headers['ETag'] != \
        plain.headers['ETag']
    assert len(requests_made) == made + 2       # made, to know the skin
    assert 'X-Theme' in dark_again.headers['Vary']


def test_a_default_skin_registered_later_is_not_answered_the_old_pages(
        app, requests_made):
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))
    getGlobalSiteManager().registerAdapter(IThemed, (IBrowserRequest,),
                                           IDefaultSkin)
    after = app.get('/folder/page')
    assert not is_hit(after)
    assert IThemed.providedBy(requests_made[-1])
    stored(app, '/folder/page')
    made = len(requests_made)
    assert is_hit(app.get('/folder/page'))
    assert len(requests_made) == made           # the new shape, learned


def test_a_poll_that_fails_leaves_the_page_to_the_chain(app, monkeypatch):
    from zope.pipeline.zodb.responsecache import SharedPoll
    stored(app, '/folder/page')

    def unreachable(poll):
        raise ConnectionError('the database went away')
    monkeypatch.setattr(SharedPoll, 'changes', unreachable)
    rendered = app.get('/folder/page')
    assert not is_hit(rendered) and 'ETag' not in rendered.headers
    monkeypatch.undo()
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))


def test_a_hit_begins_a_transaction_and_commits_nothing(app, monkeypatch):
    from zope.pipeline.stages import transactions
    commits = []
    commit_last = transactions.commit_last
    monkeypatch.setattr(transactions, 'commit_last', lambda *args: (
        commits.append(args), commit_last(*args)))
    stored(app, '/folder/page')
    assert len(commits) == 2
    assert is_hit(app.get('/folder/page'))
    assert is_hit(app.head('/folder/page'))
    assert len(commits) == 2        # no transaction stage, nothing later


def test_a_hit_opens_no_connection_of_the_database(app, config,
                                                     monkeypatch):
    stored(app, '/folder/page')
    db = storage.database_for(config).get()
    opened = []
    open_ = db.open
    monkeypatch.setattr(db, 'open', lambda *args, **kw: (
        opened.append(args), open_(*args, **kw))[1])
    assert is_hit(app.get('/folder/page'))
    assert opened == []
    assert not is_hit(app.get('/folder/page', headers=FRESH))
    assert len(opened) == 1


def test_a_page_the_shared_poll_refuses_to_keep_is_rendered_again(
        app, monkeypatch):
    from zope.pipeline.zodb.responsecache import SharedPoll
    monkeypatch.setattr(SharedPoll, 'store', lambda *args: None)
    stored(app, '/folder/page')
    assert not is_hit(app.get('/folder/page'))


def test_if_none_match_of_the_current_etag_gets_304_without_body(app):
    etag = stored(app, '/folder/page').headers['ETag']
    response = app.get('/folder/page', headers={'If-None-Match': etag},
                       status=304)
    assert response.body == b''
    assert response.headers['ETag'] == etag
    assert 'Content-Type' not in response.headers


def test_a_recording_request_with_the_current_etag_gets_304(
        make_testapp, config):
    # the page was dropped (evicted here; or kept by another process):
    # rendered again, it has the same ETag, and the client's copy is good
    app = make_testapp(SITE_ZCML, settings(config, max_bytes='7000'))
    etag = stored(app, '/folder/page/item-01').headers['ETag']
    stored(app, '/folder/page/item-02')
    app.get('/folder/page/item-01')                     # learned again
    response = app.get('/folder/page/item-01',
                       headers={'If-None-Match': etag}, status=304)
    assert response.headers['ETag'] == etag and response.body == b''
    assert is_hit(app.get('/folder/page/item-01'))


def test_if_none_match_of_an_old_etag_gets_the_page(app):
    stored(app, '/folder/page')
    response = app.get('/folder/page', headers={'If-None-Match': '"old"'})
    assert response.status_int == 200 and is_hit(response)


def test_head_is_answered_from_the_stored_get(app):
    get = stored(app, '/folder/page')
    head = app.head('/folder/page')
    assert is_hit(head) and head.body == b''
    assert head.headers['Content-Length'] == get.headers['Content-Length']


def test_security_headers_are_on_hits(app):
    hit = stored(app, '/folder/page') and app.get('/folder/page')
    assert is_hit(hit)
    assert hit.headers['X-Content-Type-Options'] == 'nosniff'
    assert 'X-Frame-Options' in hit.headers


def test_each_host_has_its_own_page(app):
    stored(app, '/folder/page')
    other = app.get('/folder/page', extra_environ={
        'HTTP_HOST': '127.0.0.1:80'})
    assert not is_hit(other)
    assert 'http://127.0.0.1/folder/page' in other.text


def test_each_query_and_language_has_its_own_page(app):
    stored(app, '/folder/page')
    refused = app.get('/folder/page?comment_error=empty')
    assert not is_hit(refused) and 'The comment is empty' in refused.text
    german = app.get('/folder/page', headers={'Accept-Language': 'de'})
    assert not is_hit(german)


# -- never stale


def test_a_commit_of_another_process_to_the_page_renders_it_again(
        app, other):
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))

    def retitle(root):
        root['folder']['page'].title = 'Changed elsewhere'
    other.commit(retitle)
    response = app.get('/folder/page')
    assert not is_hit(response)
    assert '<h1>Changed elsewhere</h1>' in response.text
    again = app.get('/folder/page')
    assert is_hit(again) and '<h1>Changed elsewhere</h1>' in again.text


@pytest.fixture
def polls(monkeypatch):
    """The shared polls made, counted."""
    from zope.pipeline.zodb.responsecache import SharedPoll
    made = []
    changes = SharedPoll.changes

    def counting(self):
        made.append(self)
        return changes(self)
    monkeypatch.setattr(SharedPoll, 'changes', counting)
    return made


def received_at(instant):
    """The environ mod_wsgi gives a request Apache received at
    ``instant`` (the wall clock)."""
    return {'mod_wsgi.request_start': instant}


def test_a_request_that_waited_in_the_queue_shares_the_poll_before_it(
        app, other, polls):
    stored(app, '/folder/page')
    received = time.time()      # Apache received it; it waits its turn
    time.sleep(0.002)
    before = len(polls)
    assert is_hit(app.get('/folder/page'))  # the request before it polls
    assert len(polls) == before + 1
    queued = app.get('/folder/page', extra_environ=received_at(received))
    assert is_hit(queued) and len(polls) == before + 1

    def retitle(root):
        root['folder']['page'].title = 'Changed elsewhere'
    other.commit(retitle)
    # received after the commit: it polls, and renders the new page
    response = app.get('/folder/page', extra_environ=received_at(
        time.time()))
    assert len(polls) == before + 2
    assert not is_hit(response)
    assert '<h1>Changed elsewhere</h1>' in response.text


@pytest.fixture
def sends(monkeypatch):
    """Polls sent ahead (``SharedPoll.send``), counted: each shared poll
    sends as the speedups seam does on MySQL, its answer read by the
    storage's own poll when ``response_cache_hit`` needs it."""
    from zope.pipeline.zodb.responsecache import SharedPoll
    made = []

    def sender(self):
        def send():
            made.append(self)
            return self.changes
        return send
    monkeypatch.setattr(SharedPoll, 'sender', sender)
    return made


def cache_of(app):
    from zope.pipeline.stages.response_cache import SHARED_KEY
    return app.app.shared[SHARED_KEY]


def test_a_page_answered_before_has_its_poll_sent_as_it_comes_in(
        app, other, sends):
    stored(app, '/folder/page')
    assert sends == []      # its key was not known as it came in
    assert is_hit(app.get('/folder/page'))
    assert len(sends) == 1 and is_hit(app.get('/folder/page'))
    assert len(sends) == 2

    def retitle(root):
        root['folder']['page'].title = 'Changed elsewhere'
    other.commit(retitle)
    response = app.get('/folder/page')
    assert len(sends) == 3 and not is_hit(response)
    assert '<h1>Changed elsewhere</h1>' in response.text
    poll = cache_of(app).poll
    assert poll.done == poll.started and not poll.lock.locked()


def test_a_poll_sent_for_a_request_the_outer_stages_answer_is_completed(
        app, sends):
    from zope.pipeline.stages.response_cache import raw_request
    stored(app, '/folder/page')
    cache = cache_of(app)
    environ = {'HTTP_HOST': 'localhost:80', 'SCRIPT_NAME': '',
               'PATH_INFO': '/_ready', 'QUERY_STRING': ''}
    cache.heat(raw_request(environ), True)
    assert app.get('/_ready').text.strip() == 'ready'
    assert len(sends) == 1
    assert cache.poll.done == cache.poll.started
    assert not cache.poll.lock.locked()
    assert is_hit(app.get('/folder/page'))


def test_a_poll_sent_ahead_that_fails_leaves_the_page_to_the_chain(
        app, sends, monkeypatch):
    from zope.pipeline.zodb.responsecache import SharedPoll
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))

    def unreachable(poll):
        raise ConnectionError('the database went away')
    monkeypatch.setattr(SharedPoll, 'changes', unreachable)
    rendered = app.get('/folder/page')
    assert len(sends) == 2 and not is_hit(rendered)
    assert not cache_of(app).poll.lock.locked()


def test_a_sent_poll_failing_where_no_page_is_asked_is_only_logged(
        app, sends, monkeypatch, caplog):
    from zope.pipeline.stages.response_cache import raw_request
    from zope.pipeline.zodb.responsecache import SharedPoll
    stored(app, '/folder/page')
    cache = cache_of(app)
    cache.heat(raw_request({'HTTP_HOST': 'localhost:80', 'SCRIPT_NAME': '',
                            'PATH_INFO': '/_ready', 'QUERY_STRING': ''}),
               True)

    def unreachable(poll):
        raise ConnectionError('the database went away')
    monkeypatch.setattr(SharedPoll, 'changes', unreachable)
    with caplog.at_level('DEBUG', 'zope.pipeline.stages.response_cache'):
        assert app.get('/_ready').text.strip() == 'ready'
    assert 'the poll sent ahead failed' in caplog.text
    assert len(sends) == 1 and not cache.poll.lock.locked()


def test_a_poll_that_cannot_be_sent_is_made_by_the_front_door(
        app, monkeypatch, caplog, polls):
    from zope.pipeline.zodb.responsecache import SharedPoll

    def sender(self):
        def send():
            raise ConnectionError('the database went away')
        return send
    monkeypatch.setattr(SharedPoll, 'sender', sender)
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))      # known as it comes in
    made = len(polls)
    with caplog.at_level('DEBUG', 'zope.pipeline.stages.response_cache'):
        assert is_hit(app.get('/folder/page'))
    assert 'the poll could not be sent' in caplog.text
    assert len(polls) == made + 1
    assert not cache_of(app).poll.lock.locked()


def test_a_page_whose_key_was_forgotten_has_no_poll_sent(app, sends):
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))
    cache = cache_of(app)
    assert len(cache.hot) == 1
    # the page and its learned key evicted: the next request's key is
    # not known, so the one after it sends no poll
    for entry_key, value in list(cache._entries.items()):
        cache.discard(entry_key, value)
    assert not is_hit(app.get('/folder/page'))
    assert cache.hot == {} and len(sends) == 2
    app.get('/folder/page')
    assert len(sends) == 2 and len(cache.hot) == 1


def test_without_poll_ahead_no_poll_is_sent(make_testapp, config, sends):
    app = make_testapp(SITE_ZCML, settings(config, poll_ahead='false'))
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))
    assert sends == []


def test_without_server_arrival_a_queued_request_polls_again(
        make_testapp, config, polls):
    app = make_testapp(SITE_ZCML, settings(config, server_arrival='false'))
    stored(app, '/folder/page')
    received = time.time()
    time.sleep(0.002)
    app.get('/folder/page')
    made = len(polls)
    queued = app.get('/folder/page', extra_environ=received_at(received))
    assert is_hit(queued) and len(polls) == made + 1


def test_a_commit_to_an_object_the_page_did_not_read_keeps_the_hit(
        app, other):
    stored(app, '/folder/page/item-03')

    def count(root):
        root['counter'].increment()
    other.commit(count)
    response = app.get('/folder/page/item-03')
    assert is_hit(response)
    assert app.get('/counter', headers=FRESH).text == '1'


def test_a_comment_renders_the_page_again(app):
    stored(app, '/folder/page')
    app.post('/folder/page/@@add-comment', {'author': 'Ann', 'text': 'Hi'})
    response = app.get('/folder/page')
    assert not is_hit(response) and 'Hi' in response.text


def test_a_storage_that_does_not_poll_checks_the_serials_of_each_hit(
        make_testapp, monkeypatch):
    from zope.pipeline.zodb.responsecache import SharedPoll
    app = make_testapp(SITE_ZCML, settings(''))     # MappingStorage
    monkeypatch.setattr(SharedPoll, 'sync', None)   # never polled
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page'))
    app.post('/folder/page/@@add-comment', {'author': 'Ann', 'text': 'Hi'})
    response = app.get('/folder/page')
    assert not is_hit(response) and 'Hi' in response.text
    again = app.get('/folder/page')
    assert is_hit(again) and 'Hi' in again.text


def test_the_counter_page_follows_each_increment(app, other):
    stored(app, '/counter')
    for expected in ('1', '2'):
        app.post('/counter/increment')
        response = app.get('/counter')
        assert not is_hit(response) and response.text == expected
    other.commit(lambda root: root['counter'].increment())
    assert app.get('/counter').text == '3'


def test_a_local_grant_changed_in_the_database_invalidates_the_page(
        app, other):
    stored(app, '/folder/page')

    def deny(root):
        AnnotationPrincipalPermissionManager(
            root['folder']).denyPermissionToPrincipal('zope.View',
                                                      'zope.anybody')
    other.commit(deny)
    response = app.get('/folder/page', status=401)
    assert not is_hit(response)


def test_a_grant_changed_in_an_existing_grant_map_invalidates_the_page(
        app, other):
    # the folder keeps its (emptied) map: the deny changes that map only.
    # The security policy's shared table of objects that grant nothing
    # must not answer for it while the page is recorded, or the map is
    # not among what the page read (it was served stale, 200 for 401).
    other.commit(grant(True))
    other.commit(grant(False))
    stored(app, '/folder/@@search?q=number+3')
    assert is_hit(app.get('/folder/@@search?q=number+3'))
    other.commit(grant(True))
    response = app.get('/folder/@@search?q=number+3', status=401)
    assert not is_hit(response)


# -- never one principal's page to another, nothing kept that may not be


def test_requests_with_credentials_are_never_answered_from_the_cache(app):
    stored(app, '/folder/page')
    for _ in range(3):
        response = app.get('/folder/page', headers=basic('admin', 'admin'))
        assert not is_hit(response) and 'ETag' not in response.headers


def test_a_page_rendered_for_a_principal_is_not_kept(app, monkeypatch):
    # an authentication that needs no credentials header (say, by
    # address) makes the page a principal's: not learned, not stored
    from zope.interface import Interface

    from zope.pipeline.stages import response_cache

    class IAnonymousNever(Interface):
        """Provided by no principal."""
    monkeypatch.setattr(response_cache, 'IUnauthenticatedPrincipal',
                        IAnonymousNever)
    for _ in range(3):
        assert 'ETag' not in app.get('/folder/page').headers


def test_requests_with_cookies_are_rendered(app):
    stored(app, '/folder/page')
    response = app.get('/folder/page', headers={'Cookie': 'session=1'})
    assert not is_hit(response)


def test_cookies_the_site_lists_as_irrelevant_are_ignored(
        make_testapp, config):
    app = make_testapp(SITE_ZCML, settings(config,
                                           ignored_cookies='_ga theme'))
    stored(app, '/folder/page')
    assert is_hit(app.get('/folder/page', headers={'Cookie': '_ga=1'}))
    assert not is_hit(app.get('/folder/page',
                              headers={'Cookie': '_ga=1; s=2'}))


def test_answers_that_are_not_200_are_not_kept(app):
    for _ in range(3):
        response = app.get('/folder/page/edit', status=401)
        assert 'ETag' not in response.headers
    for _ in range(3):
        assert 'ETag' not in app.get('/nothing-here', status=404).headers


def test_views_not_declared_cacheable_are_not_kept(app):
    for _ in range(3):
        assert 'ETag' not in app.get('/@@/zope.pipeline.sample/style.css'
                                     ).headers


def test_a_get_that_writes_is_not_kept(app, monkeypatch):
    from zope.security.proxy import removeSecurityProxy

    from zope.pipeline.sample.views import ItemView
    render = ItemView.__call__

    def __call__(self):     # the page (a method of another name is not)
        removeSecurityProxy(self.context).title = self.context.title + '!'
        return render(self)
    monkeypatch.setattr(ItemView, '__call__', __call__)
    bodies = [app.get('/folder/page/item-03') for _ in range(3)]
    assert not any('ETag' in response.headers for response in bodies)
    assert 'Item number 3!!!' in bodies[-1].text


def test_a_get_that_commits_is_not_kept(app, monkeypatch):
    # what it loads after its commit is of another snapshot
    from zope.pipeline.sample.views import ItemView
    render = ItemView.__call__

    def __call__(self):
        transaction.commit()
        return render(self)
    monkeypatch.setattr(ItemView, '__call__', __call__)
    bodies = [app.get('/folder/page/item-03') for _ in range(3)]
    assert not any('ETag' in response.headers for response in bodies)


def test_a_page_larger_than_max_entry_bytes_is_not_kept(
        make_testapp, config):
    app = make_testapp(SITE_ZCML, settings(config, max_entry_bytes='100'))
    stored(app, '/folder/page')
    assert not is_hit(app.get('/folder/page'))


def test_least_recently_used_pages_are_evicted_beyond_max_bytes(
        make_testapp, config):
    app = make_testapp(SITE_ZCML, settings(config, max_bytes='12000'))
    for number in range(1, 8):
        stored(app, '/folder/page/item-%02d' % number)
    assert is_hit(app.get('/folder/page/item-07'))
    assert not is_hit(app.get('/folder/page/item-01'))


def test_off_unless_enabled(make_testapp, config):
    app = make_testapp(SITE_ZCML, settings(config, enabled='false'))
    for _ in range(3):
        assert 'ETag' not in app.get('/folder/page').headers


def test_a_database_whose_connections_do_not_record_keeps_nothing(
        make_testapp, config, monkeypatch):
    # (a database of another connection class: install leaves it alone)
    monkeypatch.setattr(storage.responsecache, 'install', lambda db: False)
    app = make_testapp(SITE_ZCML, settings(config))
    for _ in range(3):
        response = app.get('/folder/page')
        assert 'ETag' not in response.headers
    assert '<h1>' in response.text


def test_without_the_cache_connections_are_zodbs_own(make_testapp,
                                                     config):
    app = make_testapp(SITE_ZCML, settings(config, enabled='false'))
    app.get('/folder/page')
    assert storage.database_for(config).db.klass is Connection


def test_with_the_cache_connections_record_what_they_load(app, config):
    app.get('/folder/page')
    assert storage.database_for(config).db.klass is RecordingConnection


# -- metrics


def test_hits_misses_invalidations_and_stores_are_in_the_metrics(app):
    stored(app, '/folder/page')
    app.get('/folder/page')
    app.post('/folder/page/@@add-comment', {'author': 'a', 'text': 'b'})
    app.get('/folder/page')
    exposed = samples(app.get('/_metrics').text)
    view = 'Page:index.html'

    def events(event):
        return exposed.get(key('zope_pipeline_response_cache_events_total',
                               view=view, event=event))
    assert (events('hits'), events('stores'), events('invalidations'),
            events('misses')) == (1, 2, 1, 2)
    assert exposed[key('zope_pipeline_requests_total', view=view,
                       status='200')] == 4


# -- a property: random reads and commits of another process, never stale

PAGES = ('/', '/folder', '/folder/page', '/folder/page/item-03',
         '/folder/page/item-07', '/counter', '/folder/@@search?q=number+3',
         '/folder/page?comment_error=empty')


def retitle(path, title):
    def change(root):
        ob = root
        for name in path:
            ob = ob[name]
        ob.title = title
    return change


def add_item(root):
    from zope.pipeline.sample.content import Item
    page = root['folder']['page']
    name = 'item-%02d' % (len(page) + 1)
    page[name] = Item('Item number %d' % (len(page) + 1), 'New.')


def grant(deny):
    def change(root):
        manager = AnnotationPrincipalPermissionManager(root['folder'])
        if deny:
            manager.denyPermissionToPrincipal('zope.View', 'zope.anybody')
        else:
            manager.unsetPermissionForPrincipal('zope.View', 'zope.anybody')
    return change


CHANGES = {
    'page title': lambda text: retitle(('folder', 'page'), text),
    'item title': lambda text: retitle(('folder', 'page', 'item-03'), text),
    'folder title': lambda text: retitle(('folder',), text),
    'counter': lambda text: lambda root: root['counter'].increment(),
    'comment': lambda text: lambda root: root['folder']['page'].add_comment(
        'x', text),
    'new item': lambda text: add_item,
    'deny view': lambda text: grant(True),
    'allow view': lambda text: grant(False),
}


@pytest.mark.parametrize('stamped, ahead', [
    (False, False), (True, False), (True, True)],
    ids=['no-server-arrival', 'mod_wsgi-arrival', 'polls-sent-ahead'])
def test_random_reads_and_commits_never_give_a_stale_page(
        app, other, stamped, ahead, request):
    if ahead:
        request.getfixturevalue('sends')
    from hypothesis import HealthCheck
    from hypothesis import given
    from hypothesis import settings as hypothesis_settings
    from hypothesis import strategies as st

    reads = st.tuples(st.just('read'), st.sampled_from(PAGES),
                      st.booleans())
    commits = st.tuples(st.just('commit'), st.sampled_from(sorted(CHANGES)),
                        st.text('abc', min_size=1, max_size=3))
    hits = []

    @hypothesis_settings(max_examples=100, deadline=None, database=None,
                         suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(reads, reads, commits), min_size=1,
                    max_size=12))
    def check(steps):
        for kind, what, detail in steps:
            if kind == 'commit':
                other.commit(CHANGES[what](detail))
                continue
            # as mod_wsgi stamps each request when Apache receives it
            extra = received_at(time.time()) if stamped else None
            cached = app.get(what, expect_errors=True, extra_environ=extra)
            if detail:      # a validating client
                etag = cached.headers.get('ETag')
                if etag:
                    again = app.get(what, headers={'If-None-Match': etag},
                                    expect_errors=True)
                    assert again.status_int == 304
            fresh = app.get(what, headers=FRESH, expect_errors=True)
            hits.append(is_hit(cached))
            assert 'Age' not in fresh.headers
            assert (cached.status, cached.body) == (fresh.status, fresh.body)
            assert without_cache_headers(cached) == \
                without_cache_headers(fresh)
    check()
    assert any(hits)        # the cache answered, and was checked


def without_cache_headers(response):
    return sorted((name, value) for name, value in response.headerlist
                  if name not in CACHE_HEADERS)
