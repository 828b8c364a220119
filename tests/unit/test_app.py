"""paste.deploy: the app factory, site ZCML, and ordinary WSGI filters
wrapping the publisher (which show-pipeline still finds)."""

import pytest
import webtest
from paste.deploy import loadapp
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import app as app_module
from zope.pipeline.app import app_factory
from zope.pipeline.app import load_zcml
from zope.pipeline.commands import load_publisher
from zope.pipeline.publisher import Publisher

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
        "'<stage>.<key>' or one of: demo, principals_zcml, site_zcml.")
    publisher = app_factory({}, site_zcml='specific.zcml')
    assert app_module.built[-1] is publisher
