"""The parts of zope.pipeline.explain that the sample site does not reach
(tests/functional/test_explain.py runs the command on it)."""

import io

import pytest
import transaction
from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import PrincipalLookupError
from zope.component import provideAdapter
from zope.component import provideUtility
from zope.interface import Interface
from zope.interface import implementer
from zope.publisher.browser import TestRequest as BrowserRequest
from zope.publisher.http import HTTPRequest
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.http import IHTTPRequest
from zope.security.checker import CheckerPublic
from zope.security.checker import NamesChecker
from zope.security.checker import defineChecker
from zope.security.management import endInteraction
from zope.security.management import newInteraction

from zope.pipeline import environ as keys
from zope.pipeline import explain
from zope.pipeline.stages.call import MethodCallStage


class Thing:
    """Neither a view nor a method, without a checker of its own."""


def test_an_object_published_itself_is_called():
    thing = Thing()
    assert explain.published_view(thing) == (thing, '__call__')


def test_the_place_of_an_object_without_context_or_parent_is_itself():
    thing = Thing()
    assert explain.context_of(thing) is thing
    parent = Thing()
    thing.__parent__ = parent
    assert explain.context_of(thing) is parent


def test_no_checker_means_no_permission():
    assert explain.permission_to_call('text', '__call__') is None
    assert explain.permission_to_call(Thing(), '__call__') is None


def test_another_error_is_its_own_message():
    assert explain.failure_message(ValueError('odd')) == 'odd'


def test_a_group_the_utility_does_not_know_is_kept(clean_zope):
    @implementer(IAuthentication)
    class Groups:
        def getPrincipal(self, id):
            if id == 'known':
                return Principal('known', ('inner', 'unknown'))
            raise PrincipalLookupError(id)

    class Principal:
        def __init__(self, id, groups):
            self.id = id
            self.groups = groups

    provideUtility(Groups(), IAuthentication)
    principal = Principal('someone', ('known', 'unknown'))
    assert explain.groups_of(principal) == ['known', 'unknown', 'inner']


def test_an_object_without_permission_is_explained_without_security():
    manager = transaction.TransactionManager(explicit=True)
    manager.begin()
    explanation = explain.Explanation('GET', '/thing')
    environ = {explain.EXPLANATION: explanation,
               keys.REQUEST_KEY: BrowserRequest(),
               keys.PUBLISHED: Thing(), keys.TRANSACTION_MANAGER: manager}
    statuses = []
    body = explain.conclude(environ, lambda status, headers:
                            statuses.append(status))
    assert statuses == ['200 OK'] and body
    assert explanation.view == {'class': Thing.__module__ + '.Thing',
                                'name': None, 'method': '__call__',
                                'template': None, 'trusted_as': None}
    assert explanation.security is None
    assert manager.isDoomed()
    manager.abort()


def test_an_object_without_publishing_traverser_is_not_found(clean_zope):
    publication = explain.RecordingPublication([], {}, keys.CONTEXT)
    thing = Thing()
    with pytest.raises(NotFound):
        publication.traverseName(BrowserRequest(), thing, 'x')
    assert publication.steps == [{
        'name': 'x', 'from': {'class': Thing.__module__ + '.Thing',
                              'name': None},
        'default_view': False, 'namespace': None, 'traverser': None,
        'object': None}]


class PutView:
    """The view of Thing that plain HTTP PUT calls."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def PUT(self):
        """Replace the thing."""


class Principal:
    id = 'someone'
    title = 'Someone'
    groups = ()


def test_plain_http_explains_the_view_named_after_its_method(clean_zope):
    defineChecker(PutView, NamesChecker(['PUT'], CheckerPublic))
    provideAdapter(PutView, (Thing, IHTTPRequest), Interface, name='PUT')
    manager = transaction.TransactionManager(explicit=True)
    manager.begin()
    explanation = explain.Explanation('PUT', '/thing')
    explanation.publishing = MethodCallStage(None)
    request = HTTPRequest(io.BytesIO(b''), {'REQUEST_METHOD': 'PUT'})
    request.setPrincipal(Principal())
    environ = {explain.EXPLANATION: explanation, keys.REQUEST_KEY: request,
               keys.PUBLISHED: Thing(), keys.TRANSACTION_MANAGER: manager}
    newInteraction(request)
    try:
        explain.conclude(environ, lambda status, headers: None)
    finally:
        endInteraction()
        manager.abort()
    assert explanation.view == {'class': PutView.__module__ + '.PutView',
                                'name': None, 'method': 'PUT',
                                'template': None, 'trusted_as': None}
    assert explanation.security == {
        'permission': 'zope.Public', 'allowed': True,
        'principal_ids': ['someone'], 'grants': []}


def test_a_page_of_a_template_alone_is_named_by_its_own_class(tmp_path):
    from zope.browserpage.simpleviewclass import SimpleViewClass
    template = tmp_path / 'alone.pt'
    template.write_text('<p>alone</p>')
    page = SimpleViewClass(str(template))(Thing(), BrowserRequest())
    assert explain.view_class(page) is type(page)
    assert explain.template_of(page) == str(template)
