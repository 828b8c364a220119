"""The two security models a request type's chain is compiled with:
``proxied`` and ``view-checked``.

**proxied** (classic Zope 3, the default): traversal wraps every object it
reaches in a security proxy, so every attribute a view, a template or a
traverser touches is checked against the checker of its class.

**view-checked** (Grok's publications, Pyramid): the code of a *trusted*
view runs on the objects themselves; every other view runs exactly as in
the proxied chain.  Precisely:

- A view is trusted when it provides one of ``TRUSTED_VIEW_INTERFACES``
  (zope.pipeline's ``ITrustedView``; grokcore.view's
  ``IGrokSecurityView`` and ``IGrokView``, grokcore.rest's ``IREST``:
  Grok's views, which Grok's publication runs on bare objects).  It is
  made on the unproxied context, its default (its page method) is
  published unproxied, and the call stage checks the permission its
  checker requires for calling it once (``check_view_permission``).
- Any other view (``browser:page``, ``<view>``, an ``<adapter>`` looked
  up by name for the object and the request) is made on the
  security-proxied context, is itself proxied, and so is everything
  reached through it (its default method, a ``browser:page``'s
  ``attribute``, what it traverses to): it is called through its
  checker and every attribute it or its template reads is checked, as
  in the proxied chain.  The request is the same in both models.
- Traversal between views hands back the content objects themselves:
  traversers (``IPublishTraverse`` adapters) and namespaces run on bare
  objects.  A view that a traverser made itself on a bare object and
  that is not trusted is made again, by its name, on the proxied
  context; one that cannot be made again is refused (``Forbidden``).

Both models refuse an anonymous request to a protected view with 401 and
an authenticated one without the permission with 403; for an untrusted
view they give the same answer.

The model is chosen per request type (``pipeline:requestFactory``'s
``security``, ``pipeline:security``, or the publication a ``<publisher>``
registration names: ``zope.pipeline.engine.publications``) by its name; the
build context of its chain hands the stages the model itself
(``IBuildContext.security_model``: ``PROXIED_MODEL`` or
``VIEW_CHECKED_MODEL``), which they ask what to do when they are built.
"""

import sys
from types import MethodType

from zope.component import getSiteManager
from zope.component import queryMultiAdapter
from zope.interface import Interface
from zope.interface import implementedBy
from zope.interface import providedBy
from zope.publisher.interfaces.browser import IBrowserView
from zope.security.checker import ProxyFactory
from zope.security.checker import selectChecker
from zope.security.interfaces import Forbidden
from zope.security.proxy import Proxy
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import components

__all__ = (
    'PROXIED',
    'VIEW_CHECKED',
    'TRUSTED_VIEW_INTERFACES',
    'security_model',
)

#: The names of the models, as ZCML gives them.
PROXIED = 'proxied'
VIEW_CHECKED = 'view-checked'
SECURITY_MODELS = (PROXIED, VIEW_CHECKED)

#: (module, name) of the interfaces whose views the view-checked model
#: trusts: made on bare objects, published bare.  An interface whose
#: module is not loaded is provided by no view, so it is skipped
#: (zope.pipeline imports no framework).
TRUSTED_VIEW_INTERFACES = (
    ('zope.pipeline.interfaces', 'ITrustedView'),
    ('grokcore.view.interfaces', 'IGrokSecurityView'),
    ('grokcore.view.interfaces', 'IGrokView'),
    ('grokcore.rest.interfaces', 'IREST'),
)
#: Of those, the ones whose browser views traversal hands back without
#: their proxy (grokcore.view's rule); another trusted browser view (a
#: ``grok.View``) stays proxied until its default is published, as
#: Grok's ``ZopePublicationSansProxy`` leaves it.
BARE_VIEW_INTERFACES = TRUSTED_VIEW_INTERFACES[:2]
#: How many factories a view factory may wrap (``protectedFactory``,
#: trusted adapter factories: their ``factory``) to be looked into.
MAX_FACTORY_WRAPPERS = 8


def trusted_view_interfaces(names=None):
    """The interfaces of ``names`` ((module, name) pairs, by default
    ``TRUSTED_VIEW_INTERFACES``) that are loaded."""
    found = []
    for module_name, name in (TRUSTED_VIEW_INTERFACES if names is None
                              else names):
        module = sys.modules.get(module_name)
        interface = getattr(module, name, None)
        if interface is not None:
            found.append(interface)
    return tuple(found)


def is_trusted(view, trusted):
    """Whether ``view`` (unproxied) provides one of ``trusted``."""
    for interface in trusted:
        if interface.providedBy(view):
            return True
    return False


def trusted_factory(factory, trusted):
    """Whether the views ``factory`` makes are trusted: it, or the factory
    it wraps (``protectedFactory`` and zope.component's trusted adapter
    factories keep theirs as ``factory``), implements one of
    ``trusted``."""
    for _ in range(MAX_FACTORY_WRAPPERS):
        try:
            spec = implementedBy(factory)
        except TypeError:  # not a class nor a function
            spec = None
        if spec is not None:
            for interface in trusted:
                if spec.isOrExtends(interface):
                    return True
        factory = getattr(factory, 'factory', None)
        if factory is None:
            return False
    return False


def make_view(factory, ob, request, trusted):
    """The view ``factory`` makes for the unproxied ``ob`` in a
    view-checked chain: made on ``ob`` itself when trusted; otherwise on
    the security-proxied ``ob``, and proxied, as the proxied chain makes
    it.  A factory that does not say what it makes (a function) is asked
    with the proxied ``ob``; a trusted view it made is made again on
    ``ob``.  None when the factory makes none."""
    if trusted_factory(factory, trusted):
        return factory(ob, request)
    view = factory(ProxyFactory(ob), request)
    if view is None:
        return None
    if is_trusted(removeSecurityProxy(view), trusted):
        return factory(ob, request)
    return ProxyFactory(view)


def query_view(ob, request, name, trusted):
    """``queryMultiAdapter((ob, request), name=name)`` in a view-checked
    chain for the unproxied ``ob`` (``make_view``): its factory looked up
    first in the current site's registry, or, for a registry that is not
    zope.interface's own, asked with the proxied ``ob``."""
    adapters = components.lookup_registry(getSiteManager())
    if adapters is None:
        def factory(context, request):
            return queryMultiAdapter((context, request), Interface, name)
    else:
        factory = adapters.lookup(
            (providedBy(ob), components.interfaces_of(request)), Interface,
            name)
        if factory is None:
            return None
    return make_view(factory, ob, request, trusted)


def in_untrusted_view(ob, trusted):
    """Whether ``ob``, an object a view-checked traversal reached, is
    security proxied and not a trusted view: an untrusted view, or an
    object reached through one (everything from there on is proxied)."""
    return type(ob) is Proxy and not is_trusted(removeSecurityProxy(ob),
                                                trusted)


def untrusted_view_of(request, bare, trusted):
    """Whether ``bare`` (unproxied) is a view of ``request`` (it has the
    request and a context) that none of ``trusted`` marks."""
    if removeSecurityProxy(getattr(bare, 'request', None)) is not request \
            or getattr(bare, 'context', None) is None:
        return False
    return not is_trusted(bare, trusted)


def on_proxied_context(view):
    """Whether the context of ``view`` (unproxied) is security proxied, or
    of a type that is never proxied."""
    context = view.context
    return type(context) is Proxy or ProxyFactory(context) is context


def remake_untrusted_view(found, request, names, trusted):
    """``found``, a view that is not trusted made on an unproxied context
    (by a traverser of the application's, for instance), made again on
    its proxied context: the view of the first of ``names`` (the name it was
    traversed by, then its ``__name__``) whose class is its own; a view
    that cannot be made again is refused (``Forbidden``)."""
    bare = removeSecurityProxy(found)
    for name in names:
        if isinstance(name, str):
            view = query_view(bare.context, request, name, trusted)
            if view is not None and \
                    type(removeSecurityProxy(view)) is type(bare):
                return view
    raise Forbidden(
        'A view that is not trusted (%s.%s) was made on an object without '
        'its security proxy and cannot be made again on the proxied one; '
        'register it for the view name it is traversed by, or make it an '
        'ITrustedView.' % (type(bare).__module__, type(bare).__qualname__))


def bare_unless_untrusted_view(found, bare_views):
    """What view-checked traversal hands back for ``found`` (not an
    untrusted view): the object itself, unless it is a browser view none
    of ``bare_views`` marks (then security proxied, as
    ``ZopePublicationSansProxy.traverseName``)."""
    bare = removeSecurityProxy(found)
    if IBrowserView.providedBy(bare):
        for interface in bare_views:
            if interface.providedBy(bare):
                return bare
        return ProxyFactory(found)
    return bare


def check_view_permission(ob):
    """Check that the current interaction may call ``ob``: the permission
    its checker requires for ``__call__`` (``Unauthorized`` for an
    anonymous principal, ``Forbidden`` otherwise).  An object without a
    checker (a proxied view is checked by its proxy) passes, as in
    ``ZopePublicationSansProxy.callObject``.

    A bound method (a ``browser:page`` view's default is its page
    method) is checked as the attribute of its object it is, where that
    object has a checker: Grok's publication checked the method itself,
    which every principal may call.
    """
    owner = getattr(ob, '__self__', None)
    if isinstance(ob, MethodType) and selectChecker(owner) is not None:
        selectChecker(owner).check(owner, ob.__name__)
        return
    checker = selectChecker(ob)
    if checker is not None:
        checker.check(ob, '__call__')


class ProxiedModel:
    """The proxied model: traversal proxies every object it reaches, so
    the proxies check every access and the call stage checks nothing
    more."""

    name = PROXIED
    #: Whether the call stage checks the permission of the view it
    #: publishes (``check_view_permission``) when it is not proxied.
    checks_view_when_called = False
    #: Whether errors after traversal are located at the published
    #: object (Grok's rule) rather than at the object it is bound to.
    locates_errors_at_published = False

    def trusted_views(self):
        """The interfaces of the views run on bare objects: none."""
        return ()

    def bare_views(self):
        """The interfaces of the views traversal hands back bare: none."""
        return ()

    def trusted_as(self, view):
        """None: no view is trusted (``VIEW_CHECKED_MODEL.trusted_as``)."""
        return None

    def describe(self):
        """The model as ``show-pipeline`` prints it."""
        return {'security': self.name, 'trusted_views': []}

    def __repr__(self):
        return '<security model %s>' % self.name


class ViewCheckedModel(ProxiedModel):
    """The view-checked model (module docstring): trusted views run on
    bare objects, their permission checked once when called; every other
    view stays proxied."""

    name = VIEW_CHECKED
    checks_view_when_called = True
    locates_errors_at_published = True

    def trusted_views(self):
        """The interfaces of the views run on bare objects (those of
        ``TRUSTED_VIEW_INTERFACES`` that are loaded)."""
        return trusted_view_interfaces()

    def bare_views(self):
        """The interfaces of the views traversal hands back bare (those
        of ``BARE_VIEW_INTERFACES`` that are loaded)."""
        return trusted_view_interfaces(BARE_VIEW_INTERFACES)

    def trusted_as(self, view):
        """The dotted name of the trusted-view interface ``view``
        (unproxied) provides, or '' for a view that is not trusted."""
        for interface in self.trusted_views():
            if interface.providedBy(view):
                return interface.__identifier__
        return ''

    def describe(self):
        return {'security': self.name,
                'trusted_views': ['%s.%s' % names
                                  for names in TRUSTED_VIEW_INTERFACES]}


PROXIED_MODEL = ProxiedModel()
VIEW_CHECKED_MODEL = ViewCheckedModel()
#: The models by the name ZCML gives them.
MODELS = {model.name: model for model in (PROXIED_MODEL, VIEW_CHECKED_MODEL)}


def security_model(name):
    """The model named ``name`` (one of ``SECURITY_MODELS``)."""
    return MODELS[name]
