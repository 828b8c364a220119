"""zope-pipeline create: the files of a new project, and what it refuses
(tests/functional/test_create.py runs a new project's tests and serves it;
tests/integration/test_installed_wheel.py does it from an installed
wheel)."""

import os

import pytest

from zope.pipeline.cli import main
from zope.pipeline.commands import create

PROJECT_FILES = [
    '.gitignore', 'README.md', 'etc/deploy-mysql.ini', 'etc/deploy.ini',
    'etc/site.zcml', 'etc/zodb-mysql.conf', 'etc/zodb-sqlite.conf',
    'pyproject.toml', 'src/{p}/__init__.py', 'src/{p}/configure.zcml',
    'src/{p}/content.py', 'src/{p}/ftesting.zcml', 'src/{p}/interfaces.py',
    'src/{p}/site.zcml', 'src/{p}/static/site.css',
    'src/{p}/templates/document.pt',
    'src/{p}/templates/form.pt', 'src/{p}/templates/front.pt',
    'src/{p}/tests/__init__.py', 'src/{p}/tests/test_site.py',
    'src/{p}/views.py', 'var/README']


def files_under(directory):
    return sorted(os.path.relpath(os.path.join(path, name), directory)
                  for path, _directories, names in os.walk(directory)
                  for name in names)


def test_a_project_gets_its_package_inis_zcml_and_tests(tmp_path, capsys):
    target = tmp_path / 'My-Site'
    assert main(['create', str(target)]) == 0
    assert files_under(target) == sorted(
        name.format(p='my_site') for name in PROJECT_FILES)
    for name in files_under(target):
        text = (target / name).read_text()
        assert '{{' not in text and '+package+' not in text, name
    assert 'name = "My-Site"' in (target / 'pyproject.toml').read_text()
    assert "SITE_TITLE = 'My site'" in (
        target / 'src/my_site/views.py').read_text()
    assert 'open_root.populate = my_site.content.populate' in (
        target / 'etc/deploy.ini').read_text()
    out = capsys.readouterr().out
    assert out.startswith('Wrote 22 files of the project My-Site (package '
                          'my_site) in %s.  Next:\n' % target)
    assert 'python -m zope.testrunner --test-path=src' in out


def test_the_package_may_be_named(tmp_path):
    assert main(['create', str(tmp_path / 'blog'), '--package',
                 'shop']) == 0
    assert (tmp_path / 'blog' / 'src' / 'shop' / 'content.py').exists()
    assert 'db shop' in (tmp_path / 'blog/etc/zodb-mysql.conf').read_text()


def test_an_empty_directory_is_used(tmp_path):
    (tmp_path / 'empty').mkdir()
    assert main(['create', str(tmp_path / 'empty')]) == 0
    assert (tmp_path / 'empty' / 'etc' / 'deploy.ini').exists()


@pytest.mark.parametrize('arguments, message', [
    (['9lives'], "'9lives' cannot name a project"),
    (['blog', '--package', 'Shop'], "--package 'Shop': a package name"),
    (['blog', '--package', 'class'], "--package 'class': a package name"),
    (['blog', '--package', 'json'], "A module 'json' is installed already"),
])
def test_bad_names_are_refused(tmp_path, arguments, message):
    with pytest.raises(SystemExit, match=message):
        main(['create', str(tmp_path / arguments[0])] + arguments[1:])
    assert os.listdir(tmp_path) == []


def test_a_directory_with_files_is_refused(tmp_path):
    (tmp_path / 'blog').mkdir()
    (tmp_path / 'blog' / 'notes.txt').write_text('mine')
    with pytest.raises(SystemExit, match='is not empty'):
        main(['create', str(tmp_path / 'blog')])
    assert os.listdir(tmp_path / 'blog') == ['notes.txt']


def test_a_file_is_refused(tmp_path):
    (tmp_path / 'blog').write_text('mine')
    with pytest.raises(SystemExit, match='exists and is not a directory'):
        main(['create', str(tmp_path / 'blog')])


def test_a_project_named_like_an_installed_module_needs_a_package_name(
        tmp_path):
    with pytest.raises(SystemExit, match="A module 'site' is installed"):
        main(['create', str(tmp_path / 'site')])
    assert main(['create', str(tmp_path / 'site'), '--package',
                 'mysite_web']) == 0


def test_the_default_package_name_is_the_projects_in_lower_case():
    assert create.package_name('My-Site.2') == 'my_site_2'
    assert create.package_name('shop') == 'shop'


def test_every_placeholder_of_the_templates_has_a_value():
    values = {'project': 'p', 'package': 'p', 'title': 'P',
              'version': '1'}
    for template, _relative in create.template_files():
        with open(template) as stream:
            create.render(stream.read(), values)
    with pytest.raises(KeyError):
        create.render('{{unknown}}', values)


def test_only_template_files_are_written(tmp_path, monkeypatch):
    template = tmp_path / 'template'
    (template / '+package+').mkdir(parents=True)
    (template / '+package+' / 'a.py_tmpl').write_text('# {{package}}\n')
    (template / '+package+' / 'a.py~').write_text('an editor backup\n')
    monkeypatch.setattr(create, 'TEMPLATE', str(template))
    assert [relative for _path, relative in create.template_files()] == [
        '+package+/a.py']
    assert create.write_project(str(tmp_path / 'out'), {
        'package': 'shop'}) == [str(tmp_path / 'out' / 'shop' / 'a.py')]
    assert (tmp_path / 'out' / 'shop' / 'a.py').read_text() == '# shop\n'
