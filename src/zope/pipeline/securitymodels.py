"""The two security models a request type's chain is compiled with:
``proxied`` and ``view-checked``.

**proxied** (classic Zope 3, the default): traversal wraps every object it
reaches in a security proxy, so every attribute a view, a template or a
traverser touches is checked against the checker of its class.

**view-checked** (Grok's publications, Pyramid): traversal hands back the
objects themselves; the object published is checked once, when the call
stage calls it: the permission its checker requires for ``__call__`` (the
view's permission).  The code behind the view is trusted.  A view that does
not say it is checked this way (``TRUSTED_VIEW_INTERFACES``: zope.pipeline's
``ITrustedView``, grokcore.view's ``IGrokSecurityView``) stays proxied, as
Grok's ``ZopePublicationSansProxy`` leaves it: ``browser:page`` views and
their templates were written for proxied content.  Both models refuse an
anonymous request to a protected view with 401 and an authenticated one
without the permission with 403.

The model is chosen per request type (``pipeline:requestFactory``'s
``security``, ``pipeline:security``, or the publication a ``<publisher>``
registration names: ``zope.pipeline.publications``) and compiled into the
traverse and call stages of its chain when it is built.
"""

import sys
from types import MethodType

from zope.configuration.exceptions import ConfigurationError
from zope.publisher.interfaces.browser import IBrowserView
from zope.security.checker import ProxyFactory
from zope.security.checker import selectChecker
from zope.security.proxy import removeSecurityProxy

from zope.pipeline.ordering import where

PROXIED = 'proxied'
VIEW_CHECKED = 'view-checked'
SECURITY_MODELS = (PROXIED, VIEW_CHECKED)

#: (module, name) of the interfaces whose views the view-checked model
#: trusts bare.  An interface whose module is not loaded is provided by
#: no view, so it is skipped (zope.pipeline imports no framework).
TRUSTED_VIEW_INTERFACES = (
    ('zope.pipeline.interfaces', 'ITrustedView'),
    ('grokcore.view.interfaces', 'IGrokSecurityView'),
)


def check_security_model(model, info=None, what='security'):
    """Return ``model`` if it is one of ``SECURITY_MODELS``; otherwise a
    ConfigurationError naming where it was given and the accepted ones."""
    if model in SECURITY_MODELS:
        return model
    raise ConfigurationError(
        '%s="%s" at %s: expected one of: %s.'
        % (what, model, where(info), ', '.join(SECURITY_MODELS)))


def trusted_view_interfaces():
    """The interfaces of ``TRUSTED_VIEW_INTERFACES`` that are loaded."""
    found = []
    for module_name, name in TRUSTED_VIEW_INTERFACES:
        module = sys.modules.get(module_name)
        interface = getattr(module, name, None)
        if interface is not None:
            found.append(interface)
    return tuple(found)


def bare_unless_untrusted_view(found, trusted):
    """What view-checked traversal hands back for ``found``: the object
    itself, unless it is a browser view none of ``trusted`` marks (then
    security proxied, as ``ZopePublicationSansProxy.traverseName``)."""
    bare = removeSecurityProxy(found)
    if IBrowserView.providedBy(bare):
        for interface in trusted:
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
