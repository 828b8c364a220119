"""No import circles among our own modules (zope.pipeline and the
benchmarks), counting the imports inside functions too: a circle hidden
in a function is still a circle."""

import ast
import os

from tests.conftest import ROOT

#: (directory the dotted names start from, package) of our own code.
PACKAGES = ((os.path.join(ROOT, 'src'), 'zope.pipeline'),
            (ROOT, 'benchmarks'))


def our_modules():
    """{dotted name: path} of every module of ``PACKAGES``."""
    modules = {}
    for top, package in PACKAGES:
        start = os.path.join(top, *package.split('.'))
        for directory, _subdirectories, files in os.walk(start):
            for name in files:
                if not name.endswith('.py'):
                    continue
                path = os.path.join(directory, name)
                dotted = os.path.relpath(path, top)[:-3].replace(os.sep, '.')
                if dotted.endswith('.__init__'):
                    dotted = dotted[:-len('.__init__')]
                modules[dotted] = path
    return modules


def imported_names(name, path):
    """(dotted name, line) of what the module ``name`` imports, at
    module level and inside functions alike."""
    with open(path) as source:
        tree = ast.parse(source.read(), path)
    package = name if path.endswith('__init__.py') else \
        name.rpartition('.')[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')
                parts = parts[:len(parts) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            yield base, node.lineno
            for alias in node.names:
                yield '%s.%s' % (base, alias.name), node.lineno


def import_graph(modules):
    """{module: {imported module of ours: line}}; ``from x import y``
    imports ``x``, and ``x.y`` too when that is one of our modules."""
    graph = {}
    for name, path in modules.items():
        edges = graph[name] = {}
        for imported, line in imported_names(name, path):
            while imported and imported not in modules:
                imported = imported.rpartition('.')[0]
            if imported and imported != name:
                edges.setdefault(imported, line)
    return graph


def circles(graph):
    """One circle (a list of modules, the first repeated at the end) per
    group of modules that import each other, shortest first."""
    found = []
    seen = set()
    for start in sorted(graph):
        if start in seen:
            continue
        circle = shortest_circle(graph, start)
        if circle:
            seen.update(circle)
            found.append(circle)
    return sorted(found, key=len)


def shortest_circle(graph, start):
    """The shortest path from ``start`` back to it, or None."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for imported in sorted(graph.get(module, ())):
                if imported == start:
                    return paths[module] + [start]
                if imported not in paths:
                    paths[imported] = paths[module] + [imported]
                    following.append(imported)
        frontier = following
    return None


def describe(circle, graph):
    return ' -> '.join(
        '%s (line %d)' % (module, graph[module][circle[index + 1]])
        for index, module in enumerate(circle[:-1])) + ' -> ' + circle[-1]


def test_our_modules_import_no_circle():
    modules = our_modules()
    assert 'zope.pipeline.engine.publisher' in modules
    assert 'zope.pipeline.commands.init_db' in modules
    assert 'benchmarks.harness' in modules
    graph = import_graph(modules)
    # What the graph must see: a function-level import, and a
    # ``from package import module``.
    assert 'zope.pipeline.security.credentials' in graph[
        'zope.pipeline.serving.ownership']
    assert 'benchmarks.peercompare' in graph['benchmarks.harness']
    found = [describe(circle, graph) for circle in circles(graph)]
    assert found == [], 'Import circles:\n' + '\n'.join(found)


def test_a_circle_is_found_and_named(tmp_path):
    package = tmp_path / 'package'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'first.py').write_text('from package import second\n')
    (package / 'second.py').write_text(
        'import os\n\n\ndef late():\n    from .first import thing\n')
    (package / 'third.py').write_text('from package.first import thing\n')
    modules = {'package': str(package / '__init__.py')}
    modules.update(('package.' + name, str(package / (name + '.py')))
                   for name in ('first', 'second', 'third'))
    graph = import_graph(modules)
    assert graph['package.third'] == {'package.first': 1}
    assert [describe(circle, graph) for circle in circles(graph)] == [
        'package.first (line 1) -> package.second (line 5) -> '
        'package.first']


#: Every module of zope.pipeline has its imports at the top unless a
#: ``# late: <reason>`` comment at the import (or above its group of
#: imports) says why.


def late_imports_without_a_reason(path):
    """(line, statement) of each import inside a function of ``path``
    with no ``# late:`` comment on it or above its group of imports."""
    with open(path) as source:
        text = source.read()
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text, path)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for statement in ast.walk(node):
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            index = statement.lineno - 1
            while index >= 0:
                line = lines[index].strip()
                if '# late:' in line:
                    break
                if line and not line.startswith(('import ', 'from ', '#')):
                    found.append((statement.lineno,
                                  lines[statement.lineno - 1].strip()))
                    break
                index -= 1
    return found


def test_a_late_import_says_why():
    modules = our_modules()
    found = []
    for name, path in sorted(modules.items()):
        if name.startswith('zope.pipeline'):
            found.extend('%s:%d: %s' % (name, line, statement) for
                         line, statement in late_imports_without_a_reason(
                             path))
    assert found == [], 'Imports inside functions without "# late:":\n' + \
        '\n'.join(found)


def test_a_late_import_without_a_reason_is_found(tmp_path):
    module = tmp_path / 'module.py'
    module.write_text(
        'def first():\n'
        '    # late: optional\n'
        '    import json\n'
        '    import csv\n'
        '    return json, csv\n\n\n'
        'def second():\n'
        '    value = 1\n'
        '    import json\n'
        '    import csv  # late: optional\n'
        '    return json, csv, value\n')
    assert late_imports_without_a_reason(str(module)) == [
        (10, 'import json')]


#: The layers of zope.pipeline, lowest first: a module imports from its
#: own layer and the layers below it, never from a layer above.  The base
#: modules are what every extension point and stage talks in; the
#: application (``app``, the paste.deploy factory, and what runs a whole
#: site: ``explain``, ``testing``, the sample site, the speedups seam)
#: builds on the stages; only serving and the commands build on it.
LAYERS = (
    ('base', ('zope.pipeline', 'zope.pipeline.interfaces',
              'zope.pipeline.environ', 'zope.pipeline.components')),
    ('http', ('zope.pipeline.http',)),
    ('zodb', ('zope.pipeline.zodb',)),
    ('security', ('zope.pipeline.security',)),
    ('engine', ('zope.pipeline.engine',)),
    ('publishing', ('zope.pipeline.publishing',)),
    ('metrics', ('zope.pipeline.metrics',)),
    ('stages', ('zope.pipeline.stages',)),
    ('application', ('zope.pipeline.app', 'zope.pipeline.explain',
                     'zope.pipeline.testing', 'zope.pipeline.sample',
                     'zope.pipeline._speedups')),
    ('serving', ('zope.pipeline.serving',)),
    ('commands', ('zope.pipeline.commands', 'zope.pipeline.cli')),
)


def layer_of(module, layers=LAYERS):
    """The index in ``layers`` of the layer ``module`` belongs to (the
    longest prefix that names it), or None."""
    found, length = None, -1
    for index, (_name, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + '.')) and \
                    len(prefix) > length:
                found, length = index, len(prefix)
    return found


def upward_imports(graph, layers=LAYERS):
    """'module (line) -> imported' for each import of a higher layer."""
    found = []
    for module, edges in sorted(graph.items()):
        mine = layer_of(module, layers)
        if mine is None:
            continue
        for imported, line in sorted(edges.items()):
            theirs = layer_of(imported, layers)
            if theirs is not None and theirs > mine:
                found.append('%s (%s, line %d) -> %s (%s)' % (
                    module, layers[mine][0], line, imported,
                    layers[theirs][0]))
    return found


def test_every_module_has_a_layer():
    modules = [name for name in our_modules()
               if name.startswith('zope.pipeline')]
    assert [name for name in modules if layer_of(name) is None] == []


def test_imports_go_down_the_layers():
    graph = import_graph(our_modules())
    found = upward_imports(graph)
    assert found == [], 'Imports from a higher layer:\n' + '\n'.join(found)


def test_an_import_from_a_higher_layer_is_found(tmp_path):
    layers = (('low', ('package.low',)), ('high', ('package.high',)))
    graph = {'package.low': {'package.high': 3},
             'package.high': {'package.low': 1},
             'package': {'package.high': 2}}
    assert upward_imports(graph, layers) == [
        'package.low (low, line 3) -> package.high (high)']
