"""The ``pipeline`` ZCML namespace: ``stage``, ``requestFactory`` and
``security``."""

from zope.configuration.exceptions import ConfigurationError
from zope.configuration.fields import GlobalInterface
from zope.configuration.fields import GlobalObject
from zope.configuration.fields import Tokens
from zope.interface import Interface
from zope.schema import Int
from zope.schema import TextLine

from zope.pipeline.engine import publications
from zope.pipeline.engine.factories import as_request_factory
from zope.pipeline.engine.ordering import where
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.engine.registry import RequestFactoryRegistration
from zope.pipeline.engine.registry import StageRegistration
from zope.pipeline.security.models import PROXIED
from zope.pipeline.security.models import SECURITY_MODELS

__all__ = (
    'IStageDirective',
    'IRequestFactoryDirective',
    'ISecurityDirective',
    'stage',
    'requestFactory',
    'security',
)

NAMESPACE = 'http://namespaces.zope.org/pipeline'

#: Action orders: the publications of ``<publisher>`` directives become
#: request types after every other action ran; ``pipeline:security``
#: decides after them.
PUBLICATIONS_ORDER = 1000
SECURITY_ORDER = PUBLICATIONS_ORDER + 1
#: What an error of that step is said to come from (its message names the
#: <publisher> directive).
PUBLICATIONS_INFO = ('the end of the configuration, where <publisher> '
                     'registrations become request types '
                     '(zope.pipeline.engine.publications)')


def check_security_model(model, info=None, what='security'):
    """Return ``model`` if it is one of ``SECURITY_MODELS``; otherwise a
    ConfigurationError naming where it was given and the accepted ones."""
    if model in SECURITY_MODELS:
        return model
    raise ConfigurationError(
        '%s="%s" at %s: expected one of: %s.'
        % (what, model, where(info), ', '.join(SECURITY_MODELS)))


class IStageDirective(Interface):
    """Register a stage of the pipeline."""

    name = TextLine(
        title='Name',
        description='The stage name; constraints and ini settings use it.')

    for_ = GlobalInterface(
        title='Request interface',
        description='The stage is part of the chain of every request type '
                    'providing this interface.  Leave it out for an outer '
                    'stage: one that works on the environ only, before the '
                    'request exists, the same for every request type.',
        required=False)

    factory = GlobalObject(
        title='Factory',
        description='Called as ``factory(next_app, build=build, '
                    '**settings)``; returns a WSGI application.')

    before = Tokens(
        title='Before', value_type=TextLine(), required=False,
        description='Names of stages this stage runs before (outside of).')

    after = Tokens(
        title='After', value_type=TextLine(), required=False,
        description='Names of stages this stage runs after (inside of).')


class IRequestFactoryDirective(Interface):
    """Register a request factory: which requests a request type handles."""

    name = TextLine(title='Name', description='The request type, e.g. browser')

    factory = GlobalObject(
        title='Factory',
        description='An IRequestFactory, or a zope.publisher request class.')

    methods = Tokens(title='Methods', value_type=TextLine(), required=False,
                     description="HTTP methods, or '*' (the default).")

    mimetypes = Tokens(title='Mimetypes', value_type=TextLine(),
                       required=False,
                       description="Body content types, or '*' (default).")

    priority = Int(title='Priority', required=False, default=0,
                   description='Higher wins within one method and mimetype.')

    security = TextLine(
        title='Security model', required=False, default=PROXIED,
        description='How its chain checks security: %s '
                    '(zope.pipeline.security.models).'
                    % ' or '.join(SECURITY_MODELS))


class ISecurityDirective(Interface):
    """Choose the security model of request types."""

    model = TextLine(
        title='Security model',
        description='%s (zope.pipeline.security.models).'
                    % ' or '.join(SECURITY_MODELS))

    request_types = Tokens(
        title='Request types', value_type=TextLine(), required=False,
        description='The names of the request types it applies to; every '
                    'request type when left out.')


def _root(context):
    while getattr(context, 'context', None) is not None:
        context = context.context
    return context


def registry_of(context):
    """Return the PipelineRegistry of a configuration machine.

    Each configuration run has its own, so loading ZCML twice in a process
    never mixes two configurations.
    """
    root = _root(context)
    registry = getattr(root, 'pipeline_registry', None)
    if registry is None:
        registry = root.pipeline_registry = PipelineRegistry()
    return registry


def stage(_context, name, factory, for_=None, before=(), after=()):
    registry = registry_of(_context)
    registration = StageRegistration(name, for_, factory, before, after,
                                     _context.info,
                                     registry.order_of(name, for_))
    _context.action(
        discriminator=('zope.pipeline.stage', name, for_),
        callable=registry.add_stage,
        args=(registration,))


def check_lookup_keys(name, methods, mimetypes, info):
    """Fail for a registration the lookup could never reach.

    Lookup tries (method, mimetype), (method, '*') and ('*', '*'): a
    mimetype with the method '*' would be a key it never asks for.
    """
    specific = [mimetype for mimetype in mimetypes if mimetype != '*']
    if '*' in methods and specific:
        raise ConfigurationError(
            "Request factory '%s', registered at %s, has methods='*' and "
            "mimetypes='%s': lookup goes (method, mimetype), (method, *), "
            "(*, *), so a specific mimetype needs named methods."
            % (name, where(info), ' '.join(specific)))


def requestFactory(_context, name, factory, methods=('*',), mimetypes=('*',),
                   priority=0, security=PROXIED):
    check_lookup_keys(name, methods or ('*',), mimetypes or ('*',),
                      _context.info)
    registration = RequestFactoryRegistration(
        name, as_request_factory(factory), methods or ('*',),
        mimetypes or ('*',), priority, _context.info,
        check_security_model(security, _context.info))
    _context.action(
        discriminator=('zope.pipeline.requestFactory', name),
        callable=registry_of(_context).add_request_factory,
        args=(registration,))
    map_publications_at_end(_context)


def map_publications_at_end(_context):
    """Once per configuration: when every other action has run, its
    ``<publisher>`` registrations become request types
    (zope.pipeline.engine.publications)."""
    root = _root(_context)
    if getattr(root, 'pipeline_publications_mapped', False):
        return
    root.pipeline_publications_mapped = True
    _context.action(
        discriminator=None, callable=publications.apply_configuration,
        args=(registry_of(_context), root), order=PUBLICATIONS_ORDER,
        info=PUBLICATIONS_INFO)


def choose_security(registry, model, names, info):
    """Give the request types ``names`` (every one when empty) the
    security ``model``; an unknown name is a ConfigurationError."""
    known = {registration.name for registration in registry.request_factories}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ConfigurationError(
            'pipeline:security at %s names request types that are not '
            'registered: %s (registered: %s).'
            % (where(info), ', '.join(unknown), ', '.join(sorted(known))))
    for registration in registry.request_factories:
        if not names or registration.name in names:
            registration.security = model
            registration.security_chosen_at = info


def security(_context, model, request_types=()):
    check_security_model(model, _context.info, 'model')
    names = tuple(request_types or ())
    _context.action(
        discriminator=('zope.pipeline.security',) + (names or ('*',)),
        callable=choose_security,
        args=(registry_of(_context), model, names, _context.info),
        order=SECURITY_ORDER)
