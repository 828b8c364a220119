"""What ``zope-pipeline explain`` tells of one request, found by running
the site's own pipeline on it up to the end of traversal.

The request goes through a second build of the site's chains
(``ExplainPublisher``): the same stages with the same settings (but
``metrics``: the request is not served), except that the traverse stage
records each step (``RecordingSteps``: the real traversal policy, asked
by the same loop, its answers noted) and hands the object it reached
to ``conclude`` instead of the stages that would call it.  ``conclude``
reads the view's class, template and permission, asks the interaction
whether the principal has that permission, and lists the grants that
bear on it; then it dooms the transaction, which the transaction stage
aborts: nothing is written.
"""

import functools
import io
import textwrap
import urllib.parse

from zope.authentication.interfaces import IAuthentication
from zope.authentication.interfaces import PrincipalLookupError
from zope.component import getGlobalSiteManager
from zope.component import queryUtility
from zope.publisher.interfaces import NotFound
from zope.publisher.interfaces.http import MethodNotAllowed
from zope.security.checker import CheckerPublic
from zope.security.checker import selectChecker
from zope.security.interfaces import Unauthorized
from zope.security.management import checkPermission
from zope.security.management import newInteraction
from zope.security.proxy import removeSecurityProxy
from zope.securitypolicy.interfaces import IPrincipalPermissionMap
from zope.securitypolicy.interfaces import IPrincipalRoleMap
from zope.securitypolicy.interfaces import IRolePermissionMap
from zope.securitypolicy.principalpermission import principalPermissionManager
from zope.securitypolicy.principalrole import principalRoleManager
from zope.securitypolicy.rolepermission import rolePermissionManager

from zope.pipeline import components
from zope.pipeline import environ as keys
from zope.pipeline.engine.contract import contract_of
from zope.pipeline.engine.introspect import dotted_name
from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.http.wsgi import plain_response
from zope.pipeline.publishing.publication import Publication
from zope.pipeline.publishing.scene import end_interaction
from zope.pipeline.security.models import trusted_view_interfaces
from zope.pipeline.stages.call import MethodCallStage
from zope.pipeline.stages.call import method_handler
from zope.pipeline.stages.call import method_not_allowed

#: The width the text output is filled to.
TEXT_WIDTH = 78
#: The environ key of the request's ``Explanation``.
EXPLANATION = 'zope.pipeline.explain'
#: The stage whose policy is recorded, and after which nothing runs.
TRAVERSE = 'traverse'
#: Stages left out: an explained request is not served, so it is not
#: measured (nor sent to statsd or a process group's shared numbers).
LEFT_OUT = frozenset(('metrics',))
#: The role zope.securitypolicy gives every principal.
ANONYMOUS_ROLE = 'zope.Anonymous'
#: Where the global maps of zope.securitypolicy are named.
GLOBAL = '(global)'
#: The modules whose classes are made for a view registration.
GENERATED_VIEW_MODULES = ('zope.browserpage.metaconfigure',
                          'zope.browserpage.simpleviewclass')
#: The modules of the base classes of those (not what a page named).
VIEW_BASE_MODULES = ('zope.publisher.browser',)
#: The publishing traverser of every object (views by name).
DEFAULT_TRAVERSER = 'zope.pipeline.publishing.traversers.ViewTraverser'
#: Methods that change nothing (the csrf stage never checks them).
SAFE_METHODS = frozenset(('GET', 'HEAD', 'OPTIONS', 'TRACE'))

#: What each stage that can change the response does to it, and for
#: which methods (None: every method).
RESPONSE_EFFECTS = (
    ('security_headers', None,
     'adds X-Frame-Options, Content-Security-Policy: frame-ancestors and '
     'X-Content-Type-Options (security_headers.*)'),
    ('debug_headers', None,
     'adds X-Pipeline-Pid and X-Pipeline-Attempt headers'),
    ('virtual_host', None,
     'answers 400 for a Host not in virtual_host.allowed_hosts; a trusted '
     '++vh++ path or forwarded header changes the URLs the page makes'),
    ('retry', None,
     'publishes again after a conflict (retry.attempts), 413 for a body '
     'above retry.max_body'),
    ('handle_error', None,
     'turns an error into its error page: 404, 401 (a login challenge) '
     'for an anonymous principal, 403, 500 without a traceback'),
    ('csrf', frozenset(('POST', 'PUT', 'PATCH', 'DELETE')),
     'an unsafe method whose Origin (or Referer) is another site gets '
     '403 before traversal'),
    ('transaction', None,
     'commits before the response starts: a conflict at commit is '
     'retried, another error is a 500'),
    ('process_inputs', None,
     'answers 400 for form fields beyond its bounds or that cannot be '
     'decoded (process_inputs.*), 413 for an XML-RPC body above '
     'process_inputs.xmlrpc_max_body'),
    ('authenticate', None,
     'answers 429 with Retry-After after too many failed logins from the '
     'client or for the login (authenticate.max_failures_*)'),
    ('fix_relative_links', frozenset(('GET', 'POST')),
     'an HTML page reached by a default view or :method gets a <base> so '
     'its relative links resolve'),
)


class Explanation:
    """What one request met on its way, as data (``as_data()``)."""

    def __init__(self, method, url, principal=None):
        self.method = method
        self.url = url
        #: the principal asked about (None: whoever authenticate finds)
        self.as_principal = principal
        #: the stages the request entered, in order
        self.entered = []
        #: the stage that would call the object traversal found
        self.publishing = None
        self.request_type = None
        self.request_class = None
        self.principal = None
        self.publication = None
        self.view = None
        self.security = None
        self.failure = None
        self.status = None

    def as_data(self):
        steps = self.publication.steps if self.publication else []
        return {
            'url': self.url, 'method': self.method,
            'request_type': self.request_type,
            'request_class': self.request_class,
            'principal': self.principal,
            'steps': steps, 'view': self.view,
            'security': self.security, 'failure': self.failure,
            'status': self.status, 'entered': self.entered,
        }


class RecordingSteps:
    """Mixed into the traverse stage's publication class (that of its
    chain's security model): the same traversal policy, asked by the
    same loop (``request.traverse``), each of its answers noted as it
    gives it; nothing is looked up or made that serving would not."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        #: One dict per name traversed (see docs/explain.md)
        self.steps = []
        self.default_names_pending = []

    def traverseName(self, request, ob, name):
        default = bool(self.default_names_pending) and \
            self.default_names_pending[0] == name
        if default:
            self.default_names_pending.pop(0)
        step = {'name': name, 'from': describe_object(ob),
                'default_view': default, 'namespace': None,
                'traverser': None, 'object': None}
        self.steps.append(step)
        found = super().traverseName(request, ob, name)
        step['object'] = describe_object(found)
        return found

    def publish_traverser(self, request, ob):
        traverser = super().publish_traverser(request, ob)
        if traverser is not None:
            unproxied = removeSecurityProxy(traverser)
            self.steps[-1]['traverser'] = (
                'the object itself (IPublishTraverse)'
                if unproxied is removeSecurityProxy(ob)
                else dotted_name(type(unproxied)))
        return traverser

    def stands_in_for(self, factory):
        super().stands_in_for(factory)
        self.steps[-1]['traverser'] = dotted_name(factory)

    def traverse_namespace(self, request, ob, name, namespace, name_in_it):
        self.steps[-1]['namespace'] = namespace
        return super().traverse_namespace(request, ob, name, namespace,
                                          name_in_it)

    def namespace_traverser(self, request, ob, namespace):
        traverser = super().namespace_traverser(request, ob, namespace)
        if traverser is not None:
            self.steps[-1]['traverser'] = dotted_name(
                type(removeSecurityProxy(traverser)))
        return traverser

    def getDefaultTraversal(self, request, ob):
        found, path = super().getDefaultTraversal(request, ob)
        self.default_names_pending.extend(path or ())
        return found, path


def recording(publication):
    """The traverse stage's ``publication`` factory, its class replaced by
    one that records each step (a class, or a partial of one)."""
    if isinstance(publication, functools.partial):
        return functools.partial(recording(publication.func),
                                 *publication.args, **publication.keywords)
    return type('Recording' + publication.__name__,
                (RecordingSteps, publication), {})


#: The standard (proxied) chains' publication, recording.
RecordingPublication = recording(Publication)


def template_of(view):
    """The file of the page template a view renders, or None."""
    for cls in type(view).__mro__:
        for value in vars(cls).values():
            filename = getattr(value, 'filename', None)
            if isinstance(filename, str) and filename.endswith('.pt'):
                return filename
    return None


def describe_object(ob):
    """The class and name of ``ob`` (behind its security proxy)."""
    unproxied = removeSecurityProxy(ob)
    name = getattr(unproxied, '__name__', None)
    return {'class': dotted_name(view_class(unproxied)),
            'name': name if isinstance(name, str) else None}


def published_view(published):
    """The view and the name of its method that the call stage calls:
    a page's default is its bound ``__call__`` (zope.browserpage's
    ``browserDefault``), other objects are called themselves."""
    unproxied = removeSecurityProxy(published)
    owner = getattr(unproxied, '__self__', None)
    if owner is not None and isinstance(getattr(unproxied, '__name__', None),
                                        str):
        return owner, unproxied.__name__
    return unproxied, '__call__'


def trusted_as(publishing, view):
    """In a view-checked chain, the dotted name of the trusted-view
    interface ``view`` provides (it runs on bare objects), or '' (an
    untrusted view: proxied, checked as in the proxied chain); None in a
    proxied chain."""
    if not getattr(publishing, 'view_checked', False):
        return None
    for interface in trusted_view_interfaces():
        if interface.providedBy(view):
            return interface.__identifier__
    return ''


def permission_to_call(view, method):
    """The permission the checker of ``view`` asks for ``method``:
    'zope.Public' for a public one, None when it has no checker or its
    checker forbids the method."""
    checker = selectChecker(view)
    permission = checker.permission_id(method) if checker else None
    return 'zope.Public' if permission is CheckerPublic else permission


def view_class(view):
    """The class a view's registration named: zope.browserpage makes a
    class of its own for each page, on top of the named one; a page of a
    template alone has only its own ('SimpleViewClass from page.pt')."""
    for cls in type(view).__mro__:
        if cls.__module__ not in GENERATED_VIEW_MODULES:
            return type(view) if cls.__module__ in VIEW_BASE_MODULES \
                else cls
    return type(view)  # pragma: no cover (object ends every MRO)


def context_of(ob):
    """The object whose place decides a view's permission: its context,
    or its parent, or itself."""
    unproxied = removeSecurityProxy(ob)
    for name in ('context', '__self__', '__parent__'):
        found = getattr(unproxied, name, None)
        if found is not None:
            return removeSecurityProxy(found)
    return unproxied


def place_name(ob):
    """Where a local grant is: the object's path from the root."""
    names = []
    while ob is not None:
        name = getattr(ob, '__name__', None)
        if name:
            names.append(name)
        ob = getattr(ob, '__parent__', None)
    return '/' + '/'.join(reversed(names))


def places(ob):
    """(name, principal-permission, role-permission, principal-role maps)
    from ``ob`` up to the root, then the global maps."""
    while ob is not None:
        yield (place_name(ob),
               components.query_adapter(ob, IPrincipalPermissionMap),
               components.query_adapter(ob, IRolePermissionMap),
               components.query_adapter(ob, IPrincipalRoleMap))
        ob = removeSecurityProxy(getattr(ob, '__parent__', None))
    yield (GLOBAL, principalPermissionManager, rolePermissionManager,
           principalRoleManager)


def groups_of(principal):
    """The ids of the groups ``principal`` is in, directly or not."""
    auth = queryUtility(IAuthentication)
    found = []
    pending = list(getattr(principal, 'groups', ()))
    while pending:
        group_id = pending.pop(0)
        if group_id in found:
            continue
        found.append(group_id)
        try:
            group = auth.getPrincipal(group_id)
        except PrincipalLookupError:
            continue
        pending.extend(getattr(group, 'groups', ()))
    return found


def grants_for(principal_ids, permission, ob):
    """The settings of zope.securitypolicy's maps, local and global, that
    bear on ``permission`` for these principals at ``ob``: direct grants
    and the roles that carry it (zope.Anonymous is everybody's)."""
    found = []
    role_places = {}
    permission_roles = []
    for place, prinper, roleper, prinrole in places(ob):
        for principal_id in principal_ids:
            setting = prinper.getSetting(permission, principal_id, None) \
                if prinper is not None else None
            if setting is not None:
                found.append({'kind': 'principal-permission',
                              'principal': principal_id, 'role': None,
                              'setting': setting.getName(), 'at': place})
            for role, role_setting in (prinrole.getRolesForPrincipal(
                    principal_id) if prinrole is not None else ()):
                role_places.setdefault(role, []).append(
                    (principal_id, role_setting.getName(), place))
        for role, setting in (roleper.getRolesForPermission(permission)
                              if roleper is not None else ()):
            permission_roles.append((role, setting.getName(), place))
    role_places.setdefault(ANONYMOUS_ROLE, []).append(
        (principal_ids[0], 'Allow', '(every principal)'))
    for role, setting, place in permission_roles:
        for principal_id, role_setting, role_place in role_places.get(
                role, ()):
            found.append({'kind': 'role', 'principal': principal_id,
                          'role': role, 'setting': setting, 'at': place,
                          'role_setting': role_setting,
                          'role_at': role_place})
    return found


def explain_permission(principal, permission, ob):
    """Whether the interaction's principal has ``permission`` on ``ob``,
    as the security policy decides, and the grants behind it."""
    principal_ids = [principal.id] + groups_of(principal)
    public = permission == 'zope.Public'
    return {
        'permission': permission,
        'allowed': True if public else bool(checkPermission(permission, ob)),
        'principal_ids': principal_ids,
        'grants': [] if public else grants_for(principal_ids, permission,
                                               ob),
    }


def describe_principal(principal):
    return {'id': principal.id, 'title': getattr(principal, 'title', None)}


def principal_by_login(login):
    """The principal of the global authentication utility (the principal
    registry: etc/site-dev.zcml's, ``zope-pipeline adduser``'s) whose
    login, or else id, is ``login``."""
    auth = getGlobalSiteManager().queryUtility(IAuthentication)
    lookups = (getattr(auth, 'getPrincipalByLogin', None),
               getattr(auth, 'getPrincipal', None))
    for lookup in filter(None, lookups):
        try:
            return lookup(login)
        except (KeyError, PrincipalLookupError):
            continue
    raise SystemExit('No principal has the login or id %r.' % login)


def act_as(request, principal):
    """Make ``principal`` the request's, in a new interaction (the
    authenticate stage made one for its own)."""
    request.setPrincipal(principal)
    end_interaction(request)
    newInteraction(request)


class RecordingTraversal:
    """The traverse stage, its steps recorded, its errors noted;
    ``publishing`` is the stage of its chain that would call what it
    found."""

    def __init__(self, stage, publishing):
        self.stage = stage
        self.publishing = publishing
        stage.publication = recording(stage.publication)

    def __call__(self, environ, start_response):
        explanation = environ[EXPLANATION]
        explanation.publishing = self.publishing
        request = environ[keys.REQUEST_KEY]
        explanation.request_class = dotted_name(type(request))
        explanation.request_type = environ.get(keys.REQUEST_TYPE)
        if explanation.as_principal is not None:
            act_as(request, explanation.as_principal)
        explanation.principal = describe_principal(request.principal)
        try:
            return self.stage(environ, start_response)
        except Exception as error:
            explain_failure(explanation, request, error)
            raise
        finally:
            explanation.publication = request.publication


def explain_failure(explanation, request, error):
    """Where traversal stopped, and why (the permission it lacked)."""
    steps = request.publication.steps
    explanation.failure = {
        'step': len(steps) or None,
        'name': steps[-1]['name'] if steps else None,
        'error': dotted_name(type(error)),
        'message': failure_message(error),
    }
    args = error.args
    if isinstance(error, Unauthorized) and len(args) == 3 and \
            isinstance(args[2], str):
        explanation.security = explain_permission(
            request.principal, args[2], removeSecurityProxy(args[0]))


def failure_message(error):
    """What stopped traversal, without the addresses of objects."""
    args = error.args
    if isinstance(error, NotFound):
        ob = removeSecurityProxy(error.ob)
        return 'nothing is named %r in %s %s' % (
            error.name, dotted_name(type(ob)), place_name(ob))
    if isinstance(error, MethodNotAllowed):
        return 'no view of %s is named %s (views of methods: %s)' % (
            dotted_name(type(removeSecurityProxy(error.object))),
            error.request.method, ' '.join(error.allow) or 'none')
    if isinstance(error, Unauthorized) and len(args) == 3:
        return '%r of %s needs %s' % (
            args[1], dotted_name(view_class(removeSecurityProxy(args[0]))),
            args[2])
    return str(error)


def conclude(environ, start_response):
    """The end of the chain for ``explain``: the view reached, the
    permission it needs and the principal's; nothing is called."""
    explanation = environ[EXPLANATION]
    request = environ[keys.REQUEST_KEY]
    environ[keys.TRANSACTION_MANAGER].doom()
    published = environ[keys.PUBLISHED]
    if isinstance(explanation.publishing, MethodCallStage):
        # plain HTTP: the view named after the method is called
        handler = method_handler(published, request)
        if handler is None:
            raise method_not_allowed(published, request)
        published = handler
    view, method = published_view(published)
    explanation.view = {'class': dotted_name(view_class(view)),
                        'name': describe_object(view)['name'],
                        'method': method, 'template': template_of(view),
                        'trusted_as': trusted_as(explanation.publishing,
                                                 view)}
    permission = permission_to_call(view, method)
    if permission is not None:
        explanation.security = explain_permission(
            request.principal, permission, context_of(view))
    return plain_response(start_response, '200 OK', 'explained')


class Entered:
    """A stage of the explained chain: notes that the request entered it
    (the last one entered answered, when traversal was not reached); its
    declarations (traversal hooks, output filters) are the stage's."""

    def __init__(self, name, stage):
        self.name = name
        self.stage = stage

    def __getattr__(self, name):
        return getattr(self.stage, name)

    def __call__(self, environ, start_response):
        environ[EXPLANATION].entered.append(self.name)
        return self.stage(environ, start_response)


class ExplainPublisher(Publisher):
    """The site's chains, built again, ending after traversal."""

    #: The stage that calls what traversal found, in the chain being
    #: built (built before traverse: chains are built innermost first).
    publishing = None

    def build_stage(self, registration, next_app, settings, build):
        if registration.name in LEFT_OUT:
            return next_app
        if registration.name == TRAVERSE:
            next_app = conclude
        stage = super().build_stage(registration, next_app, settings, build)
        if stage is next_app:  # switched off
            return stage
        if contract_of(registration).publishes:
            self.publishing = stage
        if registration.name == TRAVERSE:
            stage = RecordingTraversal(stage, self.publishing)
        return Entered(registration.name, stage)


def request_environ(url, method, allowed_hosts):
    """The WSGI environ of ``method url``: a path alone goes to the first
    of the site's allowed hosts (or localhost), from loopback; an unsafe
    method comes from the site's own origin (a form of its own pages)."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme or 'http'
    host = parts.netloc or (allowed_hosts.split() or ['localhost'])[0]
    environ = {
        'REQUEST_METHOD': method, 'SCRIPT_NAME': '',
        'PATH_INFO': urllib.parse.unquote(parts.path or '/'),
        'QUERY_STRING': parts.query, 'SERVER_PROTOCOL': 'HTTP/1.1',
        'HTTP_HOST': host, 'SERVER_NAME': host.rsplit(':', 1)[0],
        'SERVER_PORT': '443' if scheme == 'https' else '80',
        'REMOTE_ADDR': '127.0.0.1', 'CONTENT_LENGTH': '0',
        'wsgi.url_scheme': scheme, 'wsgi.input': _empty_input(),
        'wsgi.errors': _empty_input(), 'wsgi.version': (1, 0),
        'wsgi.multithread': False, 'wsgi.multiprocess': False,
        'wsgi.run_once': True,
    }
    if method not in SAFE_METHODS:
        environ['HTTP_ORIGIN'] = '%s://%s' % (scheme, host)
        environ['CONTENT_TYPE'] = 'application/x-www-form-urlencoded'
    return environ


def _empty_input():
    return io.BytesIO(b'')


def stage_settings(stages, name):
    return next((stage['settings'] for stage in stages
                 if stage['name'] == name), {})


def response_effects(stages, method):
    """The stages of the chain that would change this response."""
    names = [stage['name'] for stage in stages
             if stage['settings'].get('enabled', True)]
    return [{'stage': name, 'effect': effect}
            for name, methods, effect in RESPONSE_EFFECTS
            if name in names and (methods is None or method in methods)]


def site_environ(publisher, url, method):
    """``request_environ`` for the site of ``publisher``: a path alone
    goes to the first of its ``virtual_host.allowed_hosts``."""
    allowed = stage_settings(publisher.describe()['request_types'].get(
        'browser', {'stages': []})['stages'], 'virtual_host').get(
            'allowed_hosts', '')
    return request_environ(url, method, allowed)


class ActAs:
    """A stage of a chain built for one principal: the request's principal
    is ``principal`` from this stage on (``act_as``)."""

    def __init__(self, stage, principal):
        self.stage = stage
        self.principal = principal

    def __getattr__(self, name):
        return getattr(self.stage, name)

    def __call__(self, environ, start_response):
        act_as(environ[keys.REQUEST_KEY], self.principal)
        return self.stage(environ, start_response)


class ActingPublisher(Publisher):
    """The site's chains, built again, publishing as ``principal``: the
    authenticate stage runs, then traversal and the view see the
    principal (``zope-pipeline request --user``, as ``explain --user``
    asks)."""

    def __init__(self, publisher, principal):
        self.principal = principal
        super().__init__(publisher.registry, publisher.raw_settings,
                         publisher.where_settings)

    def build_stage(self, registration, next_app, settings, build):
        stage = super().build_stage(registration, next_app, settings, build)
        if registration.name == TRAVERSE and stage is not next_app:
            return ActAs(stage, self.principal)
        return stage


def explain(publisher, url, method='GET', login=None):
    """Run ``method url`` (as ``login``, or anonymously) through the
    chains of ``publisher``'s site up to traversal; return the data
    ``zope-pipeline explain --format json`` prints."""
    explainer = ExplainPublisher(publisher.registry, publisher.raw_settings,
                                 publisher.where_settings)
    outer = [stage.name for stage in explainer.outer.stages]
    environ = site_environ(explainer, url, method)
    principal = principal_by_login(login) if login else None
    explanation = environ[EXPLANATION] = Explanation(method, url, principal)
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    body = explainer(environ, start_response)
    try:
        for _chunk in body:
            pass
    finally:
        getattr(body, 'close', lambda: None)()
    data = explanation.as_data()
    if data['view'] is None:
        data['status'] = statuses[-1] if statuses else None
    stages = explainer.describe()['request_types'].get(
        data['request_type'], {'stages': []})['stages']
    data['chain'] = [stage['name'] for stage in stages] or outer
    data['response_changed_by'] = response_effects(stages, method)
    return data


def format_text(data):
    """Render ``explain()`` data as text for people."""
    principal = data['principal']
    lines = ['%s %s as %s' % (data['method'], data['url'], (
        '%(id)s (%(title)s)' % principal if principal
        else 'nobody yet (answered before authentication)')),
             'Request type:  %s (%s)' % (data['request_type'],
                                         data['request_class']),
             _filled('Chain:         ', ' '.join(data['chain'])), '']
    lines.extend(_step_lines(data['steps']))
    lines.extend(_view_lines(data['view']))
    lines.extend(_security_lines(data['security']))
    lines.extend(_failure_lines(data['failure'], data['status'],
                                data['entered']))
    lines.append('Stages that would change the response:')
    lines.extend(_filled('  %-20s' % effect['stage'], effect['effect'])
                 for effect in data['response_changed_by'])
    return '\n'.join(lines)


def _filled(label, text):
    """``label`` then ``text``, filled to the width of the help, its
    lines after the first indented as far as the label."""
    return textwrap.fill(text, TEXT_WIDTH, initial_indent=label,
                         subsequent_indent=' ' * len(label),
                         break_on_hyphens=False, break_long_words=False)


def _object_text(described):
    name = described['name']
    return described['class'] + (' %r' % name if name else '')


def _step_lines(steps):
    if not steps:
        return []
    lines = ['Traversal from the root, %s:' % _object_text(steps[0]['from'])]
    for number, step in enumerate(steps, 1):
        reached = step['object']
        lines.append('  %2d. %s -> %s%s' % (
            number, step['name'],
            _object_text(reached) if reached else '(not reached)',
            ' (default view)' if step['default_view'] else ''))
        how = []
        if step['namespace']:
            how.append('namespace ++%s++' % step['namespace'])
        how.append('traverser %s%s' % (
            step['traverser'] or '(none)',
            ' (the default: views by name)'
            if step['traverser'] == DEFAULT_TRAVERSER else ''))
        lines.append('      %s' % ', '.join(how))
    return lines + ['']


def _view_lines(view):
    if view is None:
        return []
    lines = ['View:          %s, named %r (calls %s)' % (
        view['class'], view['name'], view['method'])]
    trusted = view.get('trusted_as')
    if trusted:
        lines.append(_filled(
            'Trusted:       ', 'yes (%s, view-checked chain): runs on bare '
            'objects; its permission is checked once, when it is called'
            % trusted.rsplit('.', 1)[-1]))
    elif trusted is not None:
        lines.append(_filled(
            'Trusted:       ', 'no (view-checked chain): made on the '
            'security-proxied context and proxied itself, checked as in '
            'the proxied chain'))
    if view['template']:
        lines.append('Template:      %s' % view['template'])
    return lines


def _security_lines(security):
    if security is None:
        return []
    lines = ['Permission:    %s: %s' % (
        security['permission'],
        'the principal has it' if security['allowed']
        else 'the principal LACKS it'),
        'Principal ids: %s' % ' '.join(security['principal_ids'])]
    lines.extend('  %s' % _grant_text(grant, security['permission'])
                 for grant in security['grants'])
    if not security['grants'] and security['permission'] != 'zope.Public':
        lines.append('  no grant of %s to these principals or their roles'
                     % security['permission'])
    return lines + ['']


def _grant_text(grant, permission):
    if grant['kind'] == 'principal-permission':
        return '%s %s to %s, at %s' % (grant['setting'], permission,
                                       grant['principal'], grant['at'])
    return '%s %s to role %s, at %s; %s has the role (%s, at %s)' % (
        grant['setting'], permission, grant['role'], grant['at'],
        grant['principal'], grant['role_setting'], grant['role_at'])


def _failure_lines(failure, status, entered):
    if failure is None:
        return [] if status is None else [
            'Answered before traversal, by %s: %s' % (entered[-1], status),
            '']
    return ['Not reached:   step %s (%s): %s' % (
        failure['step'], failure['name'], failure['error']),
        _filled(' ' * 15, failure['message']),
        'Response:      %s' % status, '']
