"""Stage factories get the build context of their chain: what is fixed
per chain (the registry, traversal hooks, output filters, the request
interfaces) is decided when the chain compiles, not per request."""

import pytest
from zope.publisher.interfaces import IRequest

from zope.pipeline.build import BuildContext
from zope.pipeline.build import accepts_build
from zope.pipeline.registry import PipelineRegistry
from zope.pipeline.registry import StageRegistration


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


def test_a_factory_that_takes_build_gets_the_context_of_its_chain():
    from zope.pipeline.publisher import Publisher
    got = []

    def factory(next_app, build):
        got.append(build)
        return next_app

    def plain(next_app):
        return next_app

    assert accepts_build(factory) and not accepts_build(plain)
    context = BuildContext(PipelineRegistry(), {}, [], 'browser', None)
    registration = StageRegistration('probe', IRequest, factory)
    Publisher.build_stage(None, registration, plain, {}, context)
    assert got == [context]


def test_build_contexts_share_the_dict_they_are_given():
    shared = {}
    first = BuildContext(PipelineRegistry(), {}, [], shared=shared)
    second = BuildContext(PipelineRegistry(), {}, [], 'browser', None,
                          shared)
    assert first.shared is second.shared is shared
    assert BuildContext(PipelineRegistry(), {}, []).shared == {}
