"""Stage factories get the build context of their chain: what is fixed
per chain (the registry, traversal hooks, output filters, the request
interfaces) is decided when the chain compiles, not per request."""

import pytest
from zope.configuration.exceptions import ConfigurationError
from zope.publisher.interfaces import IRequest

from zope.pipeline.engine.build import BuildContext
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.engine.registry import StageRegistration


@pytest.fixture
def publisher(clean_zope):
    from zope.pipeline.app import make_app
    return make_app()


def stage_app(publisher, request_type, name):
    _registration, spec = publisher.request_types[request_type]
    chain = publisher.chain_for(spec)
    return next(stage.app for stage in chain.stages if stage.name == name)


def test_traversal_hooks_of_site_events_and_authenticate_run_in_turn(
        publisher):
    from zope.pipeline.stages.authenticate import authenticate_at_site
    from zope.pipeline.stages.site_events import before_traverse
    for request_type in ('browser', 'xmlrpc', 'http'):
        traverse = stage_app(publisher, request_type, 'traverse')
        assert traverse.hooks == [before_traverse, authenticate_at_site]


def test_traversal_hooks_are_assembled_in_chain_order():
    from zope.pipeline.stages.authenticate import authenticate_at_site
    from zope.pipeline.stages.site_events import before_traverse

    def first(request, ob):
        pass

    def last(request, ob):
        pass

    class Stage:
        def __init__(self, *hooks):
            self.traversal_hooks = hooks

    build = BuildContext(PipelineRegistry(), {}, [])
    hooks = build.traversal_hooks
    build.assemble([Stage(first, authenticate_at_site),
                    Stage(before_traverse), Stage(), Stage(last)])
    assert build.traversal_hooks is hooks  # the traverse stage holds it
    assert hooks == [first, authenticate_at_site, before_traverse, last]


def test_output_filters_are_assembled_for_the_chains_that_declare_them(
        publisher):
    fix = stage_app(publisher, 'browser', 'fix_relative_links')
    for name in ('call', 'handle_error'):
        assert stage_app(publisher, 'browser', name).filters == [
            fix.base_filter]
        assert stage_app(publisher, 'xmlrpc', name).filters == []


def test_process_inputs_reads_what_its_chain_carries(publisher):
    browser = stage_app(publisher, 'browser', 'process_inputs')
    xmlrpc = stage_app(publisher, 'xmlrpc', 'process_inputs')
    assert browser.process == browser.form_input
    assert xmlrpc.process == xmlrpc.xmlrpc_input


def test_create_request_takes_its_registry_from_the_build_context(
        clean_zope):
    from zope.pipeline.stages.create_request import CreateRequestStage
    registry = PipelineRegistry()
    stage = CreateRequestStage(None, build=BuildContext(registry, {}, []))
    assert stage.choose == registry.choose_request_factory


def test_every_factory_gets_the_context_of_its_chain():
    from zope.pipeline.engine.publisher import Publisher
    got = []

    def factory(next_app, build):
        got.append(build)
        return next_app

    def plain(environ, start_response):
        return []

    context = BuildContext(PipelineRegistry(), {}, [], 'browser', None)
    registration = StageRegistration('probe', IRequest, factory)
    Publisher.build_stage(None, registration, plain, {}, context)
    assert got == [context]


def test_a_factory_that_does_not_take_build_fails_saying_what_to_add():
    from zope.pipeline.engine.publisher import Publisher

    def old_factory(next_app, greeting='hello'):
        return next_app

    context = BuildContext(PipelineRegistry(), {}, [], 'browser', None)
    registration = StageRegistration('old', IRequest, old_factory,
                                     info='site.zcml:7')
    with pytest.raises(ConfigurationError) as raised:
        Publisher.build_stage(None, registration, None, {'greeting': 'hi'},
                              context)
    message = str(raised.value)
    assert message.startswith(
        "Stage 'old' (registered at site.zcml:7): its factory %s."
        'test_a_factory_that_does_not_take_build_fails_saying_what_to_add.'
        "<locals>.old_factory does not take the keyword argument 'build' ("
        % __name__)
    assert message.endswith(
        '); every stage factory is called as factory(next_app, '
        'build=build, **settings): add a build parameter (build=None when '
        'the stage needs nothing of it).')


@pytest.mark.parametrize('signature', ['build', 'keywords'])
def test_a_type_error_of_a_factory_that_takes_build_is_its_own(signature):
    from zope.pipeline.engine.publisher import Publisher

    def factory(next_app, build=None):
        raise TypeError('a mistake of its own')

    def taking_keywords(next_app, **settings):
        raise TypeError('a mistake of its own')

    registration = StageRegistration(
        'own', IRequest, factory if signature == 'build' else taking_keywords)
    with pytest.raises(TypeError, match='a mistake of its own'):
        Publisher.build_stage(None, registration, None, {}, BuildContext(
            PipelineRegistry(), {}, []))


def test_a_factory_whose_signature_cannot_be_read_keeps_its_error():
    from zope.pipeline.engine.publisher import Publisher
    registration = StageRegistration('builtin', IRequest, dict)
    with pytest.raises(TypeError):
        Publisher.build_stage(None, registration, None, {}, BuildContext(
            PipelineRegistry(), {}, []))


def test_the_build_context_hands_the_stages_the_security_model_object():
    from zope.pipeline.engine.registry import RequestFactoryRegistration
    from zope.pipeline.security.models import PROXIED_MODEL
    from zope.pipeline.security.models import VIEW_CHECKED_MODEL
    outer = BuildContext(PipelineRegistry(), {}, [])
    assert (outer.security, outer.security_model) == ('proxied',
                                                      PROXIED_MODEL)
    checked = BuildContext(
        PipelineRegistry(), {}, [], 'browser', None,
        request_type_registration=RequestFactoryRegistration(
            'browser', None, security='view-checked'))
    assert (checked.security, checked.security_model) == (
        'view-checked', VIEW_CHECKED_MODEL)


def test_build_contexts_share_the_dict_they_are_given():
    shared = {}
    first = BuildContext(PipelineRegistry(), {}, [], shared=shared)
    second = BuildContext(PipelineRegistry(), {}, [], 'browser', None,
                          shared)
    assert first.shared is second.shared is shared
    assert BuildContext(PipelineRegistry(), {}, []).shared == {}
