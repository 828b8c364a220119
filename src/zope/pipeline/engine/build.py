"""The build context: what a stage factory may use while its chain is
built, instead of looking things up globally or per request."""

from zope.interface import implementer

from zope.pipeline.interfaces import IBuildContext
from zope.pipeline.security.models import PROXIED
from zope.pipeline.security.models import security_model


@implementer(IBuildContext)
class BuildContext:
    """One per compiled chain (and one for the outer chain)."""

    def __init__(self, registry, settings, registrations, request_type=None,
                 spec=None, shared=None, request_type_registration=None):
        self.registry = registry
        #: What the stages of every chain of one publisher share.
        self.shared = {} if shared is None else shared
        self.settings = settings
        self.registrations = tuple(registrations)
        self.request_type = request_type
        self.spec = spec
        self.request_type_registration = request_type_registration
        self.traversal_hooks = []
        self.output_filters = []

    @property
    def security(self):
        """The name of the request type's security model ('proxied'
        without one)."""
        return getattr(self.request_type_registration, 'security', PROXIED)

    @property
    def security_model(self):
        """The request type's security model (securitymodels.MODELS): what
        the stages ask how to traverse and call."""
        return security_model(self.security)

    @property
    def after_traversal_event(self):
        return getattr(self.request_type_registration,
                       'after_traversal_event', None)

    @property
    def method_not_allowed(self):
        return getattr(self.request_type_registration, 'method_not_allowed',
                       None)

    def provides(self, interface):
        """Whether every request of this chain provides ``interface``
        (False for the outer chain)."""
        return self.spec is not None and self.spec.isOrExtends(interface)

    def assemble(self, apps):
        """Collect, in chain order, the traversal hooks and output filters
        that the built stages declare (``apps``: outermost first)."""
        for app in apps:
            self.traversal_hooks.extend(getattr(app, 'traversal_hooks', ()))
            self.output_filters.extend(getattr(app, 'output_filters', ()))

