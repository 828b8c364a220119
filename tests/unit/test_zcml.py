"""The pipeline ZCML directives: actions, conflicts, overrides."""

import pytest
from zope.configuration import config
from zope.configuration import xmlconfig
from zope.configuration.config import ConfigurationConflictError
from zope.configuration.exceptions import ConfigurationError
from zope.publisher.interfaces import IRequest

from zope.pipeline.engine.zcml import registry_of

from .engine_files import at
from .engine_files import engine_file


def stages_of(publisher, request_type):
    registration, spec = publisher.request_types[request_type]
    return [(stage.name, type(stage.app).__name__)
            for stage in publisher.chain_for(spec).stages]


def test_two_registrations_of_one_stage_for_one_interface_conflict(build):
    with pytest.raises(ConfigurationConflictError) as caught:
        build('conflict.zcml')
    text = str(caught.value)
    assert "('zope.pipeline.stage', 'twice', " in text
    path = engine_file('conflict.zcml')
    assert 'File "%s", line %s.' % (path, at('conflict.zcml', 'First')
                                      .rsplit(':', 1)[1]) in text
    assert 'File "%s", line %s.' % (path, at('conflict.zcml', 'Second')
                                      .rsplit(':', 1)[1]) in text


def test_two_request_factories_with_one_name_conflict(clean_zope):
    machine = config.ConfigurationMachine()
    xmlconfig.registerCommonDirectives(machine)
    with pytest.raises(ConfigurationConflictError):
        xmlconfig.string('''
        <configure xmlns="http://namespaces.zope.org/zope"
                   xmlns:pipeline="http://namespaces.zope.org/pipeline">
          <include package="zope.pipeline" file="meta.zcml" />
          <pipeline:requestFactory name="browser" methods="GET"
              factory="zope.pipeline.engine.factories.browser" />
          <pipeline:requestFactory name="browser" methods="POST"
              factory="zope.pipeline.engine.factories.browser" />
        </configure>''', context=machine)


def test_overrides_file_replaces_a_stage_which_keeps_its_place(build):
    publisher = build('site_with_overrides.zcml')
    assert stages_of(publisher, 'browser')[0] == ('first', 'Replacement')
    first = publisher.describe()['request_types']['browser']['stages'][1]
    assert first['name'] == 'first'
    assert first['factory'] == 'tests.engine.stages.Replacement'
    assert first['registered_at'] == at('overrides.zcml', 'name="first"')


def test_overrides_file_adds_a_new_stage_at_its_constrained_place(build):
    publisher = build('site_with_overrides.zcml')
    for request_type in ('browser', 'xmlrpc', 'http'):
        assert stages_of(publisher, request_type) == [
            ('first', 'Replacement'), ('second', 'Second'),
            ('added', 'Added'), ('third', 'Third'), ('respond', 'Respond')]
    described = publisher.describe()['request_types']['http']['stages']
    assert [stage['name'] for stage in described] == [
        'create_request', 'first', 'second', 'added', 'third', 'respond']
    added = described[3]
    assert added['part'] == 'inner'
    assert (added['before'], added['after']) == (['third'], ['second'])
    assert added['registered_at'] == at('overrides.zcml', 'name="added"')


def test_request_through_overridden_pipeline_runs_the_new_stage(serve):
    response = serve('site_with_overrides.zcml').get('/')
    assert response.text == 'browser: replacement second added third respond'


def test_stage_for_a_more_specific_request_replaces_it_for_that_type_only(
        build):
    publisher = build('specific.zcml')
    assert stages_of(publisher, 'xmlrpc') == [
        ('call', 'ForXMLRPC'), ('respond', 'Respond')]
    assert stages_of(publisher, 'browser') == [
        ('call', 'Generic'), ('respond', 'Respond')]
    assert stages_of(publisher, 'http') == [
        ('call', 'Generic'), ('respond', 'Respond')]


def test_requests_reach_the_stage_registered_for_their_type(serve):
    app = serve('specific.zcml')
    assert app.get('/').text == 'browser: generic respond'
    assert app.put('/', b'x').text == 'http: generic respond'
    assert app.post('/', b'<methodCall/>', content_type='text/xml').text == (
        'xmlrpc: xmlrpc-specific respond')


def test_name_registered_as_outer_and_inner_stage_fails(build):
    with pytest.raises(ConfigurationError) as caught:
        build('both_parts.zcml')
    assert str(caught.value) == (
        "Stage 'dual' is registered as an outer stage (no 'for') at %s and "
        "for zope.publisher.interfaces.IRequest at %s: a stage is either "
        "outer or inner." % (at('both_parts.zcml', 'First'),
                             at('both_parts.zcml', 'Second')))


def test_request_factory_with_any_method_and_a_mimetype_fails(build):
    with pytest.raises(ConfigurationError) as caught:
        build('star_method.zcml')
    assert str(caught.value).splitlines()[0] == (
        "Request factory 'unreachable', registered at %s, has methods='*' "
        "and mimetypes='application/json': lookup goes (method, mimetype), "
        "(method, *), (*, *), so a specific mimetype needs named methods."
        % at('star_method.zcml', 'unreachable'))


def test_each_configuration_run_has_its_own_registry():
    first = config.ConfigurationMachine()
    second = config.ConfigurationMachine()
    assert registry_of(first) is registry_of(first)
    assert registry_of(first) is not registry_of(second)


def test_stage_directive_records_constraints_and_where(build):
    publisher = build('ordering.zcml')
    registration = [item for item in publisher.registry.stages
                    if item.name == 'fourth'][0]
    assert registration.for_ is IRequest
    assert registration.after == ('third',)
    assert registration.before == ()
    assert repr(registration) == (
        "<StageRegistration 'fourth' for zope.publisher.interfaces.IRequest "
        "at %s>" % at('ordering.zcml', 'name="fourth"'))
