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


# -- the distribution: licence, metadata, dependencies, sdist


def pyproject():
    import tomllib
    return tomllib.loads(read('pyproject.toml'))


def long_description():
    """The long description setup.py gives the distribution."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        'zope_pipeline_setup', os.path.join(ROOT, 'setup.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.long_description()


def test_the_licence_is_an_spdx_expression_with_its_text_and_notice():
    project = pyproject()['project']
    assert project['license'] == 'ZPL-2.1'
    assert project['license-files'] == ['LICENSE.txt', 'COPYRIGHT.txt']
    assert read('LICENSE.txt').startswith(
        'Zope Public License (ZPL) Version 2.1\n')
    assert read('COPYRIGHT.txt') == 'Zope Foundation and Contributors\n'
    # PEP 639: license classifiers and a license expression exclude each
    # other; setuptools knows license-files from 77 on.
    assert not [name for name in project['classifiers']
                if name.startswith('License ::')]
    assert pyproject()['build-system']['requires'] == ['setuptools>=77.0.3']


def test_the_classifiers_say_a_wsgi_application_for_posix_and_python_3():
    classifiers = pyproject()['project']['classifiers']
    assert 'Topic :: Internet :: WWW/HTTP :: WSGI :: Application' in (
        classifiers)
    assert not [name for name in classifiers if 'WSGI :: Server' in name]
    assert 'Operating System :: POSIX' in classifiers
    assert {'Programming Language :: Python :: 3.%d' % minor
            for minor in (11, 12, 13)} <= set(classifiers)
    assert [name for name in classifiers
            if name.startswith('Development Status ::')]
    assert pyproject()['project']['keywords']


def test_the_long_description_has_no_link_into_the_repository():
    text = long_description()
    assert text.startswith('# zope.pipeline\n')
    targets = re.findall(r'\]\(([^)]*)\)', text) + re.findall(
        r'<a\s[^>]*href="([^"]*)"', text)
    assert [target for target in targets
            if not re.match(r'https?://', target)] == []
    assert 'zope-pipeline create' in text
    assert 'Two commands' not in text


#: A requirement with its lower and upper bounds (the tested range).
RANGE_RE = re.compile(r'^[\w.\[\],-]+ >= [\d.]+, < [\d.]+$')


def test_every_runtime_and_optional_dependency_has_its_tested_range():
    project = pyproject()['project']
    optional = project['optional-dependencies']
    bounded = project['dependencies'] + [
        requirement for extra in ('mysql', 'modwsgi', 'statsd', 'testing',
                                  'compat')
        for requirement in optional[extra]]
    assert [requirement for requirement in bounded
            if not RANGE_RE.match(requirement)] == []


def test_exact_pins_are_in_the_constraints_file_the_makefile_uses():
    optional = pyproject()['project']['optional-dependencies']
    assert not [requirement for requirements in optional.values()
                for requirement in requirements if '==' in requirement]
    pins = dict(line.split('==') for line in read('constraints.txt')
                .splitlines() if line and not line.startswith('#'))
    compat = {re.split(r'[ \[]', requirement)[0]
              for requirement in optional['compat'] + optional['testing']}
    assert compat <= set(pins)
    assert re.search(r'pip install -c \$\(CONSTRAINTS\) -e',
                     read('Makefile'))
    assert re.search(r'^CONSTRAINTS := constraints\.txt$', read('Makefile'),
                     re.MULTILINE)


def test_setup_and_buildout_install_every_extra_the_suite_needs():
    wanted = {'test', 'testing', 'statsd', 'mysql', 'modwsgi', 'compat'}
    extras = re.search(r'^EXTRAS := (\S+)$', read('Makefile'),
                       re.MULTILINE).group(1).split(',')
    assert wanted <= set(extras)
    eggs = buildout_config().get('test', 'eggs')
    assert wanted == set(re.search(r'zope\.pipeline \[([\w,]+)\]', eggs)
                         .group(1).split(','))
    # no extra names zope.pipeline itself (zc.buildout would not follow)
    optional = pyproject()['project']['optional-dependencies']
    assert not [requirement for requirements in optional.values()
                for requirement in requirements
                if requirement.startswith('zope.pipeline')]


def test_make_lint_checks_the_manifest_and_ci_runs_make_lint():
    recipe = re.search(r'^lint:.*\n((?:\t.*\n)+)', read('Makefile'),
                       re.MULTILINE).group(1)
    assert 'check-manifest' in recipe
    assert re.search(r'^run_step \S+ "make lint" make .*\blint\b',
                     read('.ci', 'run'), re.MULTILINE)


def test_the_manifest_takes_the_whole_repository_into_the_sdist():
    manifest = read('MANIFEST.in')
    for directory in ('.ci', 'benchmarks', 'docs', 'etc', 'src', 'tests'):
        assert re.search(r'^graft %s$' % re.escape(directory), manifest,
                         re.MULTILINE)
    included = set(re.findall(r'^include (.*)$', manifest, re.MULTILINE)
                   [0].split() + re.findall(r'^include (.*)$', manifest,
                                             re.MULTILINE)[1].split())
    assert {'CHANGES.rst', 'LICENSE.txt', 'COPYRIGHT.txt', 'Makefile',
            'buildout.cfg', 'constraints.txt', 'setup.py'} <= included
