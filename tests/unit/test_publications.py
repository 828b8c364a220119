"""<publisher> registrations (zope.app.publication's request-publication
registry) become request types when the configuration ends
(zope.pipeline.engine.publications): zope.app.publication's publications onto
the
standard chains, Grok's onto view-checked ones; a publication that cannot
be expressed fails at startup with its ZCML file and line."""

import io
import re
import sys

import pytest

pytest.importorskip('zope.app.publication')

from zope.configuration import xmlconfig  # noqa: E402
from zope.configuration.exceptions import ConfigurationError  # noqa: E402

from zope.pipeline.app import load_zcml  # noqa: E402
from zope.pipeline.app import make_publisher_for_loaded_site  # noqa: E402
from zope.pipeline.engine import factories  # noqa: E402
from zope.pipeline.engine.introspect import describe  # noqa: E402
from zope.pipeline.engine.introspect import format_text  # noqa: E402
from zope.pipeline.engine.publications import PublicationError  # noqa: E402
from zope.pipeline.engine.publisher import Publisher  # noqa: E402
from zope.pipeline.engine.registry import UNKNOWN_PLACE  # noqa: E402

FACTORIES = 'zope.app.publication.requestpublicationfactories.'
OWN = 'tests.unit.publication_classes.'

#: zope.app.publication's own registrations (its configure.zcml).
STANDARD = '''
  <publisher name="SOAP" factory="%(f)sSOAPFactory" methods="POST"
             mimetypes="text/xml" priority="30" />
  <publisher name="XMLRPC" factory="%(f)sXMLRPCFactory" methods="POST"
             mimetypes="text/xml" priority="20" />
  <publisher name="BROWSER" factory="%(f)sBrowserFactory"
             methods="GET POST HEAD" mimetypes="*" priority="10" />
  <publisher name="HTTP" factory="%(f)sHTTPFactory" methods="*"
             mimetypes="*" priority="0" />
''' % {'f': FACTORIES}

#: What grokcore.view, grokcore.rest and grokcore.xmlrpc register.
GROK = '''
  <publisher name="BROWSER"
             factory="grokcore.view.publication.GrokBrowserFactory"
             methods="GET POST HEAD" mimetypes="*" priority="11" />
  <publisher name="HTTP" factory="grokcore.rest.publication.GrokHTTPFactory"
             methods="*" mimetypes="*" priority="1" />
  <publisher name="XMLRPC"
             factory="grokcore.xmlrpc.publication.GrokXMLRPCFactory"
             methods="POST" mimetypes="text/xml" priority="21" />
'''

#: A site loaded without zope.pipeline's configuration (a test layer's).
CLASSIC_SITE = '''<configure xmlns="http://namespaces.zope.org/zope">
  <include package="zope.app.publication" file="meta.zcml" />
%s
</configure>
'''

SITE = '''<configure xmlns="http://namespaces.zope.org/zope"
           xmlns:pipeline="http://namespaces.zope.org/pipeline">
  <include package="zope.pipeline" file="pipeline.zcml" />
  <include package="zope.app.publication" file="meta.zcml" />
%s
</configure>
'''


@pytest.fixture
def configure(clean_zope, tmp_path):
    """Load a site of the standard pipeline and ``publishers`` ZCML;
    return its PipelineRegistry (and its file: ``configure.path``)."""
    def load(publishers):
        path = tmp_path / 'site.zcml'
        path.write_text(SITE % publishers)
        load.path = str(path)
        return load_zcml(str(path))
    return load


def request_types(registry):
    return {registration.name: registration
            for registration in registry.request_factories}


def line_of(path, text):
    """The line of the directive whose attributes hold ``text``."""
    lines = open(path).read().splitlines()
    found = next(number for number, line in enumerate(lines, 1)
                 if text in line)
    return next(number for number in range(found, 0, -1)
                if '<publisher' in lines[number - 1])


# -- zope.app.publication's publications: the standard chains

def test_standard_publications_make_the_standard_request_types(configure):
    registry = configure(STANDARD)
    types = request_types(registry)
    assert list(types) == ['browser', 'xmlrpc', 'http']
    assert types['browser'].publication == \
        'zope.app.publication.browser.BrowserPublication'
    assert types['xmlrpc'].publication == \
        'zope.app.publication.http.BaseHTTPPublication'
    assert types['http'].publication == \
        'zope.app.publication.http.HTTPPublication'
    assert {registration.security for registration in types.values()} == \
        {'proxied'}
    # zope.publisher's classes: zope.pipeline's own factories for them
    assert types['browser'].factory is factories.browser
    assert types['xmlrpc'].factory is factories.xmlrpc
    assert types['http'].factory is factories.http


def test_publication_request_type_names_its_publisher_directive(configure):
    registry = configure(STANDARD)
    browser = request_types(registry)['browser']
    assert browser.info.file == configure.path
    assert browser.info.line == line_of(configure.path, 'BrowserFactory')
    assert (browser.methods, browser.mimetypes, browser.priority) == (
        ('GET', 'POST', 'HEAD'), ('*',), 10)


def test_soap_publication_without_soap_request_class_makes_no_request_type(
        configure):
    # it declines every request under the classic publisher too
    registry = configure(STANDARD)
    assert 'SOAP' not in request_types(registry)
    environ = {'REQUEST_METHOD': 'POST', 'CONTENT_TYPE': 'text/xml',
               'HTTP_SOAPACTION': 'x'}
    assert registry.choose_request_factory(environ).name == 'xmlrpc'


def test_site_without_publishers_keeps_its_request_types(configure):
    registry = configure('')
    assert [registration.publication for registration in
            registry.request_factories] == [None, None, None]


def test_publishers_of_another_configuration_are_not_mapped(configure,
                                                            tmp_path):
    pytest.importorskip('grokcore.view')
    configure(GROK)  # fills zope.app.publication's global registry
    plain = tmp_path / 'plain.zcml'
    plain.write_text(SITE % '')
    types = request_types(load_zcml(str(plain)))
    assert types['browser'].security == 'proxied'
    assert types['browser'].publication is None


# -- Grok's publications: view-checked chains

def test_grok_publications_make_view_checked_request_types(configure):
    pytest.importorskip('grokcore.rest')
    pytest.importorskip('grokcore.xmlrpc')
    from grokcore.rest.rest import GrokMethodNotAllowed
    from grokcore.view.interfaces import AfterTraversalEvent
    types = request_types(configure(STANDARD + GROK))
    assert list(types) == ['browser', 'xmlrpc', 'http']
    assert {name: registration.security for name, registration
            in types.items()} == dict.fromkeys(types, 'view-checked')
    assert types['browser'].publication == \
        'grokcore.view.publication.GrokBrowserPublication'
    assert types['browser'].priority == 11
    assert types['browser'].info.line == line_of(configure.path,
                                                 'GrokBrowserFactory')
    assert {registration.after_traversal_event for registration
            in types.values()} == {AfterTraversalEvent}
    assert types['http'].method_not_allowed is GrokMethodNotAllowed
    assert types['browser'].method_not_allowed is None


def test_grok_browser_publication_alone_leaves_the_others_proxied(
        configure):
    pytest.importorskip('grokcore.view')
    types = request_types(configure(STANDARD + GROK.split('  <publisher '
                                                          'name="HTTP"')[0]))
    assert types['browser'].security == 'view-checked'
    assert types['http'].security == 'proxied'
    assert types['xmlrpc'].security == 'proxied'


def test_show_pipeline_names_the_publication_of_each_request_type(
        configure):
    pytest.importorskip('grokcore.view')
    registry = configure(STANDARD + GROK.split('  <publisher name="HTTP"')[0])
    data = describe(Publisher(registry))
    browser = data['request_types']['browser']['origin']
    assert browser == {
        'security': 'view-checked', 'security_chosen_at': None,
        'trusted_views': [
            'zope.pipeline.interfaces.ITrustedView',
            'grokcore.view.interfaces.IGrokSecurityView',
            'grokcore.view.interfaces.IGrokView',
            'grokcore.rest.interfaces.IREST'],
        'publication': 'grokcore.view.publication.GrokBrowserPublication',
        'registered_by': 'publisher',
        'registered_at': '%s:%d' % (configure.path, line_of(
            configure.path, 'GrokBrowserFactory'))}
    text = format_text(data, 'browser')
    assert ('  made from:     the publication grokcore.view.publication.'
            'GrokBrowserPublication (<publisher> at %s:' % configure.path
            ) in text
    assert '  security:      view-checked\n  trusted views: views ' \
        'providing zope.pipeline.interfaces.ITrustedView,' in text


# -- publications of applications

def test_subclass_overriding_nothing_maps_as_its_base(configure):
    registry = configure('<publisher name="BROWSER" factory="%sRenamedFactory"'
                         ' methods="GET POST HEAD" priority="10" />' % OWN)
    browser = request_types(registry)['browser']
    assert browser.publication == OWN + 'RenamedPublication'
    assert browser.security == 'proxied'


def test_publication_doing_work_of_its_own_fails_at_startup_with_its_line(
        configure):
    with pytest.raises(PublicationError) as raised:
        configure('\n\n<publisher name="BROWSER" factory="%sCallingFactory"'
                  ' methods="GET POST HEAD" priority="10" />' % OWN)
    message = str(raised.value)
    assert 'The publication %sCallingPublication of <publisher ' \
        'name="BROWSER" factory="%sCallingFactory" methods="GET POST HEAD"' \
        ' mimetypes="*" priority="10"> at %s:%d overrides afterCall, ' \
        'callObject of zope.app.publication.browser.BrowserPublication' % (
            OWN, OWN, configure.path,
            line_of(configure.path, 'CallingFactory')) in message
    assert '"Turning a publication into stages"' in message


def test_publication_zope_pipeline_does_not_know_fails_at_startup(configure):
    with pytest.raises(PublicationError) as raised:
        configure('<publisher name="OWN" factory="%sOwnFactory" '
                  'methods="GET" priority="50" />' % OWN)
    assert re.search(r'The publication \S+OwnPublication of <publisher '
                     r'name="OWN" .* at \S+site.zcml:\d+ is not one '
                     r'zope.pipeline knows', str(raised.value))


def test_publication_for_another_kind_of_request_fails_at_startup(configure):
    with pytest.raises(PublicationError) as raised:
        configure('<publisher name="BROWSER" factory="%sMismatchedFactory" '
                  'methods="GET POST HEAD" priority="10" />' % OWN)
    assert 'HTTPPublication of <publisher name="BROWSER" factory=' \
        '"%sMismatchedFactory"' % OWN in str(raised.value)
    assert 'calls the view named after the request method, but the chain ' \
        'of its request class zope.publisher.browser.BrowserRequest calls ' \
        "the published object (the 'call' stage zope.pipeline.stages.call." \
        'CallStage registered at ' in str(raised.value)


def test_factory_that_fails_names_its_registration(configure):
    with pytest.raises(PublicationError) as raised:
        configure('<publisher name="BROWSER" factory="%sFailingFactory" '
                  'methods="GET POST HEAD" priority="10" />' % OWN)
    assert 'RuntimeError: no request class today' in str(raised.value)
    assert 'factory="%sFailingFactory"' % OWN in str(raised.value)


def test_publisher_with_a_request_class_of_its_own_adds_a_request_type(
        configure):
    from tests.unit.publication_classes import JSONRequest
    registry = configure('<publisher name="JSON" factory="%sJSONFactory" '
                         'methods="POST" mimetypes="application/json" '
                         'priority="30" />' % OWN)
    json = request_types(registry)['JSON']
    assert list(request_types(registry)) == ['browser', 'xmlrpc', 'http',
                                             'JSON']
    environ = {'REQUEST_METHOD': 'POST', 'CONTENT_TYPE': 'application/json'}
    # the publisher factory's canHandle decides
    assert registry.choose_request_factory(environ).name == 'browser'
    environ['HTTP_X_JSON'] = 'yes'
    assert registry.choose_request_factory(environ) is json
    assert json.factory.request_class is JSONRequest
    publisher = Publisher(registry)
    assert publisher.request_types['JSON'][1].isOrExtends(
        json.factory.request_interface)


PAGES = ('<pipeline:requestFactory name="pages" factory="zope.pipeline.'
         'engine.factories.browser" methods="GET" mimetypes="text/plain" '
         'priority="50" security="view-checked" />')


def test_request_types_of_one_kind_with_two_security_models_fail(configure):
    registry = configure(PAGES)
    with pytest.raises(ConfigurationError) as raised:
        Publisher(registry)
    assert "Request types 'browser' (pipeline:requestFactory at " in \
        str(raised.value)
    assert "ask for the security models proxied and view-checked" in \
        str(raised.value)


def test_publication_sharing_a_chain_with_another_model_fails(configure):
    with pytest.raises(ConfigurationError) as raised:
        configure(STANDARD + PAGES)
    assert "Request types 'browser' (the publication zope.app.publication." \
        "browser.BrowserPublication, <publisher> at %s:" % configure.path \
        in str(raised.value)


def test_request_class_of_an_application_makes_requests_of_it(configure):
    from tests.unit.publication_classes import CustomBrowserRequest
    registry = configure('<publisher name="BROWSER" factory="%s'
                         'CustomRequestFactory" methods="GET POST HEAD" '
                         'priority="10" />' % OWN)
    browser = request_types(registry)['browser']
    assert browser.factory.request_class is CustomBrowserRequest
    assert browser.factory.canHandle({})
    request = browser.factory(io.BytesIO(b''), {'REQUEST_METHOD': 'GET'})
    assert type(request) is CustomBrowserRequest


def test_request_class_that_is_no_http_request_fails(configure):
    with pytest.raises(PublicationError) as raised:
        configure('<publisher name="BROWSER" factory="%sNoHTTPFactory" '
                  'methods="GET" priority="10" />' % OWN)
    assert 'The request class zope.publisher.base.BaseRequest of ' \
        '<publisher name="BROWSER"' in str(raised.value)
    assert "gets no 'call' stage: zope.pipeline cannot publish its " \
        "requests." in str(raised.value)


#: The JSON request type with zope.app.publication's XMLRPCPublication:
#: the published object is called, which the chain of an HTTP request
#: class does not do unless the site registers a call stage that does.
JSON_OBJECTS = ('<publisher name="JSON" factory="%sJSONObjectsFactory" '
                'methods="POST" mimetypes="application/json" priority="30" />'
                % OWN)
CALL_STAGE = ('<pipeline:stage name="call" factory="%s" after="traverse" '
              'for="tests.unit.publication_classes.IJSONRequest" />')


def test_publication_calling_objects_needs_a_chain_that_calls_them(
        configure):
    with pytest.raises(PublicationError) as raised:
        configure(JSON_OBJECTS)
    assert 'calls the published object, but the chain of its request ' \
        'class %sJSONRequest calls the view named after the request ' \
        'method' % OWN in str(raised.value)


@pytest.mark.parametrize('factory', [
    'zope.pipeline.stages.call.CallStage',
    'tests.unit.publication_classes.call_stage'])
def test_call_stage_the_site_registers_for_its_request_class_is_used(
        configure, factory):
    registry = configure(JSON_OBJECTS + CALL_STAGE % factory)
    json = request_types(registry)['JSON']
    assert json.publication == 'zope.app.publication.http.BaseHTTPPublication'
    publisher = Publisher(registry)
    chain = publisher.chain_for(publisher.request_types['JSON'][1])
    assert chain.stages[-1].registration.factory.__name__ == \
        factory.rsplit('.', 1)[-1]


def test_call_stage_of_the_site_declaring_how_it_publishes_is_checked(
        configure):
    # a factory of the site's own says how it publishes in its ``calls``;
    # one that says it calls method views cannot publish objects
    with pytest.raises(PublicationError) as raised:
        configure(JSON_OBJECTS + CALL_STAGE
                  % 'tests.unit.publication_classes.method_call_stage')
    assert "(the 'call' stage tests.unit.publication_classes." \
        'method_call_stage registered at ' in str(raised.value)


def test_without_zope_app_publication_there_is_nothing_to_map(
        configure, monkeypatch):
    from zope.pipeline.engine import publications
    monkeypatch.setitem(sys.modules, publications.REGISTRY_MODULE, None)
    assert publications.from_global_registry() == []
    assert publications.from_actions([]) == []
    assert [registration.publication for registration in configure(
        '').request_factories] == [None, None, None]


# -- a site loaded before zope.pipeline's configuration (test layers)

def test_loaded_site_publishers_become_request_types_of_its_publisher(
        clean_zope):
    pytest.importorskip('grokcore.view')
    xmlconfig.string(CLASSIC_SITE % (STANDARD + GROK.split(
        '  <publisher name="HTTP"')[0]))
    publisher = make_publisher_for_loaded_site()
    browser, _spec = publisher.request_types['browser']
    assert browser.security == 'view-checked'
    assert browser.info is None
    assert describe(publisher)['request_types']['browser']['origin'][
        'registered_at'] == UNKNOWN_PLACE


def test_loaded_site_error_says_its_place_is_not_known(clean_zope):
    xmlconfig.string(CLASSIC_SITE % ('<publisher name="BROWSER" factory='
                                     '"%sCallingFactory" methods="GET" />'
                                     % OWN))
    with pytest.raises(PublicationError) as raised:
        make_publisher_for_loaded_site()
    assert UNKNOWN_PLACE in str(raised.value)
