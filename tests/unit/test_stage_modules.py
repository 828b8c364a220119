"""One stage, one module: a stage depends on shared modules, never on a
sibling stage."""

import ast
import os

import zope.pipeline.stages

STAGES = os.path.dirname(zope.pipeline.stages.__file__)


def imported_modules(path):
    with open(path) as source:
        tree = ast.parse(source.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from ('%s.%s' % (node.module, alias.name)
                        for alias in node.names)


def test_no_stage_module_imports_another_stage_module():
    found = {}
    for name in sorted(os.listdir(STAGES)):
        if not name.endswith('.py') or name == '__init__.py':
            continue
        siblings = {module for module in imported_modules(
            os.path.join(STAGES, name))
            if module.startswith('zope.pipeline.stages.')}
        if siblings:
            found[name] = sorted(siblings)
    assert found == {}
