"""traverse: from the root application to the object to publish.

zope.publisher's ``request.traverse`` loop walks the path (``:method``
suffixes, default views, the traversed names that URLs are made of); the
traversal policy in ``zope.pipeline.publishing.traversers`` answers each step:
``++namespace++`` segments (every zope.traversing namespace), ``@@view``,
``IPublishTraverse`` adapters, default views, a security proxy on each
object, and the traversal hooks that the chain's stages declared
(assembled when it compiled; then any a stage added for the request),
run once per object reached.  It is the request's
``request.publication`` (``zope.pipeline.publishing.publication``: what views
used
of the classic publication, ``db`` included).

Dot segments are resolved by ``zope.pipeline.http.paths``, as RFC 3986 says
(``/a/../b`` is ``/b``); a ``..`` that would leave the root, or the virtual
root of a ``++vh++`` directive, is a 400.  The ``vh`` namespace applies
only the ``++vh++`` directives virtual_host checked in the path
(``zope.pipeline.vh_directives``); a namespace that cannot apply its name
(``ValueError``) is a 400 too.  A page reached through a
``:method`` form field gets its URL as the response's base, as
BrowserRequest means to do (it looks for the suffix after traversing it
has emptied the list).

The chain's security model (``zope.pipeline.security.models``), fixed when
the chain is built, decides what traversal hands back: security proxies
(``proxied``), or the content and the trusted views themselves
(``view-checked``: the call stage checks the published view's permission;
every other view is made on the proxied context and stays proxied, as in
the proxied chain).  In a view-checked chain, errors
raised after traversal are located at the published object, as the
classic publisher located them (``ZopePublication.handleException``: a
published method at its object, proxied): the last object traversal
reached may be a proxied view whose default (the view itself, unproxied)
is what was published.  A request type made from a publication that sent
an event after traversal (grokcore.view's ``AfterTraversalEvent``) has it
sent here, with the published object.
"""

from zope.configuration.exceptions import ConfigurationError
from zope.event import notify
from zope.interface import Interface
from zope.publisher.interfaces.browser import IBrowserRequest
from zope.schema import ASCIILine
from zope.security.checker import ProxyFactory
from zope.security.proxy import removeSecurityProxy

from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import Contract
from zope.pipeline.http import paths
from zope.pipeline.publishing.publication import publication_factory
from zope.pipeline.publishing.traversers import parse_attribute_names
from zope.pipeline.security.models import PROXIED_MODEL


class ITraverseSettings(Interface):
    """Traversers and namespaces are ZCML; this is what ``++attribute++``
    may reach over XML-RPC."""

    xmlrpc_attributes = ASCIILine(
        title="Attribute names (space separated; '*' for any) that "
              "++attribute++ may publish over XML-RPC besides the methods "
              "of XML-RPC views", default='', required=False)


def has_method_suffix(request):
    """Whether a ``:method`` form field added names to the path (read
    before traversal: traversing them empties zope.publisher's list)."""
    return bool(getattr(request, '_path_suffix', None))


def set_base_for_method(request):
    """The URL of a ``:method`` page does not name it: record its own URL
    as the base (for fix_relative_links), unless one is set already."""
    response = request.response
    if not response.getBase():
        response.setBase(request.getURL())


def resolve_dot_segments(request):
    """zope.publisher keeps ``..`` as a name: resolve the dot segments of
    the path with ``zope.pipeline.http.paths`` (``ClimbsAboveRoot``, a 400, for
    a path that climbs above the root)."""
    if '..' not in request.getTraversalStack():
        return
    stack = paths.resolve(request.environment.get('PATH_INFO', '/'))
    stack.reverse()
    request.setTraversalStack(stack)


def error_location(published):
    """Where errors after traversal are located (the classic publisher's
    rule): the published object, or for a method without a parent the
    object it is bound to, security proxied."""
    if hasattr(published, '__parent__'):
        return published
    bare = removeSecurityProxy(published)
    return ProxyFactory(getattr(bare, '__self__', bare))


class TraverseStage:
    """Traverse the request's path from the root application."""

    settings_schema = ITraverseSettings
    contract = Contract(
        reads=(keys.REQUEST_KEY, keys.ROOT),
        reads_if_present=(keys.TRAVERSAL_HOOKS, keys.VH_DIRECTIVES),
        writes=(keys.CONTEXT, keys.PUBLISHED, keys.DEFAULT_VIEW))

    def __init__(self, next_app, xmlrpc_attributes='', build=None):
        self.next_app = next_app
        # the chain's traversal hooks: filled when the chain is compiled
        self.hooks = build.traversal_hooks if build is not None else []
        #: What answers the request's traversal questions, called as
        #: ``publication(hooks, environ, context_key, xmlrpc_attributes)``
        #: (``zope-pipeline explain`` puts one that records each step in
        #: its place).
        model = build.security_model if build is not None else PROXIED_MODEL
        self.publication = publication_factory(model)
        self.locates_errors_at_published = model.locates_errors_at_published
        self.after_traversal_event = (
            build.after_traversal_event if build is not None else None)
        try:
            self.xmlrpc_attributes = parse_attribute_names(xmlrpc_attributes)
        except ValueError as error:
            raise ConfigurationError('traverse.xmlrpc_attributes: %s'
                                     % error) from None

    def __call__(self, environ, start_response):
        request = environ[keys.REQUEST_KEY]
        added = environ.get(keys.TRAVERSAL_HOOKS)
        # the chain's hooks, then any a stage added for this request
        traversal = self.publication(
            self.hooks + list(added) if added else self.hooks, environ,
            keys.CONTEXT, self.xmlrpc_attributes)
        request.setPublication(traversal)
        root = traversal.getApplication(request)
        environ[keys.CONTEXT] = root
        resolve_dot_segments(request)
        method_page = has_method_suffix(request) and \
            IBrowserRequest.providedBy(request)
        published = environ[keys.PUBLISHED] = request.traverse(root)
        if method_page:
            set_base_for_method(request)
        if self.locates_errors_at_published:
            environ[keys.CONTEXT] = error_location(published)
        if self.after_traversal_event is not None:
            notify(self.after_traversal_event(published, request))
        environ[keys.DEFAULT_VIEW] = tuple(traversal.default_names)
        return self.next_app(environ, start_response)
