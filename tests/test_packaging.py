"""The packaging the README promises: a native namespace package, working
entry points, the two commands as Makefile targets, the same console script
through buildout, and CI calling the README's test command."""

import configparser
import importlib
import importlib.metadata
import os
import re

DISTRIBUTION = 'zope.pipeline'
CONSOLE_SCRIPT = 'zope-pipeline'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*path):
    with open(os.path.join(ROOT, *path), encoding='utf-8') as f:
        return f.read()


def entry_point(group, name):
    found = importlib.metadata.distribution(DISTRIBUTION).entry_points.select(
        group=group, name=name)
    assert len(found) == 1, 'no %s entry point %r' % (group, name)
    return next(iter(found))


def markdown_section(text, title):
    """Return the body of the level-2 section called ``title``."""
    match = re.search(r'^## %s\n(.*?)(?=^## |\Z)' % re.escape(title), text,
                      re.MULTILINE | re.DOTALL)
    assert match, 'no section %r' % title
    return match.group(1)


def commands_in_code_blocks(markdown):
    """Return the lines of the fenced code blocks of ``markdown``."""
    blocks = re.findall(r'^```[a-z]*\n(.*?)^```', markdown,
                        re.MULTILINE | re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip()]


def makefile_targets():
    """Return the names of the explicit rules of the Makefile."""
    return set(re.findall(r'^([A-Za-z][\w.-]*):(?!=)', read('Makefile'),
                          re.MULTILINE))


def buildout_config():
    parser = configparser.RawConfigParser()
    parser.read_string(read('buildout.cfg'))
    return parser


def scripts_of(parser, part):
    """Return {entry point name: script name} of a zc.recipe.egg part."""
    scripts = {}
    for line in parser.get(part, 'scripts').split():
        name, _, script = line.partition('=')
        scripts[name] = script or name
    return scripts


def test_zope_is_a_native_namespace_package_without_an_init_file():
    assert not os.path.exists(os.path.join(ROOT, 'src', 'zope', '__init__.py'))
    zope = importlib.import_module('zope')
    assert getattr(zope, '__file__', None) is None
    assert zope.__spec__.origin in (None, 'namespace')
    pipeline = importlib.import_module('zope.pipeline')
    assert os.path.realpath(pipeline.__file__) == os.path.realpath(
        os.path.join(ROOT, 'src', 'zope', 'pipeline', '__init__.py'))


def test_console_script_entry_point_resolves_to_the_cli_main():
    from zope.pipeline.cli import main
    assert entry_point('console_scripts', CONSOLE_SCRIPT).load() is main


def test_paste_app_factory_entry_point_main_resolves_to_the_app_factory():
    from zope.pipeline.app import app_factory
    assert entry_point('paste.app_factory', 'main').load() is app_factory


def test_readme_names_exactly_the_two_commands_serve_and_test():
    section = markdown_section(read('README.md'), 'Two commands')
    assert commands_in_code_blocks(section) == ['make serve', 'make test']


def test_the_two_readme_commands_are_makefile_targets():
    targets = makefile_targets()
    assert {'serve', 'test'} <= targets
    phony = re.search(r'^\.PHONY:(.*?)(?<!\\)\n', read('Makefile'),
                      re.MULTILINE | re.DOTALL).group(1).split()
    assert {'serve', 'test'} <= set(phony)


def test_make_serve_runs_the_console_script_on_the_development_ini():
    makefile = read('Makefile')
    recipe = re.search(r'^serve:.*\n\t(.*)', makefile, re.MULTILINE).group(1)
    assert recipe.startswith('$(VENV)/bin/%s serve $(SERVE_INI)'
                             % CONSOLE_SCRIPT)
    assert re.search(r'^SERVE_INI \?= etc/deploy\.ini$', makefile,
                     re.MULTILINE)
    assert os.path.exists(os.path.join(ROOT, 'etc', 'deploy.ini'))


def test_buildout_makes_the_same_console_script_and_a_test_script():
    parser = buildout_config()
    assert parser.get('buildout', 'develop').split() == ['.']
    parts = parser.get('buildout', 'parts').split()
    scripts = {}
    for part in parts:
        assert parser.get(part, 'recipe') == 'zc.recipe.egg'
        scripts.update(scripts_of(parser, part))
    assert scripts[CONSOLE_SCRIPT] == CONSOLE_SCRIPT
    assert scripts['pytest'] == 'test'


def test_buildout_test_script_has_the_test_extra_of_the_develop_egg():
    parser = buildout_config()
    eggs = [line.strip() for line in parser.get('test', 'eggs').splitlines()
            if line.strip()]
    extras = {egg.split('[', 1)[1].rstrip(']').replace(' ', '')
              for egg in eggs if egg.startswith(DISTRIBUTION + ' [')}
    assert any('test' in extra.split(',') for extra in extras), eggs


def test_ci_runs_the_readme_test_command():
    ci = read('.ci', 'run')
    assert re.search(r'^run_step \S+ "make test" make .*\btest\b', ci,
                     re.MULTILINE)
    assert ci.startswith('#!/usr/bin/env bash\n')
    assert 'set -euo pipefail' in ci
