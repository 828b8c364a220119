"""zope-pipeline explain INI URL: what the sample site (etc/deploy.ini, its
database in a temporary directory) does with one request: its traversal
steps, the view, the permission it needs and who has it, run through the
site's own stages without calling the view or writing anything."""

import json
import logging
import os

import pytest
import transaction
from zope.securitypolicy.interfaces import IPrincipalRoleManager
from zope.securitypolicy.interfaces import IRolePermissionManager

from zope.pipeline import _speedups
from zope.pipeline import environ as keys
from zope.pipeline import explain as explaining
from zope.pipeline.cli import main
from zope.pipeline.commands import console
from zope.pipeline.commands import load_site_application
from zope.pipeline.engine.introspect import dotted_name
from zope.pipeline.publishing.traversers import Traversal
from zope.pipeline.serving.startup import process_databases

from tests.conftest import ROOT

ZCONFIG = '''\
%import relstorage
<zodb main>
  <relstorage>
    keep-history false
    <sqlite3>
      data-dir $here/var
    </sqlite3>
  </relstorage>
</zodb>
'''

#: A site whose chain writes to the database before traversal (a stage of
#: this module), to show that explain writes nothing.
SCRIBBLING_SITE = '''\
<configure xmlns="http://namespaces.zope.org/zope"
           xmlns:pipeline="http://namespaces.zope.org/pipeline">
  <include file="%s" />
  <pipeline:stage
      name="scribble"
      for="zope.publisher.interfaces.IRequest"
      factory="tests.functional.test_explain.ScribbleStage"
      after="authenticate"
      before="traverse"
      />
</configure>
'''

#: The keys of the JSON (README.md and docs/explain.md document them).
TOP_KEYS = {'url', 'method', 'request_type', 'request_class', 'principal',
            'steps', 'view', 'security', 'failure', 'status', 'entered',
            'chain', 'response_changed_by'}
STEP_KEYS = {'name', 'from', 'default_view', 'namespace', 'traverser',
             'object'}
SECURITY_KEYS = {'permission', 'allowed', 'principal_ids', 'grants'}


class ScribbleStage:
    """Writes to the root folder on the way to traversal."""

    def __init__(self, next_app, build=None):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        environ[keys.ROOT]().scribbled = True
        return self.next_app(environ, start_response)


def deploy_ini(tmp_path, site_zcml=None):
    """etc/deploy.ini, its database in ``tmp_path``."""
    (tmp_path / 'zodb.conf').write_text(ZCONFIG)
    with open(os.path.join(ROOT, 'etc', 'deploy.ini')) as original:
        text = original.read()
    site_zcml = site_zcml or os.path.join(ROOT, 'etc', 'site-dev.zcml')
    text = text.replace('%(here)s/zodb-sqlite.conf', str(tmp_path /
                                                         'zodb.conf'))
    text = text.replace('site_zcml = site-dev.zcml',
                        'site_zcml = %s' % site_zcml)
    assert str(tmp_path) in text and site_zcml in text
    path = tmp_path / 'deploy.ini'
    path.write_text(text)
    return str(path)


@pytest.fixture
def ini(tmp_path):
    return deploy_ini(tmp_path)


@pytest.fixture(autouse=True)
def logging_restored():
    """The logging of etc/deploy.ini, which console.opened_site applies,
    stays in this module's tests (zope.pipeline at INFO would put records
    into other tests' caplog)."""
    root = logging.getLogger()
    ours = logging.getLogger('zope.pipeline')
    saved = [(logger, logger.level, list(logger.handlers), logger.propagate)
             for logger in (root, ours)]
    yield
    for logger, level, handlers, propagate in saved:
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate = propagate


def explain(capsys, *args):
    assert main(['explain'] + list(args)) == 0
    return capsys.readouterr().out


def explain_json(capsys, *args):
    return json.loads(explain(capsys, *(args + ('--format', 'json'))))


def as_a_new_command():
    import zope.testing.cleanup

    from zope.pipeline.zodb import storage
    storage.close_all()
    zope.testing.cleanup.cleanUp()


def test_a_page_names_its_view_template_permission_and_the_grant(
        clean_zope, ini, capsys):
    text = explain(capsys, ini, '/folder/page')
    assert 'GET /folder/page as zope.anybody (Unauthenticated User)' in text
    assert 'Request type:  browser (zope.pipeline.engine.factories.' \
           'BrowserRequest)' in text
    assert ('   1. folder -> zope.pipeline.sample.content.SampleFolder '
            "'folder'\n      traverser zope.container.traversal."
            'ItemTraverser') in text
    assert ("   3. @@index.html -> zope.pipeline.sample.views.PageView "
            "'index.html' (default view)\n      namespace ++view++, "
            'traverser zope.traversing.namespace.view') in text
    assert ("View:          zope.pipeline.sample.views.PageView, named "
            "'index.html' (calls __call__)") in text
    assert 'sample/templates/page.pt' in text
    assert 'Permission:    zope.View: the principal has it' in text
    assert '  Allow zope.View to zope.Everybody, at (global)' in text


def test_anonymous_lacks_the_permission_of_the_edit_form(
        clean_zope, ini, capsys):
    text = explain(capsys, ini, '/folder/page/edit')
    assert ("   3. edit -> zope.pipeline.sample.views.EditPage 'edit'"
            in text)
    assert 'Permission:    zope.ManageContent: the principal LACKS it' \
        in text
    assert 'no grant of zope.ManageContent to these principals' in text
    assert ('Not reached:   step 3 (edit): '
            'zope.security.interfaces.Unauthorized') in text
    assert ("'browserDefault' of zope.pipeline.sample.views.EditPage needs "
            "zope.ManageContent") in ' '.join(text.split())
    assert 'Response:      401 Unauthorized' in text


def test_the_admin_has_it_by_a_global_grant(clean_zope, ini, capsys):
    data = explain_json(capsys, ini, '/folder/page/edit', '--user', 'admin')
    assert data['principal'] == {'id': 'zope.pipeline.sample.admin',
                                 'title': 'Sample site administrator'}
    assert data['view']['class'] == 'zope.pipeline.sample.views.EditPage'
    assert data['view']['template'].endswith('sample/templates/edit.pt')
    security = data['security']
    assert security['permission'] == 'zope.ManageContent'
    assert security['allowed'] is True
    assert security['grants'] == [{
        'kind': 'principal-permission',
        'principal': 'zope.pipeline.sample.admin', 'role': None,
        'setting': 'Allow', 'at': '(global)'}]
    assert data['failure'] is None and data['status'] is None


def test_a_principal_is_also_found_by_its_id(clean_zope, ini, capsys):
    data = explain_json(capsys, ini, '/folder/page/edit', '--user',
                        'zope.pipeline.sample.admin')
    assert data['security']['allowed'] is True


def test_an_unknown_login_is_a_message(clean_zope, ini):
    with pytest.raises(SystemExit, match="No principal has the login or "
                                         "id 'nobody'"):
        main(['explain', ini, '/folder', '--user', 'nobody'])


def test_a_missing_ini_is_a_message(clean_zope, tmp_path):
    with pytest.raises(SystemExit, match='does not exist'):
        main(['explain', str(tmp_path / 'absent.ini'), '/'])


def test_a_404_names_the_step_that_failed(clean_zope, ini, capsys):
    text = explain(capsys, ini, '/folder/nope/deeper')
    assert '   2. nope -> (not reached)' in text
    assert ('Not reached:   step 2 (nope): '
            'zope.publisher.interfaces.NotFound') in text
    assert ("nothing is named 'nope' in zope.pipeline.sample.content."
            "SampleFolder /folder") in ' '.join(text.split())
    assert 'Response:      404 Not Found' in text
    assert 'deeper' not in text.split('Not reached')[0].split('Chain')[1]


def test_json_has_the_documented_shape(clean_zope, ini, capsys):
    data = explain_json(capsys, ini, '/folder/page')
    assert set(data) == TOP_KEYS
    assert [step['name'] for step in data['steps']] == [
        'folder', 'page', '@@index.html']
    for step in data['steps']:
        assert set(step) == STEP_KEYS
    assert [step['default_view'] for step in data['steps']] == [
        False, False, True]
    assert set(data['security']) == SECURITY_KEYS
    assert data['security']['principal_ids'][0] == 'zope.anybody'
    assert data['chain'][-3:] == ['traverse', 'fix_relative_links', 'call']
    assert data['entered'][-1] == 'traverse'
    # not served, so not measured
    assert data['chain'][0] == 'metrics' and 'metrics' not in data['entered']
    for effect in data['response_changed_by']:
        assert set(effect) == {'stage', 'effect'}


def test_csrf_changes_the_response_of_a_post_only(clean_zope, ini, capsys):
    posted = explain_json(capsys, ini, '/folder/page/add-comment',
                          '--method', 'post')
    assert posted['method'] == 'POST'
    assert posted['view']['class'] == 'zope.pipeline.sample.views.AddComment'
    assert 'csrf' in [effect['stage']
                      for effect in posted['response_changed_by']]
    as_a_new_command()
    got = explain_json(capsys, ini, '/folder/page/add-comment')
    assert 'csrf' not in [effect['stage']
                          for effect in got['response_changed_by']]


def test_a_request_answered_before_traversal_says_by_which_stage(
        clean_zope, ini, capsys):
    text = explain(capsys, ini, 'http://evil.example/folder')
    assert 'as nobody yet (answered before authentication)' in text
    assert ('Answered before traversal, by virtual_host: 400 Bad Request'
            in text)


def test_plain_http_names_the_view_of_the_method(clean_zope, ini, capsys):
    text = explain(capsys, ini, '/folder/page', '--method', 'PUT')
    assert 'Request type:  http' in text
    assert ('zope.publisher.interfaces.http.MethodNotAllowed\n'
            '               no view of zope.pipeline.sample.content.Page '
            'is named PUT') in text
    assert 'Response:      405 Method Not Allowed' in text


def test_a_resource_is_public(clean_zope, ini, capsys):
    data = explain_json(capsys, ini, '/@@/zope.pipeline.sample/style.css')
    assert data['view']['class'] == 'zope.browserresource.file.FileResource'
    assert data['view']['method'] == 'GET'
    assert data['steps'][1]['traverser'] == \
        'the object itself (IPublishTraverse)'
    assert data['security'] == {
        'permission': 'zope.Public', 'allowed': True,
        'principal_ids': ['zope.anybody', 'zope.Anybody', 'zope.Everybody'],
        'grants': []}


def test_local_grants_and_roles_are_named(clean_zope, ini, capsys):
    with console.opened_site(ini) as names:
        folder = names['root']['folder']
        roles = IRolePermissionManager(folder)
        roles.grantPermissionToRole('zope.ManageContent', 'test.Editor')
        roles.denyPermissionToRole('zope.ManageContent', 'zope.Anonymous')
        IPrincipalRoleManager(folder).assignRoleToPrincipal(
            'test.Editor', 'zope.anybody')
        names['transaction_manager'].commit()
    as_a_new_command()
    data = explain_json(capsys, ini, '/folder/page/edit')
    assert data['security']['grants'] == [
        {'kind': 'role', 'principal': 'zope.anybody', 'role': 'test.Editor',
         'setting': 'Allow', 'at': '/folder', 'role_setting': 'Allow',
         'role_at': '/folder'},
        {'kind': 'role', 'principal': 'zope.anybody',
         'role': 'zope.Anonymous', 'setting': 'Deny', 'at': '/folder',
         'role_setting': 'Allow', 'role_at': '(every principal)'}]
    # the policy decides: a role allowed beats zope.Anonymous denied
    assert data['security']['allowed'] is True
    assert data['view']['class'] == 'zope.pipeline.sample.views.EditPage'
    as_a_new_command()
    text = explain(capsys, ini, '/folder/page/edit')
    assert ('  Allow zope.ManageContent to role test.Editor, at /folder; '
            'zope.anybody has the role (Allow, at /folder)') in text


def test_nothing_is_written(clean_zope, tmp_path, capsys):
    site = tmp_path / 'scribbling.zcml'
    site.write_text(SCRIBBLING_SITE % os.path.join(ROOT, 'etc',
                                                   'site-dev.zcml'))
    ini = deploy_ini(tmp_path, str(site))
    data = explain_json(capsys, ini, '/folder/page')
    assert 'scribble' in data['entered']
    assert data['security']['allowed'] is True
    as_a_new_command()
    with console.opened_site(ini) as names:
        assert not hasattr(names['root'], 'scribbled')
    transaction.abort()


def test_a_name_the_object_has_not_or_an_unknown_namespace_is_a_404(
        clean_zope, ini, capsys):
    data = explain_json(capsys, ini, '/folder/page/++attribute++title/x')
    assert data['steps'][2]['namespace'] == 'attribute'
    assert data['steps'][3] == {
        'name': 'x', 'from': {'class': 'builtins.str', 'name': None},
        'default_view': False, 'namespace': None,
        'traverser': 'zope.pipeline.publishing.traversers.ViewTraverser',
        'object': None}
    assert data['status'] == '404 Not Found'
    as_a_new_command()
    text = explain(capsys, ini, '/folder/page/++attribute++title/x')
    assert ('   4. x -> (not reached)\n      traverser zope.pipeline.'
            'publishing.traversers.ViewTraverser (the default: views by '
            'name)') in text
    as_a_new_command()
    data = explain_json(capsys, ini, '/++nonsense++x')
    assert data['steps'][0]['namespace'] == 'nonsense'
    assert data['steps'][0]['traverser'] is None
    assert data['failure']['step'] == 1


def test_a_stage_switched_off_is_neither_entered_nor_named(
        clean_zope, tmp_path, capsys):
    ini = deploy_ini(tmp_path)
    text = open(ini).read().replace('debug_headers.enabled = true',
                                    'debug_headers.enabled = false')
    open(ini, 'w').write(text)
    data = explain_json(capsys, ini, '/folder')
    assert 'debug_headers' not in data['entered']
    assert 'virtual_host' in data['entered']
    assert 'debug_headers' not in [
        effect['stage'] for effect in data['response_changed_by']]


def test_text_of_a_view_without_template(clean_zope, ini, capsys):
    text = explain(capsys, ini, '/@@/zope.pipeline.sample/style.css')
    assert ("View:          zope.browserresource.file.FileResource, named "
            "'zope.pipeline.sample/style.css' (calls GET)\n"
            "Permission:    zope.Public: the principal has it") in text
    assert 'Template:' not in text


def test_the_documented_example_is_the_output(clean_zope, ini, capsys):
    with open(os.path.join(ROOT, 'docs', 'explain.md')) as page:
        example = page.read().split('```text\n')[1].split('```')[0]
    assert example.startswith('GET /folder/page/edit as zope.anybody')
    assert explain(capsys, ini, '/folder/page/edit') == example


#: The sample site served view-checked, with a page that is a trusted
#: view.
VIEW_CHECKED_SITE = '''\
<configure xmlns="http://namespaces.zope.org/zope"
           xmlns:browser="http://namespaces.zope.org/browser"
           xmlns:pipeline="http://namespaces.zope.org/pipeline">
  <include file="%s" />
  <pipeline:security model="view-checked" />
  <browser:page for="zope.pipeline.sample.interfaces.IPage"
                name="trusted-title"
                class="tests.security.views.TrustedTitle"
                permission="zope.Public" />
</configure>
'''


@pytest.fixture
def view_checked_ini(tmp_path):
    site = tmp_path / 'view-checked.zcml'
    site.write_text(VIEW_CHECKED_SITE % os.path.join(ROOT, 'etc',
                                                     'site-dev.zcml'))
    return deploy_ini(tmp_path, str(site))


def test_view_checked_chain_says_which_views_are_trusted(
        clean_zope, view_checked_ini, capsys):
    text = explain(capsys, view_checked_ini, '/folder/page/trusted-title')
    assert ('Trusted:       yes (ITrustedView, view-checked chain): runs '
            'on bare objects;') in text
    as_a_new_command()
    data = explain_json(capsys, view_checked_ini,
                        '/folder/page/trusted-title')
    assert data['view']['trusted_as'] == \
        'zope.pipeline.interfaces.ITrustedView'
    as_a_new_command()
    # a sample page (browser:page): proxied, as in the proxied chain;
    # reached by name without @@ (the page's traverser looks the view up
    # on the bare page: it is made again on the proxied one)
    text = explain(capsys, view_checked_ini, '/folder/page/add-comment')
    assert ' '.join(text.split('Trusted:')[1].split()).startswith(
        'no (view-checked chain): made on the security-proxied context '
        'and proxied itself, checked as in the proxied chain')
    as_a_new_command()
    data = explain_json(capsys, view_checked_ini, '/folder/page')
    assert data['view']['trusted_as'] == ''
    assert data['view']['class'] == 'zope.pipeline.sample.views.PageView'


def test_proxied_chain_says_nothing_of_trusted_views(clean_zope, ini,
                                                     capsys):
    data = explain_json(capsys, ini, '/folder/page')
    assert data['view']['trusted_as'] is None
    as_a_new_command()
    assert 'Trusted:' not in explain(capsys, ini, '/folder/page')


# -- explain follows the path that serves

#: Paths of the sample site: pages by name and by default, a form the
#: anonymous principal may not see (401), 404s, a resource (which
#: traverses itself), namespaces, a ``..``.
FOLLOWED_PATHS = ['/folder/page', '/folder/page/', '/folder/page/edit',
                  '/folder/page/@@index.html', '/folder/nope/deeper',
                  '/@@/zope.pipeline.sample/style.css', '/folder',
                  '/folder/page/++attribute++title/x', '/++nonsense++x',
                  '/folder/page/../page/trusted-title']
#: The methods of the traversal policy zope.publisher's loop asks (and
#: those they ask), spied on ``Traversal``, the base of every chain's
#: publication class: what serving and explain call alike.
SPIED = ('callTraversalHooks', 'traverseName', 'publish_traverser',
         'namespace_traverser', 'getDefaultTraversal')
#: What a step of the seam (``_speedups.zope_container``) calls instead of
#: making a stock traverser: the traverser's class.
STOOD_IN_FOR = 'stands_in_for'


def spied_answer(answer):
    if isinstance(answer, tuple):  # getDefaultTraversal's
        return (explaining.describe_object(answer[0]),
                tuple(answer[1] or ()))
    return explaining.describe_object(answer)


@pytest.fixture
def traversal_calls(monkeypatch):
    """Every call of the ``SPIED`` methods: the method, its arguments
    after the object, the object and the answer (or the error)."""
    calls = []

    def spy(name):
        original = getattr(Traversal, name)

        def method(self, request, ob, *args):
            call = [name, args, explaining.describe_object(ob), None]
            calls.append(call)
            try:
                answer = original(self, request, ob, *args)
            except Exception as error:
                call[3] = ('raised', type(error).__name__)
                raise
            call[3] = spied_answer(answer)
            return answer
        monkeypatch.setattr(Traversal, name, method)
    for name in SPIED:
        spy(name)
    original = getattr(Traversal, STOOD_IN_FOR)

    def stands_in_for(self, factory):
        calls.append([STOOD_IN_FOR, (), None,
                      {'class': dotted_name(factory)}])
        return original(self, factory)
    monkeypatch.setattr(Traversal, STOOD_IN_FOR, stands_in_for)
    return calls


def steps_of(calls):
    """(name, from, object, traverser) of each ``traverseName`` call."""
    steps = []
    for method, args, ob, answer in calls:
        if method == 'traverseName':
            steps.append([args[0], ob, None if isinstance(answer, tuple)
                          else answer, None])
        elif method == STOOD_IN_FOR:
            steps[-1][3] = answer['class']
        elif method.endswith('_traverser') and answer['class'] != \
                'builtins.NoneType':
            steps[-1][3] = ('the object itself (IPublishTraverse)'
                            if answer == ob and method == 'publish_traverser'
                            else answer['class'])
    return [tuple(step) for step in steps]


def serve(application, environ):
    """The status ``application`` answers ``environ`` with."""
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)
    body = application(environ, start_response)
    try:
        b''.join(body)
    finally:
        getattr(body, 'close', lambda: None)()
    return statuses[-1]


@pytest.fixture
def speedups_restored():
    was = _speedups.State.installed
    yield
    if was:
        _speedups.install()
    else:
        _speedups.uninstall()


@pytest.mark.parametrize('speedups', ['1', '0'])
@pytest.mark.parametrize('site', ['ini', 'view_checked_ini'])
def test_explain_follows_the_traversal_that_serves(
        clean_zope, request, monkeypatch, traversal_calls, speedups_restored,
        site, speedups):
    monkeypatch.setenv(_speedups.ENVIRONMENT_VARIABLE, speedups)
    application, publisher = load_site_application(
        request.getfixturevalue(site))
    assert _speedups.State.installed is (speedups == '1')
    stood_in_for = []
    try:
        for path in FOLLOWED_PATHS:
            status = serve(application,
                           explaining.site_environ(publisher, path, 'GET'))
            served = traversal_calls[:]
            stood_in_for.extend(call[3]['class'] for call in served
                                if call[0] == STOOD_IN_FOR)
            traversal_calls[:] = []
            data = explaining.explain(publisher, path)
            explained = traversal_calls[:]
            traversal_calls[:] = []
            assert served and explained == served, path
            # each step explain shows is a name the policy was asked for,
            # the object it answered and the traverser it asked
            assert [(step['name'], step['from'], step['object'],
                     step['traverser']) for step in data['steps']] == \
                steps_of(served), path
            if data['status'] is not None:
                assert data['status'] == status, path
        # the seam's steps stood in for the stock traversers, or none
        assert bool(stood_in_for) is (speedups == '1'), stood_in_for
    finally:
        for database in process_databases(publisher):
            database.close()
