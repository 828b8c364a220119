"""Write a new project: a site package published by zope.pipeline, with
its deployments, its ZCML and its functional tests.

DIRECTORY must not exist, or be empty; its last part is the project's
name, and the Python package is named after it unless --package names
it.  The project has etc/deploy.ini (waitress, RelStorage on SQLite in
var/data), etc/deploy-mysql.ini (RelStorage on MySQL/MariaDB), their ZODB
configurations and etc/site.zcml; a package with a content class, a
front page, a page per document, add and edit forms, ftesting.zcml and
functional tests on zope.pipeline's test layer; a pyproject.toml and a
README that says how to serve and test it.
"""

import importlib.metadata
import importlib.util
import keyword
import os
import re

NAME = 'create'
HELP = 'write a new project: a site package, its deployments and tests'

#: The project's files, as templates (package data of zope.pipeline).
TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'project_template')
#: What every template file's name ends with (so none is a module).
SUFFIX = '_tmpl'
#: The template directory that becomes the package's.
PACKAGE_DIRECTORY = '+package+'
#: Template files whose names start with a dot once written.
DOT_FILES = ('gitignore',)
#: A placeholder in a template: {{name}}.
PLACEHOLDER_RE = re.compile(r'\{\{(\w+)\}\}')

PROJECT_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_.-]{0,63}$')
PACKAGE_RE = re.compile(r'^[a-z][a-z0-9_]{0,63}$')


def add_arguments(parser):
    parser.add_argument('directory', metavar='DIRECTORY',
                        help='the project directory to make (it must not '
                        'exist, or be empty); its name is the project\'s')
    parser.add_argument('--package', metavar='NAME',
                        help='the Python package of the site (default: the '
                        'project\'s name in lower case, with _ for what is '
                        'not a letter or a digit)')


def run(args):
    target = os.path.abspath(args.directory)
    project = os.path.basename(target)
    if not PROJECT_RE.match(project):
        raise SystemExit('%r cannot name a project: start with a letter, '
                         'then letters, digits, _ . - (at most 64).'
                         % project)
    package = args.package or package_name(project)
    check_package(package)
    check_empty(target)
    values = {'project': project, 'package': package,
              'title': project.replace('_', ' ').replace('-', ' ')
              .capitalize(),
              'version': importlib.metadata.version('zope.pipeline')}
    written = write_project(target, values)
    print('Wrote %d files of the project %s (package %s) in %s.  Next:\n'
          '  cd %s\n'
          "  pip install -e '.[test]'\n"
          '  zope-pipeline serve etc/deploy.ini\n'
          '  python -m zope.testrunner --test-path=src'
          % (len(written), project, package, target, target))
    return 0


def package_name(project):
    """The default package name of a project."""
    return re.sub(r'[^a-z0-9]+', '_', project.lower()).strip('_')


def check_package(package):
    """Refuse a name that is no package name, or that an installed module
    has (the project's package would hide it, or be hidden)."""
    if not PACKAGE_RE.match(package) or keyword.iskeyword(package):
        raise SystemExit('--package %r: a package name is a lower-case '
                         'letter, then letters, digits and _ (at most '
                         '64), and no Python keyword.' % package)
    if importlib.util.find_spec(package) is not None:
        raise SystemExit('A module %r is installed already: name the '
                         'package with --package.' % package)


def check_empty(target):
    if os.path.isdir(target) and os.listdir(target):
        raise SystemExit('%s is not empty: choose a new directory.'
                         % target)
    if os.path.exists(target) and not os.path.isdir(target):
        raise SystemExit('%s exists and is not a directory.' % target)


def template_files():
    """(template path, path in the project) of every template file."""
    for directory, _subdirectories, names in sorted(os.walk(TEMPLATE)):
        for name in sorted(names):
            if not name.endswith(SUFFIX):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, TEMPLATE)[:-len(SUFFIX)]
            if os.path.basename(relative) in DOT_FILES:
                relative = os.path.join(os.path.dirname(relative),
                                        '.' + os.path.basename(relative))
            yield path, relative


def render(text, values):
    """``text`` with each {{name}} replaced by its value."""
    return PLACEHOLDER_RE.sub(lambda match: values[match.group(1)], text)


def write_project(target, values):
    """Write the project's files into ``target``; return their paths."""
    written = []
    for template, relative in template_files():
        relative = relative.replace(PACKAGE_DIRECTORY, values['package'])
        path = os.path.join(target, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(template, encoding='utf-8') as source:
            text = render(source.read(), values)
        with open(path, 'x', encoding='utf-8') as output:
            output.write(text)
        written.append(path)
    return written
