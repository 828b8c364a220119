"""site_events: BeforeTraverseEvent for every object traversed (so the local
site hooks set the site), EndRequestEvent at the end, and no site left on
the thread after any request."""

import pytest
from zope.component.hooks import getSite

from . import inner


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


def test_before_traverse_event_is_notified_for_each_object_traversed(app):
    app.get('/folder/doc/@@whoami')
    traversed = [(event['class'], event['name'])
                 for event in inner.event_records('before_traverse')]
    assert traversed == [('Folder', None), ('Folder', 'folder'),
                         ('Document', 'doc'), ('WhoAmI', 'whoami')]


def test_local_site_hooks_make_the_local_site_current_during_the_view(app):
    at_site = app.get('/site/doc/@@whoami').json
    at_root = app.get('/folder/doc/@@whoami').json
    assert at_site['site_name'] == 'site'
    # component lookups see the local site's registry, not only getSite()
    assert at_site['site_label'] == 'site'
    assert at_root['site_label'] == 'root'


def test_end_request_event_is_notified_once_after_the_view(app):
    app.get('/site/doc/@@whoami')
    kinds = [record.get('event') or record.get('view')
             for record in inner.seen
             if record.get('event', 'view') != 'before_traverse'
             and 'probe' not in record]
    assert kinds == ['whoami', 'end_request']
    event = inner.event_records('end_request')[0]
    assert event['request'].getURL() == 'http://localhost/site/doc/@@whoami'
    assert event['object'] is not None
    assert event['site'] is not None


def test_end_request_event_is_notified_after_an_error_too(app):
    app.get('/site/doc/@@fail?kind=boom', status=500)
    assert len(inner.event_records('end_request')) == 1


@pytest.mark.parametrize('path, status', [
    ('/site/doc/@@whoami', 200),
    ('/site/doc/@@fail?kind=boom', 500),
    ('/site/doc/@@fail?kind=local', 418),
    ('/site/doc/@@secret', 401),
    ('/site/missing', 404),
    ('/site/doc/@@fail?kind=broken', 500),
])
def test_site_is_cleared_after_every_request_including_errors(
        app, path, status):
    app.get(path, status=status)
    assert getSite() is None
