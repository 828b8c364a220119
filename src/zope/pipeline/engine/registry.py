"""What one configuration registered: stages and request factories."""

from zope.configuration.exceptions import ConfigurationError
from zope.interface import implementer

from zope.pipeline.engine.factories import request_interface_of
from zope.pipeline.engine.ordering import PartError
from zope.pipeline.engine.ordering import where
from zope.pipeline.interfaces import IPipelineRegistry
from zope.pipeline.interfaces import IRequestFactoryRegistration
from zope.pipeline.interfaces import IStageRegistration
from zope.pipeline.security.models import PROXIED

#: Where a registration read from an already loaded configuration was made.
UNKNOWN_PLACE = ("(a configuration loaded before zope.pipeline's; its file "
                 "and line are not known)")


@implementer(IStageRegistration)
class StageRegistration:

    def __init__(self, name, for_, factory, before=(), after=(), info=None,
                 order=None):
        self.name = name
        self.for_ = for_
        self.factory = factory
        self.before = tuple(before)
        self.after = tuple(after)
        self.info = info
        self.order = order

    @property
    def outer(self):
        return self.for_ is None

    def __repr__(self):
        return '<StageRegistration %r for %s at %s>' % (
            self.name, 'outer' if self.outer else self.for_.__identifier__,
            where(self.info))


@implementer(IRequestFactoryRegistration)
class RequestFactoryRegistration:

    def __init__(self, name, factory, methods=('*',), mimetypes=('*',),
                 priority=0, info=None, security=PROXIED, publication=None,
                 after_traversal_event=None, method_not_allowed=None,
                 keys=None):
        self.name = name
        self.factory = factory
        self.methods = tuple(method.upper() for method in methods)
        self.mimetypes = tuple(mimetype.lower() for mimetype in mimetypes)
        self.priority = priority
        self.info = info
        self.security = security
        self.publication = publication
        self.after_traversal_event = after_traversal_event
        self.method_not_allowed = method_not_allowed
        #: The info of the pipeline:security directive that chose the
        #: security model, if one did.
        self.security_chosen_at = None
        # the (method, mimetype) keys, when they are not every method with
        # every mimetype (a <publisher> registration partly replaced)
        self._keys = None if keys is None else tuple(
            (method.upper(), mimetype.lower()) for method, mimetype in keys)

    def keys(self):
        """The (method, mimetype) lookup keys this request type answers."""
        if self._keys is not None:
            return self._keys
        return tuple((method, mimetype) for method in self.methods
                     for mimetype in self.mimetypes)

    def __repr__(self):
        return '<RequestFactoryRegistration %r at %s>' % (self.name,
                                                          where(self.info))


def origin_of(registration):
    """'pipeline:requestFactory at file:line', or the publication and
    where its ``<publisher>`` registration was made."""
    place = where(registration.info) if registration.info is not None \
        else UNKNOWN_PLACE
    if registration.publication:
        return 'the publication %s, <publisher> at %s' % (
            registration.publication, place)
    return 'pipeline:requestFactory at %s' % place


def mimetype_of(environ):
    """Return the body's media type, lower-cased, without parameters."""
    content_type = environ.get('CONTENT_TYPE') or ''
    return content_type.split(';', 1)[0].strip().lower()


@implementer(IPipelineRegistry)
class PipelineRegistry:
    """Stage and request-factory registrations, in registration order.

    A stage's registration order (which breaks ties in the sort) is the
    place where its name and request interface were first registered: an
    overriding registration takes the place of the one it replaces.
    """

    def __init__(self):
        self.stages = []
        self.request_factories = []
        self._table = None
        self._orders = {}

    # -- registration (called by ZCML handlers and actions)

    def order_of(self, name, for_):
        """Return the registration order of the stage ``name`` for ``for_``,
        claiming the next one the first time it is asked."""
        return self._orders.setdefault((name, for_), len(self._orders))

    def add_stage(self, registration):
        if registration.order is None:
            registration.order = self.order_of(registration.name,
                                               registration.for_)
        self.stages.append(registration)

    def add_request_factory(self, registration):
        self.request_factories.append(registration)
        self._table = None

    # -- stages

    def stage_names(self):
        """Return every registered stage name, outer or inner."""
        return {registration.name for registration in self.stages}

    def outer_stages(self):
        return [registration for registration in self.stages
                if registration.outer]

    def inner_stages(self, spec):
        """Return the inner registrations that apply to ``spec``.

        Per name, the registration for the most specific interface ``spec``
        provides wins (as in adapter lookup); registration order is kept.
        """
        resolution = {iface: index for index, iface in
                      enumerate(spec.__iro__)}
        best = {}
        for registration in self.stages:
            if registration.outer:
                continue
            rank = resolution.get(registration.for_)
            if rank is None:
                continue
            current = best.get(registration.name)
            if current is None or rank <= current[0]:
                best[registration.name] = (rank, registration)
        chosen = {registration for _, registration in best.values()}
        return [registration for registration in self.stages
                if registration in chosen]

    def check_parts(self):
        """The outer/inner rule, checked once for every registration: a
        stage name is either outer or inner, never both, and every outer
        stage runs before every inner one, so no inner stage says
        ``before`` an outer one, nor an outer stage ``after`` an inner
        one (``PartError``)."""
        outer = {}
        for registration in self.stages:
            if registration.outer:
                outer.setdefault(registration.name, registration)
        for registration in self.stages:
            first = outer.get(registration.name)
            if first is not None and not registration.outer:
                raise ConfigurationError(
                    "Stage '%s' is registered as an outer stage (no 'for') at "
                    "%s and for %s at %s: a stage is either outer or inner."
                    % (registration.name, where(first.info),
                       registration.for_.__identifier__,
                       where(registration.info)))
        for registration in self.stages:
            relation = 'after' if registration.outer else 'before'
            for other in getattr(registration, relation):
                others = [item for item in self.stages
                          if item.name == other
                          and item.outer != registration.outer]
                if others:
                    raise PartError(registration, relation, other, others)

    # -- request factories

    def _build_table(self):
        table = {}
        for registration in self.request_factories:
            for key in registration.keys():
                table.setdefault(key, []).append(registration)
        for key, registrations in table.items():
            registrations.sort(key=lambda item: -item.priority)
            for first, second in zip(registrations, registrations[1:]):
                if first.priority == second.priority:
                    raise ConfigurationError(
                        "Request factories '%s' (registered at %s) and '%s' "
                        "(registered at %s) both handle method %s and "
                        "mimetype %s with priority %s: give them different "
                        "priorities." % (
                            first.name, where(first.info), second.name,
                            where(second.info), key[0], key[1],
                            first.priority))
        return {key: tuple(value) for key, value in table.items()}

    def replace_request_factories(self, registrations):
        """Make ``registrations`` the request types, in this order."""
        self.request_factories = list(registrations)
        self._table = None

    def check_security_models(self):
        """Request types whose requests provide the same interface share
        one chain: fail when they ask for different security models."""
        by_interface = {}
        for registration in self.request_factories:
            interface = request_interface_of(registration.factory)
            first = by_interface.setdefault(interface, registration)
            if first.security != registration.security:
                raise ConfigurationError(
                    "Request types '%s' (%s) and '%s' (%s) make requests of "
                    "one kind (%s), so they share one chain, but ask for the "
                    "security models %s and %s: give one of them a request "
                    "class of its own." % (
                        first.name, origin_of(first), registration.name,
                        origin_of(registration), getattr(
                            interface, '__identifier__', interface),
                        first.security, registration.security))

    def request_type_named(self, name):
        """The request type registered first under ``name``, or None."""
        for registration in self.request_factories:
            if registration.name == name:
                return registration
        return None

    def factory_table(self):
        """Return {(method, mimetype): registrations by priority}."""
        if self._table is None:
            self._table = self._build_table()
        return self._table

    def choose_request_factory(self, environ):
        table = self.factory_table()
        method = environ.get('REQUEST_METHOD', 'GET').upper()
        mimetype = mimetype_of(environ)
        for key in ((method, mimetype), (method, '*'), ('*', '*')):
            for registration in table.get(key, ()):
                if registration.factory.canHandle(environ):
                    return registration
        return None

    def request_type_of(self, spec):
        """Return the name of the request type a spec belongs to.

        The registration whose request interface comes first in the spec's
        resolution order wins (an XML-RPC request is also an HTTP request).
        """
        resolution = {iface: index for index, iface in
                      enumerate(spec.__iro__)}
        best = None
        for registration in self.request_factories:
            rank = resolution.get(request_interface_of(registration.factory))
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, registration.name)
        return best[1] if best else None
