"""The root WSGI application: the outer chain, the switch, compiled chains."""

import inspect
import threading
import types

from zope.component import provideUtility
from zope.configuration.exceptions import ConfigurationError
from zope.interface import implementer
from zope.interface import providedBy

from zope.pipeline.engine import introspect
from zope.pipeline.engine.build import BuildContext
from zope.pipeline.engine.contract import check_chain
from zope.pipeline.engine.contract import check_outer
from zope.pipeline.engine.factories import probe_spec
from zope.pipeline.engine.ordering import TopologicalSorter
from zope.pipeline.engine.ordering import where
from zope.pipeline.engine.settings import check_settings
from zope.pipeline.engine.settings import convert
from zope.pipeline.environ import REQUEST_KEY
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.interfaces import IPipelineRegistry
from zope.pipeline.interfaces import IPublisher

#: Compiled chains are found by spec identity for this many specs (the
#: fast path); past that, by the spec's interfaces (a tuple to hash).
MAX_SPECS = 256


def end_of_pipeline(environ, start_response):
    """What runs when every inner stage passed the request on: nothing
    published it, so there is nothing to show."""
    return plain_response(start_response, '404 Not Found', 'Not Found')


def call_link(app):
    """What the stage before ``app`` calls: ``app``'s own ``__call__``
    bound to it, when its class defines one in Python (exactly what
    calling ``app`` runs), else ``app``.

    Calling an instance goes through the type's call slot, which starts
    a new interpreter frame from C for every request; calling a bound
    method of a Python function is a call the interpreter makes inline
    (about 660 instructions less per stage and request on CPython 3.11).
    """
    # the method itself, not whether there is one (ruff's B004)
    call = getattr(type(app), '__call__', None)  # noqa: B004
    if type(call) is types.FunctionType:
        return types.MethodType(call, app)
    return app


def passes_through(app):
    """Whether a built stage says it calls the next stage for every
    request and does nothing else (``IStageFactory``): it is there for
    what it declares (output filters, traversal hooks)."""
    return getattr(app, 'passes_through', False) is True


def factory_name(factory):
    """``module.name`` of a factory, for a message."""
    return '%s.%s' % (getattr(factory, '__module__', '?'),
                      getattr(factory, '__qualname__', repr(factory)))


def takes_build(factory):
    """Whether calling ``factory`` with ``build=`` can be what failed:
    asked after a factory raised TypeError, to say what to change (True
    when its signature cannot be read)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or C callable
        return True
    return 'build' in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD
        for parameter in parameters.values())


class CompiledStage:
    """A stage as it stands in a compiled chain, for introspection."""

    __slots__ = ('registration', 'settings', 'app')

    def __init__(self, registration, settings, app):
        self.registration = registration
        self.settings = settings
        #: What the factory built (called in the chain unless it is
        #: the next stage itself or ``passes_through``).
        self.app = app

    @property
    def name(self):
        return self.registration.name

    @property
    def passes_through(self):
        return passes_through(self.app)


class Chain:
    """An ordered, built list of stages; calling it calls the first stage."""

    def __init__(self, stages, app):
        self.stages = stages
        self.app = app

    def __call__(self, environ, start_response):
        return self.app(environ, start_response)

    def names(self):
        return [stage.name for stage in self.stages]


@implementer(IPublisher)
class Publisher:
    """Serves a request through the outer chain, then the inner chain that
    was compiled for the request's interfaces.

    Everything that can be decided before the first request is: stages are
    sorted, checked and built here (or on the first request of a type that
    no request factory announced), never per request.
    """

    def __init__(self, registry, settings=None,
                 where_settings='the application section'):
        self.registry = registry
        self.raw_settings = settings or {}
        self.where_settings = where_settings
        self._lock = threading.Lock()
        self._chains = {}
        self._chains_by_iro = {}
        #: State the stages of every chain share (IBuildContext.shared).
        self.shared = {}
        registry.check_parts()
        registry.check_security_models()
        provideUtility(registry, IPipelineRegistry)
        check_settings(registry, self.raw_settings, where_settings)
        registry.factory_table()
        outer = self._sorted(registry.outer_stages(), 'outer stages')
        check_outer(outer, registry.stages)
        self.outer = self._build(outer, self.switch, BuildContext(
            registry, self.raw_settings, outer, shared=self.shared))
        self.app = self.outer.app
        self.request_types = {}
        for registration in registry.request_factories:
            spec = probe_spec(registration.factory, next(
                (m for m in registration.methods if m != '*'), 'GET'))
            self.request_types.setdefault(registration.name,
                                          (registration, spec))
            self.chain_for(spec)
        # what pages of the site describe (the sample's @@pipeline.html)
        provideUtility(self, IPublisher)

    def __call__(self, environ, start_response):
        return self.app(environ, start_response)

    def switch(self, environ, start_response):
        """Hand the request to the chain compiled for its interfaces."""
        spec = providedBy(environ[REQUEST_KEY])
        chain = self._chains.get(spec)
        if chain is None:
            chain = self.chain_for(spec)
        return chain.app(environ, start_response)

    # -- compilation

    def chain_for(self, spec):
        """Return (compiling once) the inner chain for ``spec``."""
        chain = self._chains.get(spec)
        if chain is not None:
            return chain
        with self._lock:
            # Two specs providing the same interfaces get the same chain:
            # stages are registered for interfaces, never for declarations.
            iro = spec.__iro__
            chain = self._chains_by_iro.get(iro)
            if chain is None:
                chain = self._compile(spec)
                self._chains_by_iro[iro] = chain
            if len(self._chains) < MAX_SPECS:
                self._chains[spec] = chain
        return chain

    def _compile(self, spec):
        name = self.registry.request_type_of(spec)
        request_type = name or spec
        registrations = self._sorted(
            self.registry.inner_stages(spec),
            "stages for request type '%s'" % request_type)
        check_chain("Request type '%s'" % request_type,
                    [stage.registration for stage in self.outer.stages],
                    registrations, self.registry.stages)
        return self._build(registrations, end_of_pipeline, BuildContext(
            self.registry, self.raw_settings, registrations, name, spec,
            self.shared, self.registry.request_type_named(name)))

    def _sorted(self, registrations, what):
        sorter = TopologicalSorter(what)
        by_name = {}
        for registration in registrations:
            sorter.add(registration.name, registration.before,
                       registration.after, registration.info,
                       registration.order)
            by_name[registration.name] = registration
        absent = self.registry.stage_names() - set(by_name)
        return [by_name[name] for name in sorter.sorted(absent)]

    def _build(self, registrations, innermost, build):
        """Build the stages innermost first; then assemble what they
        declare (traversal hooks, output filters) into ``build``.

        A stage switched off (its factory returned ``next_app``) declares
        nothing; a stage that passes every request through
        (``passes_through``) declares what it declares but is left out of
        the calls: the stage before it calls the one after it directly.
        Both stay in the chain's list of stages (``show-pipeline``).
        Each stage gets the next one as ``call_link`` gives it.
        """
        app = innermost
        stages = []
        declaring = []
        for registration in reversed(registrations):
            settings = convert(registration.factory, registration.name,
                               self.raw_settings.get(registration.name, {}),
                               self.where_settings)
            built = self.build_stage(registration, app, settings, build)
            stages.append(CompiledStage(registration, settings, built))
            if built is not app:  # a stage switched off is next_app
                declaring.append(built)
                if not passes_through(built):
                    app = call_link(built)
        stages.reverse()
        declaring.reverse()
        build.assemble(declaring)
        return Chain(stages, app)

    def build_stage(self, registration, next_app, settings, build):
        """Call the stage's factory as ``factory(next_app, build=build,
        **settings)`` (tests override this to wrap stages)."""
        try:
            return registration.factory(next_app, build=build, **settings)
        except TypeError as error:
            if takes_build(registration.factory):
                raise
            raise ConfigurationError(
                "Stage '%s' (registered at %s): its factory %s does not "
                "take the keyword argument 'build' (%s); every stage "
                'factory is called as factory(next_app, build=build, '
                '**settings): add a build parameter (build=None when the '
                'stage needs nothing of it).' % (
                    registration.name, where(registration.info),
                    factory_name(registration.factory), error)) from error

    # -- introspection

    def describe(self):
        return introspect.describe(self)
