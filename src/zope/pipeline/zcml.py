"""The ``pipeline`` ZCML namespace: ``stage`` and ``requestFactory``."""

from zope.configuration.exceptions import ConfigurationError
from zope.configuration.fields import GlobalInterface
from zope.configuration.fields import GlobalObject
from zope.configuration.fields import Tokens
from zope.interface import Interface
from zope.schema import Int
from zope.schema import TextLine

from zope.pipeline.factories import as_request_factory
from zope.pipeline.ordering import where
from zope.pipeline.registry import PipelineRegistry
from zope.pipeline.registry import RequestFactoryRegistration
from zope.pipeline.registry import StageRegistration

NAMESPACE = 'http://namespaces.zope.org/pipeline'


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
        description='Called as ``factory(next_app, **settings)``; returns a '
                    'WSGI application.')

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
                   priority=0):
    check_lookup_keys(name, methods or ('*',), mimetypes or ('*',),
                      _context.info)
    registration = RequestFactoryRegistration(
        name, as_request_factory(factory), methods or ('*',),
        mimetypes or ('*',), priority, _context.info)
    _context.action(
        discriminator=('zope.pipeline.requestFactory', name),
        callable=registry_of(_context).add_request_factory,
        args=(registration,))
