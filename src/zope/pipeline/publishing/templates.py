"""View templates compiled by Chameleon: an ``IPageTemplateEngine`` for
zope.pagetemplate.

Registered as a utility (``templates.zcml``, which ``site.zcml``
includes), it makes every zope.pagetemplate template of a view
(``browser:page template="..."``, ``ViewPageTemplateFile``) compile to
Python through Chameleon with z3c.pt's expressions, as Zope 4 and later
do, instead of being interpreted by zope.tal on every render.  The
templates keep their syntax and their files; nothing else changes for
them.  Templates of the untrusted engine (through-the-web templates with
restricted Python), non-HTML templates and any template Chameleon cannot
compile are left to zope.pagetemplate's own engine.

Path expressions step as zope.pagetemplate's trusted engine steps: each
name through ``traversePathElement`` (the object's ``ITraversable``
adapter, so a container's items come before its attributes, as
``zope.container``'s adapter says), a plain dict by key (z3c.pt's own
paths try attributes first).  Chameleon's cache key normally hashes the
version of every installed distribution, which costs about 0.2 s at a
process's first render; ours hashes the versions of what compiles the
template (and the source of this module, whose code the compiled template
calls).

Compiled templates are kept in memory, per process, unless
``use_cache_directory`` names a directory (the ini's ``template_cache``,
by default a directory in the server's private run directory under
mod_wsgi, ``zope.pipeline.app.template_cache_directory``): then each
template is compiled once for every process that starts with the same
template and compilers, as Chameleon's ``CHAMELEON_CACHE`` does for Zope
and Plone, and a process started later loads it instead of compiling it.
The directory must be private to the server's user (the files in it are
Python code the server runs).

With the speedups (``_speedups.zope_browserpage``), a view template's
call hands a template Chameleon compiled its namespace directly; without
them, zope.browserpage's own call renders it through zope.pagetemplate's
``pt_render`` and the ``ChameleonProgram`` it compiled.
"""

import ast
import hashlib
import importlib.metadata
import logging
from types import MethodType

from chameleon.astutil import Symbol
from chameleon.loader import MemoryLoader
from chameleon.loader import ModuleLoader
from z3c.pt.expressions import PathExpr
from z3c.pt.namespaces import function_namespaces
from z3c.pt.pagetemplate import BaseTemplate
from zope.interface import implementer
from zope.interface import provider
from zope.pagetemplate.engine import TrustedEngine
from zope.pagetemplate.interfaces import IPageTemplateEngine
from zope.pagetemplate.interfaces import IPageTemplateProgram
from zope.pagetemplate.pagetemplate import PageTemplateEngine
from zope.pagetemplate.pagetemplatefile import PageTemplateFile
from zope.proxy import isProxy
from zope.traversing.adapters import traversePathElement
from zope.traversing.interfaces import ITraversable

from zope.pipeline import components
from zope.pipeline.security.privatefiles import private_directory

log = logging.getLogger(__name__)

#: What the cache key depends on besides the template.
COMPILERS = ('Chameleon', 'z3c.pt', 'zope.pipeline')

#: zope.tales variables that Chameleon provides itself, its own way.
CHAMELEON_OWN = frozenset(('repeat', 'loop', 'default', 'attrs'))

_compilers_digest = None
_marker = object()


def compilers_digest():
    """A hash of the versions of what compiles templates and of this
    module's source (once): a compiled template kept on disk is used only
    by the code that compiled it, a development checkout's changes to
    this module included."""
    global _compilers_digest
    if _compilers_digest is None:
        sha = hashlib.sha256()
        for name in COMPILERS:
            try:
                version = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                version = ''
            sha.update(('%s=%s;' % (name, version)).encode('utf-8'))
        try:
            with open(__file__, 'rb') as source:
                sha.update(source.read())
        except OSError:  # installed without its source: the versions tell
            pass
        _compilers_digest = sha.hexdigest()
    return _compilers_digest


def is_dict(base):
    """zope.pagetemplate's test for a dict taken by key
    (``ZopeTraverser``): its ``__class__`` is ``dict`` (through a
    security proxy too), or it is a dict that is not a proxy."""
    if type(base) is dict:  # what the test answers first, in one step
        return True
    if getattr(base, '__class__', None) == dict:  # noqa: E721 - its test
        return True
    return isinstance(base, dict) and not isProxy(base)


def step(base, name, path_items, request):
    """One name of a path, as zope.pagetemplate's trusted traverser takes
    it: a dict's key (``is_dict``), else by ``traversePathElement``, the
    ``ITraversable`` adapter of a plain name found by
    ``components.query_adapter`` (what ``traversePathElement`` would
    find)."""
    if is_dict(base):
        return base[name]
    traversable = None
    if name not in ('.', '..') and name[:1] not in '@+':
        traversable = components.query_adapter(base, ITraversable)
    return traversePathElement(base, name, path_items,
                               traversable=traversable, request=request)


def path_traverse(base, econtext, call, path_items):
    """z3c.pt's path traversal (its ``ns:name`` function namespaces
    included) with zope.pagetemplate's steps; the result is called unless
    the expression is ``nocall:``."""
    if path_items:
        names = list(path_items)
        names.reverse()
        base = step_names(base, names, econtext.get('request'))
    # not callable(): a security proxy says it is callable, whatever it
    # proxies (zope.tales asks for __call__ too)
    if call and getattr(base, '__call__', _marker) is not _marker:  # noqa: B004
        return base()
    return base


def step_names(base, names, request):
    """Step through ``names``, a stack (a list, last name first, taken
    over): each name as zope.pagetemplate's trusted traverser takes it,
    ``ns:name`` through z3c.pt's function namespace ``ns``.  A traverser
    may consume names after its own from the stack it is given."""
    while names:
        name = names.pop()
        if ':' not in name:
            base = step(base, name, names, request)
            continue
        namespace, name = name.split(':', 1)
        base = function_namespaces[namespace](base)
        if ITraversable.providedBy(base):
            base = traversePathElement(base, name, names, request=request)
            continue
        found = getattr(base, name, _marker)
        if found is _marker:
            base = traversePathElement(base, name, names, request=request)
        else:
            base = found() if isinstance(found, MethodType) else found
    return base


class ConstantCallFlag(ast.NodeTransformer):
    """z3c.pt passes a path's call flag to the traverser as the name
    ``True`` (``False`` for ``nocall:``), which Chameleon looks up among
    the template's variables at every evaluation (``get('True', True)``:
    a miss, then the builtin); here it becomes the constant, as
    zope.tales has it (a template variable named ``True`` does not
    decide whether a path's value is called).  Measured on the peers'
    page (issue 42, instructions per request against z3c.pt's name):
    about 68 k a render of its 13 paths, 5 % of the view-checked chain."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, Symbol) and \
                node.func.value is path_traverse and len(node.args) == 4:
            flag = node.args[2]
            if isinstance(flag, ast.Name) and flag.id in ('True', 'False'):
                node.args[2] = ast.copy_location(
                    ast.Constant(flag.id == 'True'), flag)
        return node


class ZopePathExpr(PathExpr):
    """``path:`` with zope.pagetemplate's steps."""

    traverser = Symbol(path_traverse)

    def translate(self, string, target):
        flag = ConstantCallFlag()
        return [flag.visit(node) for node in super().translate(string,
                                                                target)]


class ZopeNocallExpr(ZopePathExpr):
    """``nocall:`` with zope.pagetemplate's steps."""

    def translate(self, expression, engine):
        return super().translate('nocall:%s' % expression, engine)


class ViewTemplate(BaseTemplate):
    """A view template compiled by Chameleon, with z3c.pt's expression
    types (path, python, string, not, exists, nocall, provider,
    structure), paths stepping as zope.pagetemplate's do."""

    expression_types = dict(BaseTemplate.expression_types,
                            path=ZopePathExpr, nocall=ZopeNocallExpr)

    def digest(self, body, names):
        # the file name too: the compiled module names it in its errors
        sha = hashlib.sha256(compilers_digest().encode('ascii'))
        for part in (type(self).__name__, str(self.filename), body,
                     ';'.join(names),
                     str(self.trim_attribute_space),
                     str(self.implicit_i18n_translate), str(self.strict)):
            sha.update(part.encode('utf-8', 'ignore'))
            sha.update(b'\0')
        return sha.hexdigest()[:32]


class CompiledTemplates(ModuleLoader):
    """Chameleon's loader of compiled templates from a directory, which
    compiles a template anew when its file cannot be loaded, and keeps it
    in memory when the directory cannot be written (both logged): the
    template is rendered by Chameleon either way."""

    def __init__(self, path):
        super().__init__(path, remove=False)

    def get(self, filename):
        try:
            return super().get(filename)
        except Exception:
            log.warning('The compiled template %s in %s cannot be loaded; '
                        'compiling it again', filename, self.path,
                        exc_info=True)
            return None

    def build(self, source, filename):
        try:
            return super().build(source, filename)
        except OSError:
            log.warning('The compiled template %s cannot be written to %s; '
                        'it is kept in memory', filename, self.path,
                        exc_info=True)
            return MemoryLoader().build(source, filename)


def use_cache_directory(path):
    """Keep the templates compiled from now on in ``path`` (created, mode
    0700, or checked to be private: ``privatefiles.private_directory``),
    or, with None, in memory (unless Chameleon's own ``CHAMELEON_CACHE``
    names a directory).  For the whole process; returns the loader."""
    if path is None:
        if 'loader' in ViewTemplate.__dict__:
            del ViewTemplate.loader
        return ViewTemplate.loader
    ViewTemplate.loader = CompiledTemplates(private_directory(path))
    return ViewTemplate.loader


def check_template_files(check):
    """Whether a template file (``PageTemplateFile``, a view's
    ``ViewPageTemplateFile``) is read again when it changes: true, its
    modification time is read at every render (zope.pagetemplate's
    default unless Python runs with ``-O``); false, once, at its first
    render.  For the whole process: ``zope.pipeline.app.make_app`` says
    true for a development ini (``development = true``), false
    otherwise.  None: zope.pagetemplate's default again."""
    PageTemplateFile._v_debug = __debug__ if check is None else bool(check)


try:
    from zope.testing.cleanup import addCleanUp
except ImportError:  # pragma: no cover - zope.testing is for tests
    pass
else:
    addCleanUp(use_cache_directory, (None,))
    addCleanUp(check_template_files, (None,))


def compiles_with_chameleon(engine, content_type):
    """Only the trusted engine's HTML templates: restricted Python is
    zope.tal's to run."""
    return engine is TrustedEngine and content_type in (None, 'text/html')


@implementer(IPageTemplateProgram)
@provider(IPageTemplateEngine)
class ChameleonProgram:
    """A template compiled by Chameleon, called as zope.pagetemplate
    calls its programs."""

    def __init__(self, template):
        self.template = template

    def __call__(self, context, macros, tal=True, **options):
        if not tal:
            return self.template.body
        return self.render(context.vars.copy())

    def render(self, namespace):
        """The template rendered with ``namespace``, a template's
        variables (``pt_getContext``'s or the trusted engine's zope.tales
        context's ``vars``), which it takes over, by z3c.pt's render."""
        return self.template.render(**self.variables(namespace))

    @staticmethod
    def variables(namespace):
        """``namespace``, taken over, as Chameleon's variables: as the
        trusted engine's zope.tales context has them (``nothing`` is
        None), but for zope.tales' ``repeat``, ``loop`` and ``default``
        (and ``attrs``), which Chameleon has its own of (its ``repeat``
        is what ``repeat/item/number`` steps into)."""
        namespace['nothing'] = None
        for name in CHAMELEON_OWN:
            namespace.pop(name, None)
        return namespace

    @classmethod
    def cook(cls, source_file, text, engine, content_type):
        if not compiles_with_chameleon(engine, content_type):
            return PageTemplateEngine.cook(source_file, text, engine,
                                           content_type)
        try:
            template = ViewTemplate(text, filename=source_file or '<string>',
                                    keep_body=True)
            template.cook_check()
        except Exception:
            log.warning('Chameleon cannot compile %s; zope.tal renders it',
                        source_file, exc_info=True)
            return PageTemplateEngine.cook(source_file, text, engine,
                                           content_type)
        return cls(template), template.macros
