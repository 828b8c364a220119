"""request.publication: what views used of zope.app.publication's
ZopePublication (db, root_name, getApplication, proxy, traversal), for the
request being published."""

import pytest
from zope.publisher.interfaces import IPublication
from zope.security.proxy import isinstance as proxied_isinstance
from zope.security.proxy import removeSecurityProxy

from zope.pipeline.publishing.publication import Publication

from . import inner


@pytest.fixture
def app(make_testapp, tmp_path):
    return inner.build(make_testapp, tmp_path)


@pytest.fixture
def published(monkeypatch):
    """The request.publication of the next request, and what it said."""
    seen = {}
    make = Publication.__init__

    def record(publication, *args, **kwargs):
        make(publication, *args, **kwargs)
        seen['publication'] = publication

    monkeypatch.setattr(Publication, '__init__', record)
    return seen


def test_request_publication_is_an_ipublication_with_the_request_db(
        app, published):
    app.get('/folder/doc/@@whoami')
    publication = published['publication']
    assert IPublication.providedBy(publication)
    assert publication.db is not None
    assert publication.root_name == 'Application'


def test_get_application_is_the_root_of_the_request_proxied(app, published):
    from zope.publisher.browser import TestRequest
    from zope.security.management import endInteraction
    from zope.security.management import newInteraction
    app.get('/folder/doc/@@whoami')
    publication = published['publication']
    root = publication.db.open().root()['Application']
    environ = {'zope.pipeline.root': lambda: root}
    fresh = Publication([], environ, 'context')
    request = TestRequest()
    newInteraction(request)
    try:
        application = fresh.getApplication(request)
        assert removeSecurityProxy(application) is root
        assert application is not root
        assert proxied_isinstance(application, type(root))
        assert removeSecurityProxy(fresh.proxy(root)) is root
    finally:
        endInteraction()
        root._p_jar.close()


def test_publication_steps_done_by_stages_do_nothing_and_errors_reraise():
    publication = Publication([], {}, 'context')
    assert publication.db is None
    assert publication.root_name == 'Application'
    for step in (publication.afterTraversal, publication.afterCall,
                 publication.endRequest):
        assert step(None, None) is None
    assert publication.beforeTraversal(None) is None
    try:
        raise KeyError('boom')
    except KeyError:
        import sys
        info = sys.exc_info()
    with pytest.raises(KeyError):
        publication.handleException(None, None, info)


def test_call_object_applies_the_form_like_the_classic_publication():
    from zope.publisher.browser import TestRequest
    request = TestRequest(form={'name': 'world'})
    publication = Publication([], {}, 'context')
    assert publication.callObject(
        request, lambda name: 'hello ' + name) == 'hello world'


def test_path_through_etc_process_starts_at_the_application_controller(
        clean_zope):
    # the classic publisher's getApplication: ++etc++process is reached
    # from the application controller (not a site), not from the ZODB root
    from zope.component import provideUtility
    from zope.publisher.browser import TestRequest
    from zope.traversing.interfaces import IEtcNamespace

    class Controller:
        pass

    class Process:
        __parent__ = Controller()

    request = TestRequest(PATH_INFO='/++etc++process/@@index.html')
    request.setTraversalStack(['@@index.html', '++etc++process'])
    publication = Publication([], {'zope.pipeline.root': object}, 'context')
    # without the process namespace (zope.app.applicationcontrol), the root
    assert type(removeSecurityProxy(
        publication.getApplication(request))) is object
    provideUtility(Process(), IEtcNamespace, 'process')
    application = publication.getApplication(request)
    assert removeSecurityProxy(application) is Process.__parent__
    request.setTraversalStack(['@@index.html'])
    assert type(removeSecurityProxy(
        publication.getApplication(request))) is object
