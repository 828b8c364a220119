"""zope.pipeline._speedups.zope_browserpage: a view template Chameleon
compiled is called without zope.pagetemplate's zope.tales context, and
renders what zope.browserpage's own call renders (which the tests
marked ``view_call`` run both ways: stock and with the speedup)."""

import os
import subprocess
import sys

import pytest
from zope.browserpage.viewpagetemplatefile import ViewPageTemplateFile
from zope.component import provideUtility
from zope.pagetemplate.engine import TrustedEngine
from zope.pagetemplate.interfaces import IPageTemplateEngine
from zope.pagetemplate.pagetemplate import PageTemplateEngine
from zope.pagetemplate.pagetemplate import PTRuntimeError
from zope.publisher.browser import TestRequest as StockTestRequest

from zope.pipeline import _speedups
from zope.pipeline._speedups import zope_browserpage
from zope.pipeline.publishing import templates
from zope.pipeline.publishing.templates import ChameleonProgram

from .test_templates import Content
from .test_templates import PageView
from .test_templates import render
from .test_templates import template_file  # noqa: F401 - a fixture


def stock_call():
    """zope.browserpage's own ``ViewPageTemplateFile.__call__``, whether
    the speedup is installed or not."""
    return zope_browserpage.State.replaced or \
        ViewPageTemplateFile.__dict__['__call__']


@pytest.fixture
def seam_restored():
    """The view template's call and the seam's state, as they were before
    the test (the speedups may be installed by an application made
    before)."""
    before = ViewPageTemplateFile.__dict__['__call__']
    replaced = zope_browserpage.State.replaced
    yield
    ViewPageTemplateFile.__call__ = before
    zope_browserpage.State.replaced = replaced


@pytest.fixture(params=['stock', 'speedups'])
def view_call(request, seam_restored):
    """zope.browserpage's own call, then ours."""
    zope_browserpage.uninstall()
    assert ViewPageTemplateFile.__call__ is stock_call()
    if request.param == 'speedups':
        assert zope_browserpage.install()
        assert ViewPageTemplateFile.__call__ is \
            zope_browserpage.call_view_template
    return request.param


def render_again(template_file, items, form=None, request=None):
    """The second render of a view template compiled by Chameleon: the
    first compiles it, the stock way."""
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    request = request or StockTestRequest(form=form or {})
    view = PageView(Content(), request, items)
    template = ViewPageTemplateFile(template_file)
    first = template(view)
    assert isinstance(template._v_program, ChameleonProgram)
    return first, template(view), template


@pytest.mark.parametrize('items,form', [
    (['one', 'two', 'three'], {}),
    ([], {'q': 'term'}),
])
def test_a_compiled_view_template_renders_as_zope_tal_renders_it(
        view_call, template_file, items, form, monkeypatch):
    expected, classic = render(template_file, items, form)
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    view = PageView(Content(), StockTestRequest(form=form), items)
    template = ViewPageTemplateFile(template_file)
    first = template(view)  # compiles it, the stock way
    assert isinstance(template._v_program, ChameleonProgram)
    contexts = []
    get_context = TrustedEngine.getContext

    def spy(*args, **kw):
        contexts.append(args)
        return get_context(*args, **kw)

    monkeypatch.setattr(TrustedEngine, 'getContext', spy)
    assert first == template(view) == expected
    # the speedup makes no zope.tales context; the stock call does
    assert len(contexts) == (view_call == 'stock')


def test_install_puts_ours_and_uninstall_the_very_stock_call_back(
        seam_restored):
    stock = stock_call()
    assert zope_browserpage.is_browserpages_own(stock)
    zope_browserpage.uninstall()
    assert ViewPageTemplateFile.__dict__['__call__'] is stock
    zope_browserpage.uninstall()  # nothing of ours to take away
    assert ViewPageTemplateFile.__dict__['__call__'] is stock
    assert zope_browserpage.install()
    assert zope_browserpage.install()  # once
    assert ViewPageTemplateFile.__dict__['__call__'] is \
        zope_browserpage.call_view_template
    zope_browserpage.uninstall()
    assert ViewPageTemplateFile.__dict__['__call__'] is stock


def test_the_seam_installs_and_uninstalls_it(seam_restored):
    assert 'zope_browserpage' in _speedups.MODULES
    stock = stock_call()
    was_installed = _speedups.State.installed
    zope_browserpage.uninstall()
    _speedups.uninstall()
    _speedups.install()
    try:
        assert ViewPageTemplateFile.__call__ is \
            zope_browserpage.call_view_template
    finally:
        _speedups.uninstall()
        assert ViewPageTemplateFile.__dict__['__call__'] is stock
        # the whole seam as the tests before left it (its other modules
        # too: the functional tests ask for them)
        if was_installed:
            _speedups.install()


def test_importing_the_templates_and_the_speedup_installs_nothing():
    code = ('import zope.pipeline.publishing.templates, '
            'zope.pipeline._speedups.zope_browserpage as speedup; '
            'from zope.browserpage.viewpagetemplatefile import '
            'ViewPageTemplateFile as T; '
            'assert speedup.is_browserpages_own(T.__dict__["__call__"])')
    subprocess.run([sys.executable, '-c', code], check=True)


def test_another_libraries_view_template_call_is_left_in_place(
        seam_restored, monkeypatch, caplog):
    def theirs(self, instance, *args, **keywords):
        return 'theirs'

    zope_browserpage.uninstall()
    monkeypatch.setattr(ViewPageTemplateFile, '__call__', theirs)
    assert not zope_browserpage.install()
    assert ViewPageTemplateFile.__call__ is theirs
    assert "is not zope.browserpage's own" in caplog.text
    zope_browserpage.uninstall()
    assert ViewPageTemplateFile.__call__ is theirs


def test_a_template_class_with_its_own_render_is_rendered_by_it(
        view_call, template_file):
    rendered = []

    class Rendering(ViewPageTemplateFile):
        def pt_render(self, namespace, **kw):
            rendered.append(sorted(namespace))
            return super().pt_render(namespace, **kw)

    provideUtility(ChameleonProgram, IPageTemplateEngine)
    view = PageView(Content(), StockTestRequest(), ['one'])
    template = Rendering(template_file)
    assert template(view) == template(view)
    assert len(rendered) == 2


def test_a_template_class_with_its_own_engine_context_gives_it(
        view_call, template_file, tmp_path):
    class Extra(ViewPageTemplateFile):
        def pt_getEngineContext(self, namespace):
            context = super().pt_getEngineContext(namespace)
            context.vars['extra'] = 'from the context'
            return context

    provideUtility(ChameleonProgram, IPageTemplateEngine)
    path = tmp_path / 'extra.pt'
    path.write_text('<p tal:content="extra" />')
    view = PageView(Content(), StockTestRequest(), [])
    template = Extra(str(path))
    assert template(view) == template(view) == '<p>from the context</p>'


@pytest.mark.parametrize('flag', ['showTAL', 'sourceAnnotations'])
def test_the_requests_debug_flags_reach_the_program_as_before(
        view_call, template_file, monkeypatch, flag):
    given = []
    original = ChameleonProgram.__call__

    def spy(self, context, macros, **options):
        given.append((options['showtal'], options['sourceAnnotations']))
        return original(self, context, macros, **options)

    monkeypatch.setattr(ChameleonProgram, '__call__', spy)
    request = StockTestRequest()
    setattr(request.debug, flag, True)
    first, again, _ = render_again(template_file, ['one'], request=request)
    assert first == again
    expected = (flag == 'showTAL', flag == 'sourceAnnotations')
    assert given == [expected, expected]


@pytest.mark.parametrize('preset', [None, 'text/plain'])
def test_the_content_type_is_set_as_before_unless_the_response_has_one(
        view_call, template_file, preset):
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    request = StockTestRequest()
    view = PageView(Content(), request, ['one'])
    template = ViewPageTemplateFile(template_file)
    for _ in range(2):  # compiled, then rendered again
        request.response.setHeader('Content-Type', preset or '')
        template(view)
        assert request.response.getHeader('Content-Type') == \
            (preset or 'text/html')


def test_a_template_file_changed_to_one_that_fails_raises_as_before(
        view_call, template_file, caplog):
    templates.check_template_files(True)
    view = PageView(Content(), StockTestRequest(), ['one'])
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    template = ViewPageTemplateFile(template_file)
    template(view)
    with open(template_file, 'w') as f:
        f.write('<p tal:unknown="x">broken</p>')
    os.utime(template_file, (1, 1))
    with pytest.raises(PTRuntimeError, match='Compilation failed'):
        template(view)
    assert caplog.text.count('Error in template') == 1


def test_a_template_file_changed_to_one_chameleon_refuses_goes_to_zope_tal(
        view_call, template_file, monkeypatch):
    templates.check_template_files(True)
    view = PageView(Content(), StockTestRequest(), ['one'])
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    template = ViewPageTemplateFile(template_file)
    template(view)
    assert isinstance(template._v_program, ChameleonProgram)

    def refuse(self, *args, **kw):
        raise ValueError('not for Chameleon')

    monkeypatch.setattr(templates.ViewTemplate, '__init__', refuse)
    with open(template_file, 'w') as f:
        f.write('<p tal:content="context/title">title</p>')
    os.utime(template_file, (1, 1))
    assert template(view) == '<p>A &lt;b&gt;page&lt;/b&gt;</p>'
    assert isinstance(template._v_program, PageTemplateEngine)


# z3c.pt's render, its variables taken over (render_namespace)

def cooked(source):
    program, macros = ChameleonProgram.cook('t.pt', source, TrustedEngine,
                                            'text/html')
    return program.template


def test_a_namespaces_target_language_is_kept(clean_zope, monkeypatch):
    monkeypatch.setattr(zope_browserpage, 'negotiate', None)  # not called
    template = cooked('<p tal:content="target_language" />')
    assert zope_browserpage.render_namespace(
        template, {'target_language': 'de'}) == '<p>de</p>'


def test_a_language_negotiation_that_fails_gives_none(clean_zope,
                                                      monkeypatch):
    def fail(request):
        raise LookupError('no negotiator')

    monkeypatch.setattr(zope_browserpage, 'negotiate', fail)
    template = cooked('<p tal:content="python: repr(target_language)" />')
    assert zope_browserpage.render_namespace(template, {}) == '<p>None</p>'
    assert template.render(request=None) == '<p>None</p>'  # z3c.pt's


class FalseResponse:
    """A response that is false (z3c.pt leaves its headers alone)."""

    def __bool__(self):
        return False

    def getHeader(self, name):
        raise AssertionError('asked')


@pytest.mark.parametrize('request_', [
    None, 'a string', type('Request', (), {'response': FalseResponse()})()],
    ids=['none', 'string', 'false response'])
def test_a_request_without_a_response_to_set_is_left_alone(clean_zope,
                                                           request_):
    template = cooked('<p>text</p>')
    assert zope_browserpage.render_namespace(
        template, {'request': request_}) == '<p>text</p>'


def test_the_translation_function_translates_as_z3c_pts(clean_zope):
    from z3c.pt.pagetemplate import MV
    from zope.i18nmessageid import Message

    request = StockTestRequest()
    translate = zope_browserpage.request_translation(request, Message)
    assert translate(MV) is None
    value = object()
    assert translate(value) is value
    assert translate(Message('id', default='Hi ${name}',
                             mapping={'name': 'you'})) == 'Hi you'
    assert translate('plain') == 'plain'
    source = ('<p i18n:translate="" i18n:domain="d">Hi</p>'
              '<p tal:content="python: 3" />')
    template = cooked(source)
    assert zope_browserpage.render_namespace(
        template, {'request': request}) == \
        template.render(request=request) == '<p>Hi</p><p>3</p>'


class FalseHeaders(FalseResponse):
    """A false response that keeps its headers."""

    def __init__(self):
        self.headers = {}

    def getHeader(self, name):
        return self.headers.get(name)

    def setHeader(self, name, value):
        self.headers[name] = value


def test_a_false_response_gets_the_templates_content_type_as_before(
        view_call, template_file):
    # z3c.pt's render leaves a false response alone, the view template's
    # call does not
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    request = StockTestRequest()
    request._response = FalseHeaders()
    view = PageView(Content(), request, ['one'])
    template = ViewPageTemplateFile(template_file)
    for _ in range(2):  # compiled, then rendered again
        request.response.headers.clear()
        template(view)
        assert request.response.headers == {'Content-Type': 'text/html'}
