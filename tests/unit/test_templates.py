"""zope.pipeline.publishing.templates: view templates compiled by Chameleon
render
what zope.tal renders, and what Chameleon must not or cannot compile
stays with zope.tal."""

import html
import os
import stat
import sys

import chameleon.loader
import chameleon.template
import chameleon.utils
import pytest
from zope.browserpage.viewpagetemplatefile import ViewPageTemplateFile
from zope.component import provideAdapter
from zope.component import provideUtility
from zope.container.contained import Contained
from zope.container.interfaces import IReadContainer
from zope.container.sample import SampleContainer
from zope.container.traversal import ContainerTraversable
from zope.interface import Interface
from zope.interface import implementer
from zope.location.interfaces import LocationError
from zope.pagetemplate.engine import Engine
from zope.pagetemplate.engine import TrustedEngine
from zope.pagetemplate.interfaces import IPageTemplateEngine
from zope.pagetemplate.pagetemplate import PageTemplateEngine
from zope.publisher.browser import TestRequest as StockTestRequest
from zope.security.checker import ProxyFactory
from zope.security.interfaces import ForbiddenAttribute
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy
from zope.traversing.adapters import DefaultTraversable
from zope.traversing.interfaces import IPathAdapter
from zope.traversing.interfaces import ITraversable
from zope.traversing.interfaces import TraversalError

from zope.pipeline.publishing import templates
from zope.pipeline.publishing.templates import ChameleonProgram
from zope.pipeline.security.privatefiles import UnsafePathError

PAGE = '''\
<!DOCTYPE html>
<html>
  <head><title tal:content="context/title">Title</title></head>
  <body>
    <h1 tal:content="string:${context/title} (${view/count})">T</h1>
    <ul tal:condition="view/items">
      <li tal:repeat="item view/items"
          tal:attributes="class python:'odd' if repeat['item'].odd() else None"
          tal:content="item">Item</li>
    </ul>
    <p tal:condition="not:view/items">None</p>
    <p tal:define="name context/title" tal:replace="structure name" />
    <p tal:content="request/form/q | string:no query">q</p>
    <p tal:attributes="title context/title">attr</p>
    <p tal:content="view/folder/title">item before attribute</p>
    <p tal:content="view/folder/@@absent | string:no view">view</p>
    <p tal:content="view/mapping/key">dict by key</p>
    <p tal:define="method nocall:view/count"
       tal:content="python: method.__name__">nocall</p>
    <p tal:condition="exists:view/folder/missing">exists</p>
    <metal:block define-macro="footer"><i>footer</i></metal:block>
  </body>
</html>
'''


class Content:
    title = 'A <b>page</b>'


class Folder(SampleContainer):
    """A container with an item named like one of its attributes."""

    title = 'the attribute'


class PageView:

    mapping = {'key': 'the value'}

    def __init__(self, context, request, items):
        self.context = context
        self.request = request
        self.items = items
        self.folder = Folder()
        self.folder['title'] = 'the item'

    def count(self):
        return len(self.items)


@pytest.fixture
def template_file(tmp_path, clean_zope):
    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)
    path = tmp_path / 'page.pt'
    path.write_text(PAGE)
    return str(path)


def render(template_file, items, form=None, engine=None):
    if engine is not None:
        provideUtility(engine, IPageTemplateEngine)
    request = StockTestRequest(form=form or {})
    view = PageView(Content(), request, items)
    template = ViewPageTemplateFile(template_file)
    return template(view), template


@pytest.mark.parametrize('items,form', [
    (['one', 'two', 'three'], {}),
    ([], {'q': 'term'}),
])
def test_a_view_template_renders_as_zope_tal_renders_it(
        template_file, items, form):
    expected, classic = render(template_file, items, form)
    assert isinstance(classic._v_program, PageTemplateEngine)
    got, compiled = render(template_file, items, form, ChameleonProgram)
    assert isinstance(compiled._v_program, ChameleonProgram)
    assert got == expected
    assert '<p>the item</p>' in got  # ContainerTraversable: items first


def test_a_paths_call_flag_is_a_constant_not_a_template_variable(
        template_file, monkeypatch):
    # z3c.pt writes the flag as the name True (False for nocall:), which
    # Chameleon looked up among the variables at every evaluation.
    asked = []
    original = chameleon.utils.Scope.get

    def get(scope, key, default=None):
        asked.append(key)
        return original(scope, key, default)

    monkeypatch.setattr(chameleon.utils.Scope, 'get', get)
    got, compiled = render(template_file, ['one'], {}, ChameleonProgram)
    assert isinstance(compiled._v_program, ChameleonProgram)
    assert '<p>count</p>' in got  # nocall: the method itself
    assert {'context', 'view'} <= set(asked)  # the spy sees the lookups
    assert not {'True', 'False'} & set(asked)


def test_a_path_adapter_namespace_applies_in_a_path(clean_zope):
    class Shout:
        def __init__(self, context):
            self.context = context

        def upper(self):
            return self.context.upper()

    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(Shout, (Interface,), IPathAdapter, name='shout')
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    program, macros = ChameleonProgram.cook(
        't.pt', '<p tal:content="view/name/shout:upper" />', TrustedEngine,
        'text/html')
    view = type('View', (), {'name': 'quiet'})()
    assert program.template.render(view=view) == '<p>QUIET</p>'


class DictLike(dict):
    """A dict subclass: zope.pagetemplate takes it by key too."""

    def keys(self):
        return 'the method'


@pytest.mark.parametrize('mapping', [
    {'keys': 'by key'},
    DictLike(keys='by key'),
    ProxyFactory({'keys': 'by key'}),
    ProxyFactory(DictLike(keys='by key')),
], ids=['dict', 'dict subclass', 'proxied dict', 'proxied dict subclass'])
def test_a_dict_is_stepped_into_by_key_as_zope_tal_steps_into_it(
        clean_zope, mapping):
    provideAdapter(DefaultTraversable, (None,))
    source = '<p tal:content="view/mapping/keys" />\n'
    view = type('View', (), {'mapping': mapping})()
    classic, macros = PageTemplateEngine.cook('t.pt', source, TrustedEngine,
                                              'text/html')
    compiled, macros = ChameleonProgram.cook('t.pt', source, TrustedEngine,
                                             'text/html')
    expected = render_program(classic, view)
    assert render_program(compiled, view) == expected
    # zope.tal's own answers: a dict by its class (a proxied dict too) or
    # a dict subclass is taken by key; a proxied dict subclass is not a
    # dict to it, and its checker (none defined) allows no step
    assert expected == ('LocationError'
                        if isinstance(mapping, Proxy)
                        and type(removeSecurityProxy(mapping)) is DictLike
                        else '<p>by key</p>\n')


def render_program(program, view, request=None):
    from zope.pagetemplate.pagetemplate import PageTemplate

    class Template(PageTemplate):
        def pt_getContext(self, args=(), options=None, **kw):
            namespace = super().pt_getContext(args, options or {}, **kw)
            namespace['view'] = view
            if request is not None:
                namespace['request'] = request
            return namespace

        def pt_getEngine(self):
            # zope.tal's traverser is given the request by this engine
            if request is not None:
                return TrustedEngine
            return super().pt_getEngine()

    template = Template()
    template._v_program = program
    template._v_macros = {}
    template._v_cooked = 1
    template._v_errors = ()
    template._text = ''
    try:
        return template.pt_render(template.pt_getContext())
    except LocationError as error:
        return type(error).__name__


def test_macros_of_a_compiled_template_are_used_by_another(template_file,
                                                           tmp_path):
    provideUtility(ChameleonProgram, IPageTemplateEngine)
    user = tmp_path / 'user.pt'
    user.write_text('<div metal:use-macro="view/macros/footer" />')
    page = ViewPageTemplateFile(template_file)
    view = PageView(Content(), StockTestRequest(), [])
    view.macros = page.macros
    assert ViewPageTemplateFile(str(user))(view).strip() == '<i>footer</i>'


def test_the_source_is_returned_without_tal(template_file):
    program, macros = ChameleonProgram.cook(template_file, PAGE,
                                            TrustedEngine, 'text/html')
    assert program(None, macros, tal=False) == PAGE


def test_an_untrusted_template_stays_with_zope_tal():
    program, macros = ChameleonProgram.cook('t.pt', PAGE, Engine,
                                            'text/html')
    assert isinstance(program, PageTemplateEngine)


def test_an_xml_template_stays_with_zope_tal():
    program, macros = ChameleonProgram.cook(
        't.pt', '<a xmlns:tal="http://xml.zope.org/namespaces/tal"/>',
        TrustedEngine, 'text/xml')
    assert isinstance(program, PageTemplateEngine)


def test_a_template_chameleon_cannot_compile_is_left_to_zope_tal(
        monkeypatch, caplog):
    def refuse(self, *args, **kw):
        raise ValueError('not for Chameleon')

    monkeypatch.setattr(templates.ViewTemplate, '__init__', refuse)
    program, macros = ChameleonProgram.cook('t.pt', PAGE, TrustedEngine,
                                            'text/html')
    assert isinstance(program, PageTemplateEngine)
    assert 'Chameleon cannot compile t.pt' in caplog.text


def test_compiling_does_not_read_every_installed_distribution(monkeypatch):
    def scan():
        raise AssertionError('every distribution read')

    monkeypatch.setattr(chameleon.template, 'get_package_versions', scan)
    monkeypatch.setattr(chameleon.template, '_pkg_digest', None)
    program, macros = ChameleonProgram.cook(
        't.pt', '<p tal:content="string:x%d" />' % id(scan), TrustedEngine,
        'text/html')
    assert isinstance(program, ChameleonProgram)


def test_the_cache_key_changes_with_the_template_and_its_options():
    first = templates.ViewTemplate('<p>one</p>')
    second = templates.ViewTemplate('<p>two</p>')
    assert first.digest('<p>one</p>', ()) == first.digest('<p>one</p>', ())
    assert first.digest('<p>one</p>', ()) != second.digest('<p>two</p>', ())
    assert first.digest('<p>one</p>', ()) != first.digest('<p>one</p>',
                                                          ('x',))


def test_an_unknown_compiler_version_still_makes_a_key(monkeypatch):
    monkeypatch.setattr(templates, 'COMPILERS', ('no.such.distribution',))
    monkeypatch.setattr(templates, '_compilers_digest', None)
    assert len(templates.compilers_digest()) == 64


@pytest.mark.parametrize('path, expected', [
    ('data/page/title', 'by key'),
    ('data/folder/title', 'the item'),
    ('data/page/name/shout:upper', 'QUIET'),
    ('data/page/shout:size', '2 keys'),
    ('data/page/missing | string:fallback', 'fallback'),
    ('data/page/shout:missing | string:fallback', 'fallback'),
    ('data/page/keys:title', 'BY KEY'),
], ids=['dict keys', 'container after dict', 'namespace after a value',
        'namespace after dict', 'missing key', 'namespace missing a name',
        'traversable namespace'])
def test_paths_through_dict_keys_step_as_zope_tal_steps(clean_zope, path,
                                                        expected):
    class Shout:
        def __init__(self, context):
            self.context = context

        def upper(self):
            return self.context.upper()

        def size(self):
            return '%d keys' % len(self.context)

    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)
    @implementer(ITraversable)
    class Keys:
        def __init__(self, context):
            self.context = context

        def traverse(self, name, further_path):
            return self.context[name].upper()

    provideAdapter(Shout, (Interface,), IPathAdapter, name='shout')
    provideAdapter(Keys, (Interface,), IPathAdapter, name='keys')
    folder = Folder()
    folder['title'] = 'the item'
    view = type('View', (), {'data': {
        'page': {'title': 'by key', 'name': 'quiet'}, 'folder': folder}})()
    source = '<p tal:define="data view/data" tal:content="%s" />\n' % path
    classic, macros = PageTemplateEngine.cook('t.pt', source, TrustedEngine,
                                              'text/html')
    compiled, macros = ChameleonProgram.cook('t.pt', source, TrustedEngine,
                                             'text/html')

    assert render_program(compiled, view) == render_program(classic, view)
    assert render_program(compiled, view) == '<p>%s</p>\n' % expected


def test_a_path_ending_in_a_dict_gives_the_dict(clean_zope):
    provideAdapter(DefaultTraversable, (None,))
    view = type('View', (), {'data': {'page': {'title': 'by key'}}})()
    source = ('<p tal:define="data view/data; page nocall:data/page"'
              ' tal:content="page/title" />\n')
    compiled, macros = ChameleonProgram.cook('t.pt', source, TrustedEngine,
                                             'text/html')

    assert render_program(compiled, view) == '<p>by key</p>\n'


# Compiled templates kept on disk (``use_cache_directory``)

CACHED = '<p tal:content="string:${view/count} items">n</p>'


@pytest.fixture
def compiles(monkeypatch, clean_zope):
    """Chameleon's compilations, counted (what a cached template skips)."""
    provideAdapter(DefaultTraversable, (None,))
    compiled = []
    original = chameleon.template.BaseTemplate._compile

    def count(template, body, builtins):
        compiled.append(template.filename)
        return original(template, body, builtins)

    monkeypatch.setattr(chameleon.template.BaseTemplate, '_compile', count)
    return compiled


def cook_and_render(text, filename='cached.pt'):
    program, macros = ChameleonProgram.cook(filename, text, TrustedEngine,
                                            'text/html')
    assert isinstance(program, ChameleonProgram)
    view = PageView(Content(), StockTestRequest(), ['one', 'two'])
    return program.template.render(view=view, context=view.context)


def forget_loaded_modules(directory):
    """What a new process is: none of the compiled modules imported."""
    for path in directory.glob('*.py'):
        sys.modules.pop(path.stem, None)


def test_a_template_compiled_by_one_process_is_loaded_by_the_next(
        tmp_path, compiles):
    cache = tmp_path / 'compiled'
    templates.use_cache_directory(str(cache))
    first = cook_and_render(CACHED)
    assert compiles == ['cached.pt']
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    [module] = cache.glob('*.py')
    forget_loaded_modules(cache)
    assert cook_and_render(CACHED) == first == '<p>2 items</p>'
    assert compiles == ['cached.pt']  # loaded, not compiled again
    assert list(cache.glob('*.py')) == [module]


def test_each_template_file_has_its_own_compiled_module(tmp_path, compiles):
    # the module names its template's file in the errors it raises
    cache = tmp_path / 'compiled'
    templates.use_cache_directory(str(cache))
    cook_and_render(CACHED, 'one.pt')
    cook_and_render(CACHED, 'two.pt')
    assert compiles == ['one.pt', 'two.pt']
    assert len(list(cache.glob('*.py'))) == 2


def test_a_compiled_template_that_cannot_be_loaded_is_compiled_again(
        tmp_path, compiles, caplog):
    cache = tmp_path / 'compiled'
    templates.use_cache_directory(str(cache))
    first = cook_and_render(CACHED)
    [module] = cache.glob('*.py')
    forget_loaded_modules(cache)
    module.write_text('this is not Python\n')
    assert cook_and_render(CACHED) == first
    assert len(compiles) == 2
    assert 'cannot be loaded; compiling it again' in caplog.text
    forget_loaded_modules(cache)
    assert cook_and_render(CACHED) == first  # written again, loaded
    assert len(compiles) == 2


def test_a_directory_that_cannot_be_written_keeps_templates_in_memory(
        tmp_path, compiles, caplog, monkeypatch):
    def full(*args, **kw):
        raise OSError(28, 'No space left on device')

    cache = tmp_path / 'compiled'
    templates.use_cache_directory(str(cache))
    monkeypatch.setattr(chameleon.loader.tempfile, 'mkstemp', full)
    assert cook_and_render(CACHED) == '<p>2 items</p>'
    assert 'cannot be written to %s; it is kept in memory' % cache \
        in caplog.text
    assert list(cache.iterdir()) == []


def test_a_directory_others_may_write_is_refused(tmp_path, clean_zope):
    cache = tmp_path / 'compiled'
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    with pytest.raises(UnsafePathError, match='writable by its group'):
        templates.use_cache_directory(str(cache))


def test_without_a_directory_templates_compile_in_memory_again(
        tmp_path, compiles):
    cache = tmp_path / 'compiled'
    templates.use_cache_directory(str(cache))
    templates.use_cache_directory(None)
    assert templates.ViewTemplate.loader is \
        chameleon.template.BaseTemplate.loader  # Chameleon's own choice
    cook_and_render(CACHED)
    assert list(cache.iterdir()) == []


def test_a_module_installed_without_its_source_still_makes_a_key(
        tmp_path, monkeypatch):
    monkeypatch.setattr(templates, '__file__', str(tmp_path / 'gone.py'))
    monkeypatch.setattr(templates, '_compilers_digest', None)
    assert len(templates.compilers_digest()) == 64


def test_the_cache_key_changes_with_the_compiling_code(tmp_path,
                                                       monkeypatch):
    before = templates.compilers_digest()
    changed = tmp_path / 'templates.py'
    with open(templates.__file__) as source:
        changed.write_text(source.read() + '# changed\n')
    monkeypatch.setattr(templates, '__file__', str(changed))
    monkeypatch.setattr(templates, '_compilers_digest', None)
    assert templates.compilers_digest() != before


# Path steps through a proxy and without, as zope.pagetemplate's

class Page:
    """Content whose checker shows its title and its items."""

    title = 'the page'
    secret = 'hidden'

    def __getitem__(self, name):
        if name == 'item':
            return 'an item'
        raise KeyError(name)


class Shelf(SampleContainer):

    title = 'the attribute'


@pytest.fixture
def hooked(clean_zope):
    """zope.component's site hooks, as its configuration sets them."""
    from zope.component.hooks import resetHooks
    from zope.component.hooks import setHooks
    setHooks()
    yield
    resetHooks()


def proxied(ob):
    from zope.security.checker import NamesChecker
    checker = NamesChecker(('title', '__getitem__', 'get', 'keys'))
    return Proxy(ob, checker)


def classic_step(base, name):
    """What zope.pagetemplate's traverser does for one name."""
    from zope.traversing.adapters import traversePathElement
    try:
        return traversePathElement(base, name, [])
    except LocationError as error:
        return type(error)


def pipeline_step(base, name):
    try:
        return templates.step(base, name, [], None)
    except LocationError as error:
        return type(error)


@pytest.mark.parametrize('make, name', [
    (Page, 'title'), (Page, 'item'), (Page, 'secret'), (Page, 'missing'),
    (Shelf, 'title'), (Shelf, 'missing'), (Shelf, 'secret'),
], ids=['attribute', 'item', 'forbidden attribute', 'missing',
        'container item before attribute', 'container missing',
        'container forbidden'])
@pytest.mark.parametrize('wrap', [proxied, lambda ob: ob],
                         ids=['proxied', 'unproxied'])
def test_a_step_through_zope_traversings_adapters_gives_the_same(
        hooked, make, name, wrap):
    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)
    ob = make()
    if isinstance(ob, Shelf):
        ob['title'] = 'the item'
    expected = classic_step(wrap(ob), name)
    assert pipeline_step(wrap(ob), name) == expected
    assert expected != 'hidden' or wrap is not proxied


def test_another_traversable_adapter_is_used(hooked):
    class Upper:
        def __init__(self, context):
            self.context = context

        def traverse(self, name, further_path):
            return name.upper()

    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(Upper, (IReadContainer,), ITraversable)
    assert pipeline_step(proxied(Shelf()), 'title') == 'TITLE'
    assert pipeline_step(proxied(Page()), 'title') == 'the page'
    assert pipeline_step(Shelf(), 'title') == 'TITLE'
    assert pipeline_step(Page(), 'title') == 'the page'


def test_an_object_that_conforms_is_asked(hooked):
    from zope.security.checker import NamesChecker

    class Conforming(Page):
        def __conform__(self, interface):
            if interface is ITraversable:
                return DefaultTraversable({'title': 'conformed'})

    provideAdapter(DefaultTraversable, (None,))
    checker = NamesChecker(('title', '__conform__'))
    base = Proxy(Conforming(), checker)
    # the adapter it gives comes proxied, with no checker for traverse
    for take in (classic_step, pipeline_step):
        with pytest.raises(ForbiddenAttribute, match='traverse'):
            take(base, 'title')


# Template files read again when they change: in development only

def test_a_changed_template_file_is_read_again_only_when_checked(
        template_file, clean_zope):
    provideAdapter(DefaultTraversable, (None,))
    view = PageView(Content(), StockTestRequest(), ['one'])
    for check, expected in ((True, '<p>two</p>'), (False, '<p>one</p>')):
        templates.check_template_files(check)
        with open(template_file, 'w') as f:
            f.write('<p>one</p>')
        template = ViewPageTemplateFile(template_file)
        assert template(view).strip() == '<p>one</p>'
        with open(template_file, 'w') as f:
            f.write('<p>two</p>')
        # a different modification time than the first read's
        os.utime(template_file, (1, 1))
        assert template(view).strip() == expected


@pytest.mark.parametrize('development', [True, False])
def test_make_app_checks_template_files_in_development_only(
        clean_zope, development):
    from zope.pagetemplate.pagetemplatefile import PageTemplateFile

    from zope.pipeline.app import make_app
    make_app(development=development)
    assert PageTemplateFile._v_debug is development
    templates.check_template_files(None)
    assert PageTemplateFile._v_debug is __debug__


# Proxied container steps: checked and proxied as through the proxies

class Item(Contained):
    """An item a container step gives: proxied as zope.security says."""


def container_with(name, value):
    """A container holding ``value`` itself (not a contained proxy)."""
    shelf = Shelf()
    shelf._SampleContainer__data[name] = value
    return shelf


@pytest.fixture
def traversables(hooked):
    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)


def test_a_proxied_containers_item_comes_proxied_by_its_checker(traversables):
    from zope.security.checker import NamesChecker
    from zope.security.checker import defineChecker
    from zope.security.checker import undefineChecker
    from zope.security.proxy import getChecker
    item_checker = NamesChecker(('name',))
    defineChecker(Item, item_checker)
    try:
        base = container_with('item', Item())
        found = pipeline_step(proxied(base), 'item')
        expected = classic_step(proxied(base), 'item')
        assert type(found) is type(expected) is Proxy
        assert removeSecurityProxy(found) is removeSecurityProxy(expected)
        assert getChecker(found) is getChecker(expected) is item_checker
    finally:
        undefineChecker(Item)


@pytest.mark.parametrize('value', ['text', b'bytes', 3, 2.5, True, None])
def test_a_proxied_containers_basic_values_come_as_zope_security_gives_them(
        traversables, value):
    found = pipeline_step(proxied(container_with('key', value)), 'key')
    assert found is classic_step(proxied(container_with('key', value)),
                                 'key')
    assert type(found) is not Proxy


def test_a_checker_defined_for_strings_is_followed(traversables, monkeypatch):
    from zope.security.checker import NamesChecker
    from zope.security.checker import _checkers
    monkeypatch.setitem(_checkers, str, NamesChecker(('upper',)))
    for base in (container_with('key', 'text'), Shelf()):
        name = 'key' if len(base) else 'title'
        found = pipeline_step(proxied(base), name)
        assert type(found) is Proxy
        assert found.upper() == classic_step(proxied(base), name).upper()


def test_a_checker_defined_for_methods_is_followed(traversables, monkeypatch):
    from types import MethodType

    from zope.security.checker import NamesChecker
    from zope.security.checker import _checkers
    # calling a method is no longer public: the proxied get is refused
    monkeypatch.setitem(_checkers, MethodType, NamesChecker(()))
    base = container_with('key', 'text')
    for take in (classic_step, pipeline_step):
        with pytest.raises(ForbiddenAttribute, match='__call__'):
            take(proxied(base), 'key')


def test_a_get_with_its_own_checker_is_called_through_the_proxies(
        traversables):
    from zope.security.checker import NamesChecker

    class Guarded(Shelf):
        def get(self, key, default=None):
            return super().get(key, default)
        get.__Security_checker__ = NamesChecker(())

    base = Guarded()
    base['key'] = 'text'
    for take in (classic_step, pipeline_step):
        with pytest.raises(ForbiddenAttribute, match='__call__'):
            take(proxied(base), 'key')


def test_a_container_without_get_allowed_is_refused_as_before(traversables):
    from zope.security.checker import NamesChecker
    base = container_with('key', 'text')
    checker = NamesChecker(('title',))
    for take in (classic_step, pipeline_step):
        with pytest.raises(ForbiddenAttribute, match="'get'"):
            take(Proxy(base, checker), 'key')


def test_a_forbidden_attribute_of_a_container_is_not_found(traversables):
    base = container_with('key', 'text')
    assert pipeline_step(proxied(base), 'secret') is LocationError
    assert classic_step(proxied(base), 'secret') is LocationError


def test_a_checker_of_another_kind_is_asked_through_the_proxy(traversables):
    from zope.security.checker import NamesChecker

    class Counting:
        """A checker that is not zope.security's ``Checker``."""

        def __init__(self):
            self.checker = NamesChecker(('title', 'get'))
            self.asked = []

        def check(self, ob, name):
            self.asked.append(name)
            self.checker.check(ob, name)

        check_getattr = check

        def proxy(self, value):
            return self.checker.proxy(value)

    base = container_with('key', 'text')
    checker = Counting()
    assert pipeline_step(Proxy(base, checker), 'key') == 'text'
    assert pipeline_step(Proxy(base, checker), 'title') == 'the attribute'
    assert pipeline_step(Proxy(base, checker), 'missing') is LocationError
    assert 'get' in checker.asked and 'title' in checker.asked


def test_an_unauthorized_get_is_raised_as_through_the_proxy(traversables):
    from zope.security.checker import Checker
    from zope.security.interfaces import Unauthorized
    from zope.security.management import endInteraction
    from zope.security.management import getSecurityPolicy
    from zope.security.management import newInteraction
    from zope.security.management import setSecurityPolicy
    from zope.security.simplepolicies import ParanoidSecurityPolicy
    from zope.security.testing import Participation
    from zope.security.testing import Principal
    checker = Checker({'get': 'zope.View', 'title': 'zope.View'})
    base = container_with('key', 'text')
    policy = setSecurityPolicy(ParanoidSecurityPolicy)
    newInteraction(Participation(Principal('someone')))
    try:
        for take in (classic_step, pipeline_step):
            with pytest.raises(Unauthorized):
                take(Proxy(base, checker), 'key')
    finally:
        endInteraction()
        setSecurityPolicy(policy)
    assert getSecurityPolicy() is policy


def test_an_allowed_attribute_a_container_lacks_is_not_found(traversables):
    from zope.security.checker import NamesChecker
    base = container_with('key', 'text')
    checker = NamesChecker(('get', 'absent'))
    for take in (classic_step, pipeline_step):
        assert take(Proxy(base, checker), 'absent') is LocationError


# A bare name (``tal:content="value"``): a path of no steps, its value
# called unless it is nocall:

class CallableStr(str):
    """A string that is called as a path's value is (not a plain type)."""

    def __call__(self):
        return 'called'


def bare_source(expression):
    return ('<p tal:define="value view/value" tal:content="%s" />\n'
            % expression)


def render_bare(expression, value):
    program, macros = ChameleonProgram.cook(
        't.pt', bare_source(expression), TrustedEngine, 'text/html')
    assert isinstance(program, ChameleonProgram)
    view = type('View', (), {'value': staticmethod(lambda: value)})()
    return render_program(program, view)


def shown(value):
    return '<p>%s</p>\n' % html.escape(str(value), quote=False)


@pytest.mark.parametrize('value, called', [
    ('a <b>', None), (b'bytes', 'bytes'), (3, None), (2.5, None),
    (True, None), (None, ''), (['a'], None), (('a',), None),
    ({'k': 'v'}, None), (CallableStr('not called'), 'called'),
    (lambda: 'called', 'called'), (proxied(Page()), None),
    (ProxyFactory(lambda: 'called through a proxy'),
     'called through a proxy'),
], ids=['str', 'bytes', 'int', 'float', 'bool', 'None', 'list', 'tuple',
        'dict', 'str subclass with __call__', 'function', 'proxied object',
        'proxied function'])
@pytest.mark.parametrize('expression', ['value', 'nocall:value'])
def test_a_bare_names_value_renders_as_a_paths_value(
        clean_zope, expression, value, called):
    provideAdapter(DefaultTraversable, (None,))
    got = render_bare(expression, value)
    if expression == 'value' and called is not None:
        assert got == shown(called)
    elif isinstance(value, bytes):  # Chameleon decodes bytes, as before
        assert got == shown(value.decode())
    else:
        assert got == shown('' if value is None else value)
    # zope.tal too (but for bytes, which Chameleon decodes, as before)
    if not isinstance(value, (Proxy, bytes)) and not callable(value):
        classic, macros = PageTemplateEngine.cook(
            't.pt', bare_source(expression), TrustedEngine, 'text/html')
        view = type('View', (), {'value': staticmethod(lambda: value)})()
        assert got == render_program(classic, view)


def test_a_bare_name_is_looked_up_once(clean_zope, monkeypatch):
    provideAdapter(DefaultTraversable, (None,))
    asked = []
    original = chameleon.utils.Scope.get_name

    def get_name(scope, key):
        asked.append(key)
        return original(scope, key)

    monkeypatch.setattr(chameleon.utils.Scope, 'get_name', get_name)
    assert render_bare('value', CallableStr('x')) == '<p>called</p>\n'
    assert asked.count('value') == 1


def test_an_unproxied_object_that_conforms_is_asked(hooked):
    class Conforming(Page):
        def __conform__(self, interface):
            if interface is ITraversable:
                return DefaultTraversable({'title': 'conformed'})

    provideAdapter(DefaultTraversable, (None,))
    base = Conforming()
    assert pipeline_step(base, 'title') == classic_step(base, 'title') \
        == 'conformed'


def test_an_unproxied_containers_name_it_cannot_encode_is_not_found(hooked):
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)
    for take in (classic_step, pipeline_step):
        assert take(Shelf(), '\ud800') is TraversalError


# A path's steps, a traverser taking the names after its own

class IBasket(Interface):
    pass


@implementer(IBasket)
class Basket:
    """Its ITraversable adapter takes the name after its own too."""


class Consuming:

    def __init__(self, context):
        self.context = context

    def traverse(self, name, further_path):
        return '%s+%s' % (name, further_path.pop())


class Info:

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        return 'info with %s' % type(self.request).__name__


@pytest.mark.parametrize('path, expected', [
    ('view/shelf/title', 'the item'),
    ('view/data/page/title', 'by key'),
    ('view/basket/a/b', 'a+b'),
    ('view/basket/a/b/upper', 'A+B'),
    ('view/data/basket/a/b', 'a+b'),
    ('view/shelf/@@info', 'info with TestRequest'),
    ('view/data/shout:upper', 'ONE KEY'),
    ('view/shelf/missing | string:fallback', 'fallback'),
    ('view/shelf/./title', 'the item'),
], ids=['steps', 'dict keys', 'a traverser taking the next name',
        'a step after such a traverser', 'such a traverser after a dict',
        'a view of a step, with the request',
        'a namespace after steps', 'missing', 'a dot'])
def test_a_paths_steps_step_as_zope_tal_steps(
        hooked, path, expected):
    from zope.publisher.interfaces.browser import IDefaultBrowserLayer
    from zope.traversing.namespace import view as view_namespace

    class Shout:
        def __init__(self, context):
            self.context = context

        def upper(self):
            return 'ONE KEY'

    provideAdapter(DefaultTraversable, (None,))
    provideAdapter(ContainerTraversable, (IReadContainer,), ITraversable)
    provideAdapter(Consuming, (IBasket,), ITraversable)
    provideAdapter(view_namespace, (None, None), ITraversable, name='view')
    provideAdapter(Info, (IReadContainer, IDefaultBrowserLayer), Interface,
                   name='info')
    provideAdapter(Shout, (Interface,), IPathAdapter, name='shout')
    shelf = Shelf()
    shelf['title'] = 'the item'
    view = type('View', (), {'shelf': shelf, 'basket': Basket(), 'data': {
        'page': {'title': 'by key'}, 'basket': Basket()}})()
    source = '<p tal:content="%s" />\n' % path
    results = []
    for cook in (PageTemplateEngine.cook, ChameleonProgram.cook):
        program, macros = cook('t.pt', source, TrustedEngine, 'text/html')
        results.append(render_program(program, view, StockTestRequest()))
    assert results == ['<p>%s</p>\n' % expected] * 2


def test_chameleons_own_variables_are_its_own_and_the_others_are_passed(
        template_file, tmp_path):
    # zope.tales' repeat, loop and default are not passed to Chameleon,
    # which has its own; zope.pagetemplate's other variables are
    path = tmp_path / 'own.pt'
    path.write_text(
        '<ul><li tal:repeat="item view/items"'
        ' tal:content="string:${repeat/item/number} ${item}" /></ul>'
        '<p tal:content="default">kept</p>'
        '<p tal:content="python: [n for n in (\'template\', \'options\','
        ' \'nothing\', \'modules\', \'view\', \'context\', \'request\','
        ' \'views\', \'args\') if not exists(n)]" />\n')
    expected, classic = render(str(path), ['one', 'two'])
    got, compiled = render(str(path), ['one', 'two'], None, ChameleonProgram)
    assert isinstance(compiled._v_program, ChameleonProgram)
    # one puts a line break between repeated elements, the other not
    assert got.replace('\n', '') == expected.replace('\n', '')
    assert '<li>2 two</li>' in got and '<p>kept</p>' in got
    assert '<p>[]</p>' in got
