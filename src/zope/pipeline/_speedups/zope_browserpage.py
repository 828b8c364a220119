"""zope.browserpage's ``ViewPageTemplateFile.__call__``, for a template
Chameleon compiled (``templates.ChameleonProgram``), without the
zope.tales context.

zope.pagetemplate hands the program of another engine
(``IPageTemplateEngine``) a zope.tales context only (``pt_render``:
made by its engine with variables, scopes, a repeat dict, the request
and context noted), from which the ``ChameleonProgram`` only copies the
variables, and z3c.pt's render copies them again.  ``call_view_template``
does what zope.browserpage's ``__call__`` does, but gives the program the
namespace ``pt_getContext`` made (``render_compiled``: the file's check,
its errors and traceback supplement as ``pt_render`` has them), and
``render_namespace`` does z3c.pt's render (language, translation
function, Content-Type) on that dict without copying it.

Measured when it was added (issue 34, instructions per request of the
peers' page, 400 requests): view-checked 1.259 M -> 1.234 M (-2.0 %),
proxied 1.596 M -> 1.560 M (-2.3 %); on issue 42's core (installed
against not, the only module of the seam then): view-checked 1.342 M ->
1.313 M (-2.2 %), proxied 1.672 M -> 1.646 M (-1.5 %).

What would retire it: zope.pagetemplate letting a program of another
engine be called with the namespace rather than a zope.tales context
(``pt_render`` asking the program whether it wants one), and z3c.pt's
``BaseTemplate.render`` taking the variables as a dict it may keep.

``install`` puts ``call_view_template`` in the class while the method
there is zope.browserpage's own (another library's is left in place,
with a warning: it may do more than ours knows of); ``uninstall`` puts
back the very function it replaced.  A subclass of the template would
leave out the templates made by others (``browser:page``'s
``SimpleViewClass``, zope.formlib, Grok), hence the class attribute.
"""

import logging

from chameleon.i18n import fast_translate
from z3c.pt.pagetemplate import MV
from z3c.pt.pagetemplate import BaseTemplate
from zope.browserpage.viewpagetemplatefile import ViewPageTemplateFile
from zope.i18n import negotiate
from zope.pagetemplate.pagetemplate import PageTemplate
from zope.pagetemplate.pagetemplate import PageTemplateTracebackSupplement
from zope.pagetemplate.pagetemplate import PTRuntimeError

from zope.pipeline.publishing.templates import ChameleonProgram

log = logging.getLogger(__name__)

#: The methods of zope.pagetemplate's that ``call_view_template`` folds
#: (a class of template that has others of its own is called the stock
#: way).
STOCK_PT_RENDER = PageTemplate.pt_render
STOCK_ENGINE_CONTEXT = PageTemplate.pt_getEngineContext


class State:
    """The ``ViewPageTemplateFile.__call__`` that ``install`` replaced
    (None while it is not installed)."""
    replaced = None


def call_view_template(self, instance, *args, **keywords):
    """zope.browserpage's ``ViewPageTemplateFile.__call__`` (``self``
    the template, ``instance`` the view), the same steps for a template
    Chameleon compiled but for zope.pagetemplate's ``pt_render``:
    ``render_compiled`` gives the program the namespace itself.

    The stock method is called for the templates it does not fold: not
    (yet) compiled by Chameleon, of a class with its own ``pt_render``
    or ``pt_getEngineContext``, or rendered with the request's debug
    flags (``showTAL``, ``sourceAnnotations``), which ``pt_render``
    passes to the program."""
    if type(self._v_program) is not ChameleonProgram \
            or type(self).pt_render is not STOCK_PT_RENDER \
            or type(self).pt_getEngineContext is not STOCK_ENGINE_CONTEXT:
        return State.replaced(self, instance, *args, **keywords)
    request = instance.request
    namespace = self.pt_getContext(request=request, instance=instance,
                                   args=args, options=keywords)
    debug_flags = request.debug
    showtal = getattr(debug_flags, 'showTAL', 0)
    source_annotations = getattr(debug_flags, 'sourceAnnotations', 0)
    if showtal or source_annotations:
        text = self.pt_render(namespace, showtal=showtal,
                              sourceAnnotations=source_annotations)
    else:
        text = render_compiled(self, namespace)
    response = request.response
    if not response.getHeader('Content-Type'):
        response.setHeader('Content-Type', self.content_type)
    return text


def render_compiled(template, namespace):
    """``template.pt_render(namespace)`` (zope.pagetemplate), the
    namespace given to the ``ChameleonProgram`` without a zope.tales
    context; by ``pt_render`` when the template, read again
    (``_cook_check``: its file changed), is no longer Chameleon's."""
    template._cook_check()
    __traceback_supplement__ = (  # noqa: F841 - zope.exceptions reads it
        PageTemplateTracebackSupplement, template, namespace)
    if template._v_errors:
        raise PTRuntimeError(str(template._v_errors))
    program = template._v_program
    if type(program) is not ChameleonProgram:
        return STOCK_PT_RENDER(template, namespace)
    return render_namespace(program.template, program.variables(namespace))


def render_namespace(template, variables):
    """``template.render(**variables)``, ``variables`` taken over: z3c.pt's
    ``BaseTemplate.render`` (the language negotiated for the request, the
    translation function bound to it, the response's Content-Type), then
    Chameleon's, without z3c.pt's copy of the variables (``render`` takes
    them as keywords, to give them to Chameleon's as keywords again)."""
    request = variables.setdefault('request', None)
    if variables.get('target_language') is None:
        variables['target_language'] = negotiated_language(request)
    variables['translate'] = request_translation(request,
                                                 template.i18n_message_type)
    if request is not None and not isinstance(request, str):
        response = request.response
        if response and not response.getHeader('Content-Type'):
            response.setHeader('Content-Type',
                               template.content_type or 'text/html')
    # what z3c.pt's render calls: the next render after its own
    return super(BaseTemplate, template).render(**variables)


def negotiated_language(request):
    """``zope.i18n.negotiate(request)``; None when it fails (z3c.pt's
    ``BaseTemplate.render``)."""
    try:
        return negotiate(request)
    except Exception:
        return None


def request_translation(request, message_type):
    """z3c.pt's translation function of a render, for ``request``:
    ``fast_translate`` in the request's context, a value neither a
    ``message_type`` nor a string given back as it is, Zope 2's
    ``Missing.MV`` as None (z3c.pt's ``BaseTemplate.render``)."""

    def translate(msgid, domain=None, mapping=None, target_language=None,
                  default=None, context=None):
        if msgid is MV:
            return None
        if not isinstance(msgid, (message_type, str)):
            return msgid
        return fast_translate(msgid, domain, mapping, request,
                              target_language, default)

    return translate


def install():
    """Make ``call_view_template`` zope.browserpage's
    ``ViewPageTemplateFile.__call__``, unless something other than
    zope.browserpage's own method is there (left as it is, logged).
    Whether it is ours."""
    current = ViewPageTemplateFile.__dict__.get('__call__')
    if current is call_view_template:
        return True
    if not is_browserpages_own(current):
        log.warning('ViewPageTemplateFile.__call__ is not zope.browserpage\'s'
                    ' own (%r): view templates are rendered through it',
                    current)
        return False
    State.replaced = current
    ViewPageTemplateFile.__call__ = call_view_template
    return True


def uninstall():
    """The ``ViewPageTemplateFile.__call__`` that ``install`` replaced,
    back in the class (nothing when ours is not there)."""
    if ViewPageTemplateFile.__dict__.get('__call__') is call_view_template:
        ViewPageTemplateFile.__call__ = State.replaced
    State.replaced = None


def is_browserpages_own(function):
    """Is ``function`` zope.browserpage's ``ViewPageTemplateFile.__call__``
    (not another's put there before)?"""
    return getattr(function, '__module__', None) == \
        ViewPageTemplateFile.__module__ and \
        getattr(function, '__qualname__', None) == \
        'ViewPageTemplateFile.__call__'
