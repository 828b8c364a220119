"""Import-time and in-process measurements of the benchmark-only site."""

import json
import os

import pytest

from benchmarks import imports
from benchmarks import inprocess
from benchmarks.sites import minimal_site

IMPORTTIME = '''\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |   _io
import time:       300 |        400 | io
import time:      2000 |       2000 |     zope.interface.interface
import time:       500 |       2500 |   zope.interface
import time:        50 |         50 |       zope.app.foo.bar
import time:      1000 |       3550 | zope.pipeline.app
not an import line
'''


def test_importtime_lines_are_read_with_their_depth():
    records = imports.parse_importtime(IMPORTTIME)
    assert [(r.module, r.self_us, r.cumulative_us, r.depth)
            for r in records][:3] == [
        ('_io', 100, 100, 1), ('io', 300, 400, 0),
        ('zope.interface.interface', 2000, 2000, 2)]
    assert len(records) == 6


def test_modules_belong_to_distributions_namespaces_included():
    assert imports.distribution_of('zope.interface.interface') == \
        'zope.interface'
    assert imports.distribution_of('zope.app.foo.bar') == 'zope.app.foo'
    assert imports.distribution_of('BTrees._OOBTree') == 'BTrees'
    assert imports.distribution_of('zope') == 'zope'


def test_the_summary_ranks_modules_and_distributions_by_own_time():
    summary = imports.summarize(imports.parse_importtime(IMPORTTIME), top=2)
    assert summary['modules'] == 6
    assert summary['total_self_s'] == pytest.approx(0.00395)
    assert [item['module'] for item in summary['top_modules']] == [
        'zope.interface.interface', 'zope.pipeline.app']
    assert summary['top_distributions'][0] == {
        'distribution': 'zope.interface', 'self_ms': 2.5, 'modules': 2,
        'heaviest': 'zope.interface.interface',
        'through': 'zope.pipeline.app > zope.interface > '
                   'zope.interface.interface'}


NESTED = '''\
import time:       100 |        100 |       BTrees._base
import time:      4000 |       4100 |     BTrees
import time:        10 |       4110 |   ZODB.DB
import time:       200 |       4310 | zope.pipeline.zodb.storage
import time:       300 |        300 |       zope.schema._field
import time:        10 |        310 |     zope.schema
import time:        10 |        320 |   zope.configuration.fields
import time:        10 |        330 | zope.configuration
import time:      3000 |       3000 |     a.b.c
import time:         5 |       3005 |   a.b
import time:         5 |       3010 | a
'''


def test_each_module_is_shown_with_the_imports_that_brought_it_in():
    records = imports.parse_importtime(NESTED)
    summary = imports.summarize(records, top=3)
    assert [(item['module'], item['through'])
            for item in summary['top_modules']] == [
        ('BTrees', 'zope.pipeline.zodb.storage > ZODB.DB > BTrees'),
        ('a.b.c', 'ZCML > a > a.b > a.b.c'),
        ('zope.schema._field',
         'ZCML > zope.configuration > ... > zope.schema._field')]
    assert summary['top_distributions'][0]['through'] == \
        'zope.pipeline.zodb.storage > ZODB.DB > BTrees'


def test_imports_at_the_top_have_no_importer():
    records = imports.parse_importtime(IMPORTTIME)
    parents = imports.importers(records)
    assert [records[parent].module if parent is not None else None
            for parent in parents] == [
        'io', None, 'zope.interface', 'zope.pipeline.app',
        'zope.pipeline.app', None]
    assert imports.imported_through(records, parents, 5) == \
        'zope.pipeline.app'


def test_importing_the_minimal_site_is_measured_in_a_fresh_process():
    site = minimal_site()
    result = imports.measure(site.site_zcml, site.settings_for('sqlite'))
    assert result['modules'] > 100
    assert len(result['top_distributions']) == 10
    assert 'zope.pipeline' in [item['distribution']
                               for item in result['top_distributions']]
    assert result['import_s'] > 0 and result['make_app_s'] > 0


def test_a_failing_import_is_reported_with_its_error(tmp_path):
    with pytest.raises(RuntimeError, match='does not exist'):
        imports.measure(str(tmp_path / 'missing.zcml'), {})


def test_the_pipeline_costs_are_measured_per_stage(clean_zope, tmp_path):
    site = minimal_site()
    profile_path = str(tmp_path / 'profile.txt')
    logged = []
    result = inprocess.measure(site.site_zcml, site.settings_for('sqlite'),
                               '/folder/page', iterations=2, batches=3,
                               profile_path=profile_path, log=logged.append)
    stages = {stage['name']: stage for stage in result['stages']}
    # without them, the chain's contract fails when it compiles
    assert stages['create_request']['note'].startswith(
        "required (ConfigurationError: Request type 'browser': stage ")
    assert stages['call']['note'].startswith(
        "required (ConfigurationError: Request type 'browser': no stage "
        "publishes")
    assert stages['call']['cost_us'] is None
    assert stages['fix_relative_links']['note'] == (
        'the body differs without it')
    assert stages['retry']['without_us'] > 0
    assert stages['retry']['outer'] and not stages['traverse']['outer']
    assert result['full_us'] > 0 and result['direct_us'] > 0
    assert result['direct_bytes'] < result['page_bytes']  # no <base> tag
    assert logged == ['batch 1 of 3', 'batch 2 of 3', 'batch 3 of 3']
    with open(profile_path) as profile:
        text = profile.read()
    assert text.startswith('cProfile of 4 requests through the full')
    assert '=== sorted by tottime ===' in text


def test_a_pipeline_without_a_stage_keeps_the_constraints_naming_it(
        clean_zope):
    from zope.pipeline.app import load_zcml
    registry = load_zcml(minimal_site().site_zcml)
    without = inprocess.RegistryWithout(registry, 'retry')
    assert 'retry' not in [stage.name for stage in without.stages]
    assert 'retry' in without.stage_names()
    assert without.request_factories == registry.request_factories


def test_a_page_the_full_pipeline_cannot_serve_stops_the_measure(
        clean_zope):
    site = minimal_site()
    with pytest.raises(SystemExit, match='answered 404'):
        inprocess.Bench(site.site_zcml, site.settings_for('sqlite'),
                        '/no/such/page')


def test_the_in_process_command_prints_json(clean_zope, capsys, tmp_path):
    site = minimal_site()
    assert inprocess.main([
        site.site_zcml, '--settings', json.dumps(site.settings_for('sqlite')),
        '--iterations', '1', '--batches', '1']) == 0
    result = json.loads(capsys.readouterr().out)
    assert result['path'] == '/folder/page'
    assert result['profile'] is None
    assert not os.path.exists(tmp_path / 'profile.txt')


def test_the_unauthenticated_principal_needs_an_authentication_utility(
        clean_zope):
    assert inprocess.unauthenticated_principal() is None


def test_the_modwsgi_environ_is_a_served_requests():
    environ = inprocess.modwsgi_environ('/folder/page')
    minimal = inprocess.make_environ('/folder/page')
    assert set(minimal) < set(environ)
    assert len(environ) == 48
    assert environ['REQUEST_URI'] == environ['PATH_INFO'] == '/folder/page'
    assert environ['wsgi.input_terminated'] is True
    assert isinstance(environ['wsgi.file_wrapper'], type)
    assert environ['wsgi.input'] is not minimal['wsgi.input']


def test_an_app_is_called_with_the_environ_a_factory_makes():
    seen = []

    def app(environ, start_response):
        seen.append(environ)
        start_response('200 OK', [])
        return [b'served']

    assert inprocess.call_app(app, '/x', inprocess.modwsgi_environ) == (
        '200 OK', b'served')
    assert seen[0]['mod_wsgi.path_info'] == '/page'
    assert inprocess.call_app(app, '/x') == ('200 OK', b'served')
    assert 'mod_wsgi.path_info' not in seen[1]
