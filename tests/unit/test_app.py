"""paste.deploy: the app factory, site ZCML, and ordinary WSGI filters
wrapping the publisher (which show-pipeline still finds)."""

import os
import stat

import pytest
import webtest
from paste.deploy import loadapp
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import app as app_module
from zope.pipeline.app import app_factory
from zope.pipeline.app import load_zcml
from zope.pipeline.app import template_cache_directory
from zope.pipeline.commands import load_publisher
from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.publishing import templates
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE

from .engine_files import engine_file


def test_egg_main_entry_point_builds_the_default_site(clean_zope):
    publisher = loadapp('config:' + engine_file('main.ini'))
    assert isinstance(publisher, Publisher)
    assert set(publisher.request_types) == {'browser', 'xmlrpc', 'http'}
    retry = [stage for stage in publisher.outer.stages
             if stage.name == 'retry']
    assert retry[0].settings['attempts'] == 2


def test_site_zcml_is_relative_to_the_ini(clean_zope):
    app = webtest.TestApp(loadapp('config:' + engine_file('specific.ini')),
                          lint=True)
    assert app.get('/').text == 'browser: generic respond'


def test_pipeline_section_filter_wraps_the_whole_publisher(clean_zope):
    wrapped = loadapp('config:' + engine_file('filtered.ini'))
    assert not isinstance(wrapped, Publisher)
    response = webtest.TestApp(wrapped, lint=True).get('/')
    assert response.headers['X-Wrapped'] == 'by-pipeline'
    assert response.text == 'browser: generic respond'


def test_filter_with_wraps_the_whole_publisher(clean_zope):
    wrapped = loadapp('config:' + engine_file('filter_with.ini'))
    response = webtest.TestApp(wrapped, lint=True).put('/', b'x')
    assert response.headers['X-Wrapped'] == 'by-filter-with'
    assert response.text == 'http: generic respond'


@pytest.mark.parametrize('ini', ['filtered.ini', 'filter_with.ini'])
def test_load_publisher_finds_the_publisher_inside_filters(clean_zope, ini):
    publisher = load_publisher(engine_file(ini))
    assert isinstance(publisher, Publisher)
    assert publisher.outer.names() == ['create_request']


def test_load_publisher_fails_for_an_ini_without_a_publisher(clean_zope):
    with pytest.raises(SystemExit) as caught:
        load_publisher(engine_file('no_publisher.ini'))
    assert str(caught.value) == (
        '%s builds no zope.pipeline publisher.' % engine_file(
            'no_publisher.ini'))


def test_missing_site_zcml_fails_naming_the_file(clean_zope):
    with pytest.raises(ConfigurationError) as caught:
        load_zcml(engine_file('nowhere.zcml'))
    assert str(caught.value) == (
        'The site ZCML file %s does not exist.' % engine_file('nowhere.zcml'))


def test_zcml_without_pipeline_directives_gives_an_empty_registry(
        tmp_path, clean_zope):
    site = tmp_path / 'site.zcml'
    site.write_text('<configure xmlns="http://namespaces.zope.org/zope" />')
    registry = load_zcml(str(site))
    assert (registry.stages, registry.request_factories) == ([], [])


def test_app_factory_without_an_ini_names_the_section_only(
        clean_zope, monkeypatch):
    monkeypatch.chdir(engine_file(''))
    with pytest.raises(ConfigurationError) as caught:
        app_factory({}, site_zcml='specific.zcml', speed='11')
    assert str(caught.value) == (
        "Unknown setting 'speed' in the application section: settings are "
        "'<stage>.<key>' or one of: debugger, demo, development, "
        "principals_zcml, site_zcml, speedups, template_cache.")
    publisher = app_factory({}, site_zcml='specific.zcml')
    assert app_module.built[-1] is publisher


# Where compiled templates are kept (``template_cache``)

WHERE = 'the application section of deploy.ini'


@pytest.fixture
def no_run_dir(monkeypatch):
    monkeypatch.delenv(RUN_DIR_VARIABLE, raising=False)


def test_template_cache_is_a_private_directory_relative_to_the_ini(
        tmp_path, no_run_dir):
    path = template_cache_directory(
        str(tmp_path), {'template_cache': '../compiled'}, WHERE)
    assert path == str(tmp_path.parent / 'compiled')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700


def test_a_template_cache_others_may_write_stops_the_startup(tmp_path,
                                                            no_run_dir):
    shared = tmp_path / 'shared'
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ConfigurationError) as caught:
        template_cache_directory(str(tmp_path), {'template_cache': 'shared'},
                                 WHERE)
    assert str(caught.value).startswith(
        'template_cache = shared in %s cannot keep compiled templates: %s '
        'is writable by its group or by others' % (WHERE, shared))


def test_template_cache_memory_keeps_them_in_memory_under_mod_wsgi(
        tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(tmp_path / 'run'))
    assert template_cache_directory(
        str(tmp_path), {'template_cache': 'memory'}, WHERE) is None
    assert not (tmp_path / 'run').exists()


def test_templates_are_kept_in_the_servers_run_directory_by_default(
        tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(tmp_path / 'run'))
    path = template_cache_directory(str(tmp_path), {}, WHERE)
    assert path == str(tmp_path / 'run' / ('templates-%d' % os.geteuid()))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / 'run').stat().st_mode) == 0o700


def test_without_a_run_directory_templates_are_kept_in_memory(tmp_path,
                                                             no_run_dir):
    assert template_cache_directory(str(tmp_path), {}, WHERE) is None


def test_a_run_directory_that_cannot_keep_templates_is_logged(
        tmp_path, monkeypatch, caplog):
    run = tmp_path / 'run'
    run.mkdir()
    (run / ('templates-%d' % os.geteuid())).write_text('a file')
    monkeypatch.setenv(RUN_DIR_VARIABLE, str(run))
    assert template_cache_directory(str(tmp_path), {}, WHERE) is None
    assert 'Compiled templates are kept in memory: %s/templates-%d ' \
        'cannot keep them' % (run, os.geteuid()) in caplog.text
    assert 'Set template_cache in %s.' % WHERE in caplog.text


def test_the_ini_names_where_the_apps_templates_are_kept(
        tmp_path, clean_zope, no_run_dir):
    site_zcml = engine_file('specific.zcml')
    app_factory({'here': str(tmp_path)}, site_zcml=site_zcml,
                template_cache='compiled')
    assert templates.ViewTemplate.loader.path == str(tmp_path / 'compiled')
    app_factory({'here': str(tmp_path)}, site_zcml=site_zcml)
    assert 'loader' not in templates.ViewTemplate.__dict__


def test_loaded_files_name_every_zcml_file_with_registrations(
        clean_zope, tmp_path):
    site = tmp_path / 'site.zcml'
    site.write_text('<configure xmlns="http://namespaces.zope.org/zope">'
                    '<include package="zope.pipeline" file="pipeline.zcml" />'
                    '</configure>')
    load_zcml(str(site))
    assert str(site) in app_module.loaded_files
    assert app_module.PIPELINE_ZCML in app_module.loaded_files


def test_loaded_files_name_the_file_that_does_not_parse(clean_zope,
                                                        tmp_path):
    # serve --reload watches it: fixing it starts the server again
    broken = tmp_path / 'pkg' / 'configure.zcml'
    broken.parent.mkdir()
    broken.write_text('<configure xmlns="http://namespaces.zope.org/zope">'
                      '<oops')
    site = tmp_path / 'site.zcml'
    site.write_text('<configure xmlns="http://namespaces.zope.org/zope">'
                    '<include package="zope.pipeline" file="pipeline.zcml" />'
                    '<include file="pkg/configure.zcml" /></configure>')
    with pytest.raises(ConfigurationError):
        load_zcml(str(site))
    assert {str(site), str(broken), app_module.PIPELINE_ZCML} <= \
        app_module.loaded_files


def test_loaded_files_name_the_directive_that_failed(clean_zope, tmp_path):
    failing = tmp_path / 'pkg.zcml'
    failing.write_text(
        '<configure xmlns="http://namespaces.zope.org/zope">'
        '<utility component="no.such.module.thing" /></configure>')
    site = tmp_path / 'site.zcml'
    site.write_text('<configure xmlns="http://namespaces.zope.org/zope">'
                    '<include package="zope.component" file="meta.zcml" />'
                    '<include file="pkg.zcml" /></configure>')
    with pytest.raises(ConfigurationError):
        load_zcml(str(site))
    assert str(failing) in app_module.loaded_files
