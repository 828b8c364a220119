"""Every extension point of zope.pipeline, with the contract it promises."""

from zope.interface import Attribute
from zope.interface import Interface
from zope.interface.interfaces import IObjectEvent

# The environ keys are defined in zope.pipeline.environ; these two are
# also importable from here, where they used to be.
from zope.pipeline.environ import REQUEST_KEY  # noqa: F401 E402 - re-exported
from zope.pipeline.environ import RESPONSE_KEY  # noqa: F401 E402 - re-exported

__all__ = (
    'REQUEST_KEY',
    'RESPONSE_KEY',
    'IStageFactory',
    'IBuildContext',
    'IStageRegistration',
    'IRequestFactory',
    'IRequestFactoryRegistration',
    'IPipelineRegistry',
    'IPublisher',
    'ITraversalHook',
    'ITrustedView',
    'IRootOpened',
    'IBeforeRetry',
    'IViewName',
)


class IStageFactory(Interface):
    """Makes one stage of a pipeline.

    A stage is an ordinary WSGI application that does one thing and calls the
    next stage.  It is built once, when the pipeline is compiled, never per
    request.
    """

    settings_schema = Attribute(
        "Optional: an interface whose zope.schema fields are the settings the "
        "stage accepts.  A deployer sets them in the paste.deploy section as "
        "``<stage name>.<field name> = value``; the engine converts each "
        "value with the field's ``fromUnicode`` and validates it.")

    contract = Attribute(
        "Optional: the stage contract, declared once as a "
        "``zope.pipeline.engine.contract.Contract``: the environ keys "
        "(constants of zope.pipeline.environ) the stage ``reads`` (when a "
        "chain compiles, each must be written by an earlier stage or be one "
        "the server sets, ``environ.from_server``; otherwise startup fails "
        "naming the request type, the stage, the key and the stages that "
        "write it), ``reads_if_present`` (only when they are there: shown, "
        "not checked), ``writes`` (the server's keys it rewrites included), "
        "``results`` (of those, the keys an outer stage reads on the way "
        "back: the retry stage copies them from each attempt's environ), "
        "and ``publishes`` (True for a stage that calls what traversal "
        "found, as ``call`` does; every inner chain needs one: a chain "
        "without one fails at startup instead of answering 404).  A "
        "factory without a contract is not checked: it may write anything "
        "and may publish.")

    calls = Attribute(
        "Optional, for a ``call`` stage: how it publishes, "
        "``zope.pipeline.engine.publications.CALLS_OBJECT`` (the published "
        "object is called, as ``CallStage`` does) or ``CALLS_METHOD_VIEWS`` "
        "(the view named after the request method, as ``MethodCallStage`` "
        "does).  The request types that ``<publisher>`` registrations make "
        "are checked against it at startup; a factory that says nothing is "
        "trusted to publish as its publication did.")

    def __call__(next_app, build, **settings):
        """Return the WSGI application of this stage.

        The engine calls every factory as ``factory(next_app, build=build,
        **settings)``: ``next_app`` is the rest of the pipeline; ``build``
        the IBuildContext of the chain being built (a factory that needs
        nothing of it still takes it: ``build=None``; one that does not
        take it fails at startup with a ConfigurationError saying so);
        ``settings`` holds one value for every field of
        ``settings_schema`` (the deployer's or the field's default; no
        field may be named ``build``).

        The application returned may declare ``traversal_hooks``
        (ITraversalHook callables) and ``output_filters``
        (``filter(response, body) -> body``): the publisher assembles
        them, in chain order, into the build context when the chain is
        compiled, for the traverse stage and for response sending.  (A
        factory that returns ``next_app`` itself, a stage switched off,
        declares nothing.)

        An application that is there only for what it declares, and would
        call ``next_app(environ, start_response)`` for every request of
        its chain and do nothing else, may say so with ``passes_through =
        True``: the publisher then leaves it out of the calls (the stage
        before it calls the one after it) and still assembles its
        declarations and lists it in the chain.  A stage with nothing to
        do for some requests only (a safe method for csrf, a GET without
        a query string for process_inputs) returns ``next_app(environ,
        start_response)`` first thing for those: that test costs what a
        test made by the publisher would, so it stays the stage's own.
        """


class IBuildContext(Interface):
    """What a stage factory may use while its chain is built: everything a
    stage would otherwise look up globally, or per request."""

    registry = Attribute("The IPipelineRegistry of this configuration.")
    settings = Attribute(
        "The raw settings of every stage: {stage name: {key: text}}.")
    registrations = Attribute(
        "The IStageRegistrations of the chain being built, outermost "
        "first.")
    request_type = Attribute(
        "The request type's name, or None for the outer chain.")
    spec = Attribute(
        "The interfaces every request of this chain provides (None for the "
        "outer chain).")
    traversal_hooks = Attribute(
        "A list, filled when the whole chain is built: the traversal hooks "
        "its stages declare, in chain order.  Keep the list, not a copy.")
    output_filters = Attribute(
        "A list, filled when the whole chain is built: the output filters "
        "its stages declare, in chain order.  Keep the list, not a copy.")
    shared = Attribute(
        "A dict shared by the build contexts of every chain of one "
        "publisher, for state one stage keeps across request types (e.g. "
        "authenticate's failed logins), keyed by the stage's name.")

    security = Attribute(
        "The name of the security model of the chain: 'proxied' or "
        "'view-checked' (the request type's; 'proxied' for the outer "
        "chain).")
    security_model = Attribute(
        "The security model of the chain as an object "
        "(zope.pipeline.security.models: ``PROXIED_MODEL`` or "
        "``VIEW_CHECKED_MODEL``), which the traverse and call stages ask "
        "how to traverse (``publication.publication_factory``) and call "
        "(``checks_view_when_called``).")
    request_type_registration = Attribute(
        "The IRequestFactoryRegistration of the request type, or None (the "
        "outer chain; interfaces no request type announced).")

    def provides(interface):
        """Whether every request of this chain provides ``interface``."""


class IStageRegistration(Interface):
    """One ``<pipeline:stage>`` registration."""

    name = Attribute("The stage name, unique per request type.")
    for_ = Attribute(
        "The request interface the stage is registered for, or None for an "
        "outer stage (one that runs before the request exists, the same for "
        "every request type).")
    factory = Attribute("The IStageFactory.")
    before = Attribute("Names of stages this stage must run before.")
    after = Attribute("Names of stages this stage must run after.")
    info = Attribute("Where it was registered (zope.configuration info).")
    order = Attribute("Registration order: ties in the sort go by it.")


class IRequestFactory(Interface):
    """Makes the request (and so its response) for a WSGI environ."""

    request_class = Attribute(
        "The class of the requests made (a zope.publisher request class).")

    def canHandle(environ):
        """Return whether this factory will make a request for ``environ``.

        A factory that declines lets the next one (by priority, then by a
        less specific method/mimetype key) try.
        """

    def __call__(input_stream, environ):
        """Return a new request reading its body from ``input_stream``."""


class IRequestFactoryRegistration(Interface):
    """One ``<pipeline:requestFactory>`` registration."""

    name = Attribute("The request type's name, e.g. 'browser'.")
    factory = Attribute("The IRequestFactory.")
    methods = Attribute("HTTP methods, or ('*',).")
    mimetypes = Attribute("Content types (no parameters), or ('*',).")
    priority = Attribute("Higher wins within one (method, mimetype) key.")
    info = Attribute("Where it was registered.")
    security = Attribute(
        "The security model its chain is compiled with: 'proxied' or "
        "'view-checked' (zope.pipeline.security.models).")
    publication = Attribute(
        "The dotted name of the publication class of the ``<publisher>`` "
        "registration that made this request type, or None for a "
        "``pipeline:requestFactory`` one (zope.pipeline.engine.publications).")
    after_traversal_event = Attribute(
        "None, or an event class notified as ``cls(published, request)`` "
        "when traversal has ended (what the publication's "
        "``afterTraversal`` sent).")
    method_not_allowed = Attribute(
        "None, or the exception class, called as ``cls(ob, request)``, that "
        "a view-checked plain HTTP chain raises when the object has no view "
        "for the method (what the publication's ``callObject`` raised).")


class IPipelineRegistry(Interface):
    """What the ZCML directives of one configuration registered."""

    def add_stage(registration):
        """Record an IStageRegistration."""

    def add_request_factory(registration):
        """Record an IRequestFactoryRegistration."""

    def choose_request_factory(environ):
        """Return the IRequestFactoryRegistration that makes the request.

        Lookup goes (method, mimetype), then (method, '*'), then ('*', '*'),
        each by descending priority; a factory may decline.
        """


class IPublisher(Interface):
    """The root WSGI application: the compiled outer chain and the switch."""

    def __call__(environ, start_response):
        """Serve one request."""

    def chain_for(spec):
        """Return the compiled inner chain for a request interface spec."""

    def describe():
        """Return the introspection data (see
        zope.pipeline.engine.introspect)."""


class ITraversalHook(Interface):
    """A callable run once for each object traversal reaches."""

    def __call__(request, ob):
        """Called with the request and the (possibly proxied) object."""


class ITrustedView(Interface):
    """A view whose code is trusted by the view-checked security model.

    Under a view-checked chain (zope.pipeline.security.models) it is made
    on the unproxied context, traversal hands it back without a security
    proxy and the call stage checks its permission (the one its checker
    requires for ``__call__``) once.  A view that provides neither it nor
    another of ``securitymodels.TRUSTED_VIEW_INTERFACES`` is made on the
    security-proxied context, stays proxied and is checked as in a
    proxied chain.
    """


class IRootOpened(IObjectEvent):
    """The open_root stage has opened the database root for a request."""

    request = Attribute("The request")


class IBeforeRetry(Interface):
    """An attempt failed with a transient error and will be retried."""

    environ = Attribute("The environ of the failed attempt.")
    error = Attribute("The exception.")
    attempt = Attribute("The number of the failed attempt (1 for the first).")


class IViewName(Interface):
    """Marker for what the call stage records about the published view."""
