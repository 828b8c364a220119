"""Publications registered with ``<publisher>``, made request types.

The classic publisher asks the ``IPublication`` object that a
``<publisher name methods mimetypes priority factory>`` registration
(zope.app.publication's ``IRequestPublicationRegistry``) names what to do
at each step of a request.  zope.pipeline calls no publication: each
registration becomes a request type, chosen by the same methods, mimetypes,
priority and ``canHandle``, making requests of the class its factory
names, and its chain is the publication.  A publication zope.pipeline
knows (``KNOWN_PUBLICATIONS``) maps onto a chain: zope.app.publication's
own onto the standard chains (``proxied``), grokcore's onto the
view-checked chain (``zope.pipeline.security.models``), with the event
grokcore.view's publication sent after traversal and the error grokcore.rest's
raised for a method without a view.  A subclass that overrides nothing
maps as its base does; any other publication fails at startup with the
ZCML file and line of its registration and what to do.

A registration named like a standard request type (``BROWSER``, ``XMLRPC``,
``HTTP``) takes its place (``browser``, ``xmlrpc``, ``http``: the stage
settings, ``show-pipeline --request-type`` and the metrics keep their
names); others are added under their own names.

Nothing here imports zope.app.publication: when no ``<publisher>``
directive ran in this process its registry module is not loaded and there
is nothing to map.
"""

import sys

from zope.configuration.config import resolveConflicts
from zope.configuration.exceptions import ConfigurationError
from zope.dottedname.resolve import resolve
from zope.interface import implementedBy

from zope.pipeline.engine import factories
from zope.pipeline.engine.ordering import where
from zope.pipeline.engine.registry import UNKNOWN_PLACE
from zope.pipeline.engine.registry import RequestFactoryRegistration
from zope.pipeline.security.models import PROXIED
from zope.pipeline.security.models import VIEW_CHECKED

#: zope.app.publication's module holding the registry ``<publisher>`` fills.
REGISTRY_MODULE = 'zope.app.publication.requestpublicationregistry'
#: ... and the module of its standard request-publication factories.
FACTORIES_MODULE = 'zope.app.publication.requestpublicationfactories'

#: The stage that calls what traversal found.
CALL_STAGE = 'call'

#: ``<publisher>`` names of zope.app.publication's registrations -> the
#: request type they take the place of.
STANDARD_NAMES = {'BROWSER': 'browser', 'XMLRPC': 'xmlrpc', 'HTTP': 'http'}

#: How a publication's ``callObject`` published, and how a chain's
#: ``call`` stage does: the object itself (``mapply``), or the view named
#: after the request method.
CALLS_OBJECT = 'calls the published object'
CALLS_METHOD_VIEWS = 'calls the view named after the request method'

#: zope.publisher's request classes -> zope.pipeline's factory for them.
PIPELINE_FACTORIES = {
    factories.STOCK_CLASSES[factory.request_class]: factory
    for factory in (factories.browser, factories.xmlrpc, factories.http)}


class Mapping:
    """What a known publication class becomes: how it called what it
    published (the call stage of the chain must do the same), its chain's
    security model, and (dotted names, resolved when it is mapped) the
    event it sent after traversal and the error it raised for a method
    without a view."""

    def __init__(self, calls, security=PROXIED, after_traversal_event=None,
                 method_not_allowed=None):
        self.calls = calls
        self.security = security
        self.after_traversal_event = after_traversal_event
        self.method_not_allowed = method_not_allowed


GROK_EVENT = 'grokcore.view.interfaces.AfterTraversalEvent'

#: Publication classes by dotted name.  zope.app.publication's
#: ``XMLRPCPublication`` is its ``BaseHTTPPublication``.
KNOWN_PUBLICATIONS = {
    'zope.app.publication.browser.BrowserPublication':
        Mapping(CALLS_OBJECT),
    'zope.app.publication.http.HTTPPublication': Mapping(CALLS_METHOD_VIEWS),
    'zope.app.publication.http.BaseHTTPPublication': Mapping(CALLS_OBJECT),
    'grokcore.view.publication.GrokBrowserPublication':
        Mapping(CALLS_OBJECT, VIEW_CHECKED, GROK_EVENT),
    'grokcore.rest.publication.GrokHTTPPublication':
        Mapping(CALLS_METHOD_VIEWS, VIEW_CHECKED, GROK_EVENT,
                'grokcore.rest.rest.GrokMethodNotAllowed'),
    'grokcore.xmlrpc.publication.GrokXMLRPCPublication':
        Mapping(CALLS_OBJECT, VIEW_CHECKED, GROK_EVENT),
}

#: What a subclass may define and still map as its known base does.
INERT_ATTRIBUTES = frozenset((
    '__module__', '__qualname__', '__doc__', '__dict__', '__weakref__',
    '__firstlineno__', '__static_attributes__'))

#: Factories whose ``canHandle`` accepts every request: the request type
#: needs no ``canHandle`` of its own.
ACCEPTING_FACTORIES = ('BrowserFactory', 'HTTPFactory', 'XMLRPCFactory')


class PublisherRegistration:
    """One ``<publisher>`` registration, as the classic registry holds it
    once later registrations of the same name replaced it where they
    overlap: its (method, mimetype) keys."""

    def __init__(self, name, factory, priority, keys, info=None):
        self.name = name
        self.factory = factory
        self.priority = priority
        self.keys = keys
        self.info = info

    def describe(self):
        methods = ' '.join(unique(method for method, _ in self.keys))
        mimetypes = ' '.join(unique(mimetype for _, mimetype in self.keys))
        return '<publisher name="%s" factory="%s" methods="%s" ' \
            'mimetypes="%s" priority="%s"> at %s' % (
                self.name, dotted_name(type(self.factory)), methods,
                mimetypes, self.priority, where_registered(self.info))


def unique(items):
    return list(dict.fromkeys(items))


def dotted_name(obj):
    return '%s.%s' % (obj.__module__, obj.__qualname__)


def where_registered(info):
    return where(info) if info is not None else UNKNOWN_PLACE


# -- reading the registrations

def registry_module():
    """zope.app.publication's registry module, if a ``<publisher>``
    directive loaded it; else None."""
    return sys.modules.get(REGISTRY_MODULE)


def registrations_of(registry, infos=None):
    """The PublisherRegistrations a classic ``RequestPublicationRegistry``
    holds, in the order of their first key; ``infos`` maps (method,
    mimetype, name, priority, id(factory)) to the registration's info."""
    infos = infos or {}
    grouped = {}
    for method, by_mimetype in registry._d.items():
        for mimetype, entries in by_mimetype.items():
            for entry in entries:
                key = (entry['name'], id(entry['factory']),
                       entry['priority'])
                found = grouped.get(key)
                if found is None:
                    found = grouped[key] = PublisherRegistration(
                        entry['name'], entry['factory'], entry['priority'],
                        [])
                found.keys.append((method, mimetype))
                found.info = found.info or infos.get(
                    (method, mimetype, entry['name'], entry['priority'],
                     id(entry['factory'])))
    registrations = list(grouped.values())
    in_directive_order(registrations, infos)
    return registrations


def in_directive_order(registrations, infos):
    """Sort each registration's keys as its directive listed them (known
    from the actions' order; the classic registry keeps them by method)."""
    position = {key: index for index, key in enumerate(infos)}
    for registration in registrations:
        registration.keys.sort(key=lambda pair: position.get(
            pair + (registration.name, registration.priority,
                    id(registration.factory)), 0))


def from_global_registry():
    """The registrations of a configuration already loaded in this process
    (zope.app.publication's global ``factoryRegistry``)."""
    module = registry_module()
    if module is None:
        return []
    return registrations_of(module.factoryRegistry)


def is_publisher_action(action, module):
    target = action['callable']
    return getattr(target, '__func__', None) is \
        module.RequestPublicationRegistry.register and \
        getattr(target, '__self__', None) is module.factoryRegistry


def from_actions(actions):
    """The registrations the ``<publisher>`` actions of one configuration
    made (replayed, in the order they run, into a registry of their own,
    so another configuration's leave nothing), with their ZCML info."""
    module = registry_module()
    if module is None:
        return []
    registry = module.RequestPublicationRegistry()
    infos = {}
    for action in resolveConflicts(actions):
        if is_publisher_action(action, module):
            method, mimetype, name, priority, factory = action['args']
            registry.register(method, mimetype, name, priority, factory)
            infos[(method, mimetype, name, priority, id(factory))] = \
                action['info']
    return registrations_of(registry, infos)


# -- mapping them

class PublicationError(ConfigurationError):
    """A ``<publisher>`` registration zope.pipeline cannot express."""



def request_and_publication(registration):
    """(request class, publication class) of the registration's factory;
    None for zope.app.publication's SOAP factory when no SOAP request
    class is registered (it declines every request, as classic)."""
    factory = registration.factory
    if dotted_name(type(factory)) == FACTORIES_MODULE + '.SOAPFactory' \
            and not factory.canHandle({'HTTP_SOAPACTION': 'probe'}):
        return None
    try:
        request_class, publication_class = factory()
    except Exception as error:
        raise PublicationError(
            'The factory of %s failed when zope.pipeline asked it for its '
            'request and publication classes: %s: %s'
            % (registration.describe(), type(error).__name__, error)) \
            from None
    return request_class, publication_class


def overridden(publication_class, base):
    """The names the classes between ``publication_class`` and ``base``
    define (what a subclass changes)."""
    mro = publication_class.__mro__
    return sorted({name for cls in mro[:mro.index(base)] for name in vars(cls)
                   if name not in INERT_ATTRIBUTES})


def mapping_of(publication_class, registration):
    """The Mapping of a known publication class, or of the known base of
    a subclass that overrides nothing; else a PublicationError."""
    for base in publication_class.__mro__:
        mapping = KNOWN_PUBLICATIONS.get(dotted_name(base))
        if mapping is None:
            continue
        changed = overridden(publication_class, base)
        if not changed:
            return mapping
        raise PublicationError(
            'The publication %s of %s overrides %s of %s: zope.pipeline '
            'calls no publication, so it cannot do what they do.  A '
            'publication is a choice of stages here: do their work in a '
            'stage of your own (pipeline:stage; docs/configuration.md, '
            '"Turning a publication into stages") and register the '
            'standard factory in this <publisher> directive, or remove it.'
            % (dotted_name(publication_class), registration.describe(),
               ', '.join(changed), dotted_name(base)))
    raise PublicationError(
        'The publication %s of %s is not one zope.pipeline knows (%s and '
        'their subclasses that override nothing): it cannot say which '
        'stages do its work.  Do its work in stages of your own '
        '(pipeline:stage; docs/configuration.md, "Turning a publication '
        'into stages") and register a standard factory, or remove the '
        'directive.' % (dotted_name(publication_class),
                        registration.describe(),
                        ', '.join(sorted(KNOWN_PUBLICATIONS))))


def call_stage_of(registry, request_class):
    """The ``call`` stage registration the chain for ``request_class``
    gets (the one for the most specific interface), or None."""
    for registration in registry.inner_stages(implementedBy(request_class)):
        if registration.name == CALL_STAGE:
            return registration
    return None


def calls_of(factory):
    """How a call stage's factory publishes, as it declares it in its
    ``calls`` attribute (zope.pipeline.stages.call: ``CallStage`` says
    ``CALLS_OBJECT``, ``MethodCallStage`` ``CALLS_METHOD_VIEWS``, and
    their subclasses inherit it), or None for a factory of the site's own
    that declares nothing."""
    return getattr(factory, 'calls', None)


def check_call_stage(registry, registration, request_class,
                     publication_class, mapping):
    """The chain compiled for the request class must call what it
    publishes as the publication did; a call stage of the site's own is
    trusted to."""
    stage = call_stage_of(registry, request_class)
    if stage is None:
        raise PublicationError(
            "The request class %s of %s gets no '%s' stage: zope.pipeline "
            "cannot publish its requests.  Register one for its request "
            "interface (pipeline:stage name=\"%s\"; zope.pipeline.stages."
            "call.CallStage calls the published object)." % (
                dotted_name(request_class), registration.describe(),
                CALL_STAGE, CALL_STAGE))
    calls = calls_of(stage.factory)
    if calls is None or calls == mapping.calls:
        return
    raise PublicationError(
        "The publication %s of %s %s, but the chain of its request class "
        "%s %s (the '%s' stage %s registered at %s): register a '%s' "
        "stage for its request interface that publishes as the publication "
        "did (zope.pipeline.stages.call: CallStage calls the published "
        "object, MethodCallStage the method views)." % (
            dotted_name(publication_class), registration.describe(),
            mapping.calls, dotted_name(request_class), calls, CALL_STAGE,
            dotted_name(stage.factory), where(stage.info), CALL_STAGE))


def request_factory_for(request_class, publisher_factory):
    """zope.pipeline's factory for zope.publisher's own request classes
    (their locale and URLs remembered); for any other class, one making
    requests of it.  The publisher factory's ``canHandle`` is kept unless
    it is one of zope.app.publication's, which accept every request."""
    accepting = type(publisher_factory).canHandle.__qualname__.split('.')[0]
    accepts_all = type(publisher_factory).canHandle.__module__ == \
        FACTORIES_MODULE and accepting in ACCEPTING_FACTORIES
    factory = PIPELINE_FACTORIES.get(request_class)
    if factory is not None and accepts_all:
        return factory
    return PublisherRequestFactory(
        request_class, None if accepts_all else publisher_factory)


class PublisherRequestFactory(factories.RequestFactory):
    """Requests of a ``<publisher>`` factory's class, chosen when its
    ``canHandle`` accepts the request."""

    def __init__(self, request_class, publisher_factory=None):
        first = next(iter(implementedBy(request_class)), None)
        super().__init__(request_class, first)
        self.publisher_factory = publisher_factory

    def canHandle(self, environ):
        if self.publisher_factory is None:
            return True
        return self.publisher_factory.canHandle(environ)


def resolved(name):
    return resolve(name) if name else None


def request_type_of(registration, registry):
    """The RequestFactoryRegistration a PublisherRegistration becomes in
    ``registry``, or None when it can never make a request."""
    classes = request_and_publication(registration)
    if classes is None:
        return None
    request_class, publication_class = classes
    mapping = mapping_of(publication_class, registration)
    check_call_stage(registry, registration, request_class,
                     publication_class, mapping)
    keys = registration.keys
    return RequestFactoryRegistration(
        STANDARD_NAMES.get(registration.name, registration.name),
        request_factory_for(request_class, registration.factory),
        unique(method for method, _ in keys),
        unique(mimetype for _, mimetype in keys),
        registration.priority, registration.info, mapping.security,
        dotted_name(publication_class),
        resolved(mapping.after_traversal_event),
        resolved(mapping.method_not_allowed), keys=keys)


def apply(registry, publisher_registrations):
    """Make the ``<publisher>`` registrations request types of
    ``registry``: each replaces the request type of the same name
    (``STANDARD_NAMES``) or is added."""
    made = [request_type for request_type in (
        request_type_of(registration, registry)
        for registration in publisher_registrations)
        if request_type is not None]
    if not made:
        return
    by_name = {request_type.name: request_type for request_type in made}
    request_types = [by_name.pop(registration.name, registration)
                     for registration in registry.request_factories]
    request_types.extend(by_name.values())
    registry.replace_request_factories(request_types)
    registry.check_security_models()


def apply_configuration(registry, machine):
    """The end of a configuration: its ``<publisher>`` registrations
    become request types of its pipeline ``registry`` (a ZCML action that
    runs after every other, while the machine still holds its actions)."""
    apply(registry, from_actions(machine.actions))
