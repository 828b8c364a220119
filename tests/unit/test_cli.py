"""The zope-pipeline command and its show-pipeline subcommand."""

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from zope.pipeline.cli import build_parser
from zope.pipeline.cli import main

from .engine_files import ROOT
from .engine_files import at
from .engine_files import engine_file

STAGE_KEYS = {'name', 'part', 'factory', 'settings', 'before', 'after',
              'registered_at', 'reads', 'reads_if_present', 'writes',
              'publishes', 'contract_declared'}


def show(capsys, *args):
    assert main(['show-pipeline'] + list(args)) == 0
    return capsys.readouterr().out


def chains_in(text):
    """{request type: {part: [stage names]}} from the text output."""
    chains, current, part = {}, None, None
    for line in text.splitlines():
        if line.startswith('Request type: '):
            current = chains[line.split(': ', 1)[1]] = {}
        part_match = re.match(r'^  -- (outer|inner) chain', line)
        if part_match:
            part = current.setdefault(part_match.group(1), [])
        stage_match = re.match(r'^ +\d+\. (\S+)$', line)
        if stage_match:
            part.append(stage_match.group(1))
    return chains


def test_text_lists_a_different_chain_for_each_request_type(
        clean_zope, capsys):
    chains = chains_in(show(capsys, engine_file('main.ini')))
    assert list(chains) == ['browser', 'xmlrpc', 'http']
    browser, xmlrpc, http = chains.values()
    assert browser['outer'] == xmlrpc['outer'] == http['outer']
    assert 'create_request' in browser['outer']
    assert browser['inner'] != xmlrpc['inner']
    assert browser['inner'] != http['inner']
    assert xmlrpc['inner'] != http['inner']


def test_text_shows_each_stage_with_factory_place_and_settings(
        clean_zope, capsys):
    text = show(capsys, engine_file('settings.ini'), '--request-type', 'http')
    assert text.startswith('Request type: http\n'
                           '  request class: '
                           'zope.pipeline.engine.factories.HTTPRequest\n'
                           '  chosen for:    methods *, mimetypes *, '
                           'priority 0 (%s)\n' % at('types.zcml', '"http"'))
    assert ('  -- outer chain: the same for every request type --\n'
            '   1. create_request\n'
            '      factory:       zope.pipeline.stages.create_request.'
            'CreateRequestStage\n'
            '      registered at: %s\n' % at('types.zcml', 'create_request')
            ) in text
    assert ('  -- inner chain: chosen by the switch for these interfaces --\n'
            '   2. settings\n'
            '      factory:       tests.engine.stages.WithSettings\n'
            '      for:           zope.publisher.interfaces.IRequest\n'
            '      registered at: %s\n'
            '      setting:       settings.colour = "green"\n'
            '      setting:       settings.count = 5\n'
            '      setting:       settings.debug = false\n'
            '      setting:       settings.greeting = "hello"\n'
            '      setting:       settings.ratio = 0.5\n'
            '      reads:         -\n'
            '      may read:      tests.trail\n'
            '      writes:        tests.trail\n'
            '   3. respond\n'
            '      factory:       tests.engine.stages.Respond\n'
            '      for:           zope.publisher.interfaces.IRequest\n'
            '      registered at: %s\n'
            '      constraints:   after settings\n'
            '      contract:      not declared (not checked)\n' % (
                at('settings.zcml', 'name="settings"'),
                at('settings.zcml', 'name="respond"'))) in text
    assert 'Request type: browser' not in text


def test_text_marks_the_specific_stage_of_a_request_type(clean_zope, capsys):
    text = show(capsys, engine_file('specific.ini'), '--request-type',
                'xmlrpc')
    assert ('   2. call\n'
            '      factory:       tests.engine.stages.ForXMLRPC\n'
            '      for:           zope.publisher.interfaces.xmlrpc.'
            'IXMLRPCRequest\n'
            '      registered at: %s\n' % at('specific.zcml', 'ForXMLRPC')
            ) in text


def test_json_has_the_documented_shape(clean_zope, capsys):
    data = json.loads(show(capsys, engine_file('main.ini'), '--format',
                           'json'))
    assert list(data) == ['request_types']
    assert list(data['request_types']) == ['browser', 'xmlrpc', 'http']
    for request_type in data['request_types'].values():
        assert set(request_type) == {'interfaces', 'origin', 'stages'}
        origin = request_type['origin']
        assert origin['security'] == 'proxied'
        assert origin['registered_by'] == 'pipeline:requestFactory'
        assert origin['publication'] is None
        assert origin['security_chosen_at'] is None
        assert re.match(r'^/.+\.zcml:\d+$', origin['registered_at'])
        assert all(isinstance(name, str) and '.' in name
                   for name in request_type['interfaces'])
        parts = [stage['part'] for stage in request_type['stages']]
        assert parts == sorted(parts, key=['outer', 'inner'].index)
        assert {'outer', 'inner'} == set(parts)
        for stage in request_type['stages']:
            assert STAGE_KEYS <= set(stage)
            assert isinstance(stage['settings'], dict)
            assert isinstance(stage['before'], list)
            assert isinstance(stage['after'], list)
            assert re.match(r'^/.+\.zcml:\d+$', stage['registered_at'])
    browser = data['request_types']['browser']
    assert 'zope.publisher.interfaces.browser.IBrowserRequest' in (
        browser['interfaces'])
    retry = [stage for stage in browser['stages'] if stage['name'] == 'retry']
    assert retry[0]['settings']['attempts'] == 2


def test_json_lists_the_contract_of_every_standard_stage(clean_zope,
                                                       capsys):
    data = json.loads(show(capsys, os.path.join(ROOT, 'etc', 'deploy.ini'),
                           '--format', 'json'))
    assert {'browser', 'xmlrpc', 'http'} <= set(data['request_types'])
    for request_type in data['request_types'].values():
        stages = {stage['name']: stage for stage in request_type['stages']}
        assert all(stage['contract_declared'] for stage in stages.values())
        assert stages['open_root']['writes'] == [
            'zope.pipeline.connection', 'zope.pipeline.transaction_manager',
            'zope.pipeline.root', 'zope.pipeline.root_name']
        assert stages['traverse']['reads'] == ['zope.request',
                                               'zope.pipeline.root']
        assert [name for name, stage in stages.items()
                if stage['publishes']] == ['call']


def test_json_for_one_request_type(clean_zope, capsys):
    data = json.loads(show(capsys, engine_file('specific.ini'), '--format',
                           'json', '--request-type', 'xmlrpc'))
    assert list(data['request_types']) == ['xmlrpc']
    stages = data['request_types']['xmlrpc']['stages']
    assert [(stage['name'], stage['part'], stage['factory'])
            for stage in stages] == [
        ('create_request', 'outer',
         'zope.pipeline.stages.create_request.CreateRequestStage'),
        ('call', 'inner', 'tests.engine.stages.ForXMLRPC'),
        ('respond', 'inner', 'tests.engine.stages.Respond')]
    assert stages[2]['after'] == ['call']
    assert stages[1]['registered_at'] == at('specific.zcml', 'ForXMLRPC')


def test_unknown_request_type_exits_with_a_message(clean_zope):
    with pytest.raises(SystemExit) as caught:
        main(['show-pipeline', engine_file('specific.ini'),
              '--request-type', 'soap'])
    assert str(caught.value) == (
        "Unknown request type 'soap'; known: browser, xmlrpc, http.")


def test_configuration_error_is_a_message_and_exit_status_1(
        tmp_path, clean_zope, capsys):
    ini = tmp_path / 'broken.ini'
    ini.write_text('[app:main]\nuse = egg:zope.pipeline#main\n'
                   'site_zcml = %s\n' % engine_file('cycle.zcml'))
    assert main(['show-pipeline', str(ini)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ''
    assert captured.err.startswith(
        "zope-pipeline show-pipeline: Cannot order the stages for request "
        "type 'browser': they form a cycle")


def test_subcommand_is_required(capsys):
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert 'COMMAND' in capsys.readouterr().err


def test_console_script_help_lists_show_pipeline():
    script = console_script()
    assert script, 'the zope-pipeline console script is not installed'
    done = subprocess.run([script, '--help'], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('usage: zope-pipeline')
    assert 'show-pipeline' in done.stdout


def test_show_pipeline_help_describes_its_options(capsys):
    with pytest.raises(SystemExit) as caught:
        main(['show-pipeline', '--help'])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert '--request-type TYPE' in out
    assert '--format {text,json}' in out


def console_script():
    script = os.path.join(os.path.dirname(sys.executable), 'zope-pipeline')
    return script if os.path.exists(script) else shutil.which(
        'zope-pipeline')


#: A package a user's project may well have, which writes a marker file
#: when anything imports it.
MARKER_PACKAGE = '''\
import os
with open(os.path.join(%r, 'imported-' + __name__), 'w') as marker:
    marker.write(__name__)
'''


def test_the_command_imports_nothing_from_the_current_directory(tmp_path):
    project = tmp_path / 'project'
    for package in ('benchmarks', 'commands', 'tests'):
        (project / package).mkdir(parents=True)
        for module in ('__init__.py', 'cli.py', '__main__.py'):
            (project / package / module).write_text(
                MARKER_PACKAGE % str(tmp_path))
    ini = os.path.join(ROOT, 'etc', 'deploy.ini')
    for arguments in (['--help'], ['--version'], ['serve', '--help'],
                      ['show-pipeline', ini, '--request-type', 'http']):
        done = subprocess.run([console_script()] + arguments, cwd=project,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ['project']


def test_version_is_the_installed_distributions(capsys):
    with pytest.raises(SystemExit) as caught:
        main(['--version'])
    assert caught.value.code == 0
    assert capsys.readouterr().out == 'zope-pipeline %s\n' % (
        importlib.metadata.version('zope.pipeline'))


def subcommand_parsers():
    parser = build_parser()
    (choices,) = [action.choices for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction)]
    return parser, choices


#: reST or Markdown markup, and the names of zope.pipeline's functions,
#: in a help text (what a user types, transaction_manager.commit(), is
#: named after the object it is called on).
MARKUP_RE = re.compile(r'``|`[^`]+`_?|:[a-z]+:`|(?<![.\w])[a-z_]+\(\)|\*\*')


def test_every_option_has_plain_help_text():
    parser, subparsers = subcommand_parsers()
    assert set(subparsers) >= {'show-pipeline', 'serve', 'init-db',
                               'adduser'}
    for name, subparser in [('', parser)] + sorted(subparsers.items()):
        texts = [subparser.description or '']
        for action in subparser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (
                name, action.option_strings or action.dest)
            texts.append(action.help)
        for text in texts:
            assert not MARKUP_RE.search(text), (name, text)


def test_descriptions_keep_their_paragraphs(capsys):
    with pytest.raises(SystemExit):
        main(['serve', '--help'])
    out = capsys.readouterr().out
    assert ('\n\nTouching the generated script '
            '(<server root>/application.wsgi)') in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_readme_names_every_command():
    with open(os.path.join(ROOT, 'README.md')) as readme:
        text = readme.read()
    sentence = re.search(r'`zope-pipeline --help` lists the commands: '
                         r'(.*?)\.\n\n', text, re.DOTALL).group(1)
    named = re.findall(r'`([a-z-]+)`', sentence)
    assert named == list(subcommand_parsers()[1])


def test_reload_watches_the_projects_zcml_and_templates_not_libraries(
        tmp_path, monkeypatch):
    import sysconfig

    from zope.pipeline.commands import serve
    project = tmp_path / 'src' / 'mysite'
    project.mkdir(parents=True)
    library = tmp_path / 'lib'
    library.mkdir()
    monkeypatch.setattr(sysconfig, 'get_paths', lambda: {
        'purelib': str(library), 'platlib': str(library),
        'stdlib': str(library)})
    files = [str(project / 'configure.zcml'), str(library / 'meta.zcml')]
    assert serve.project_patterns(files, ('**/*.pt',)) == [
        str(project / '**' / '*.pt')]


def test_reload_watches_templates_only_outside_development(monkeypatch):
    import hupper

    from zope.pipeline.commands import serve
    watched = []

    class Reloader:
        def watch_files(self, files):
            watched.append(files)

    monkeypatch.setattr(hupper, 'get_reloader', Reloader)
    monkeypatch.setattr('zope.pipeline.app.loaded_files',
                        {os.path.join(os.getcwd(), 'site.zcml')})
    serve.watch_configuration(development=True)
    serve.watch_configuration(development=False)
    development, production = watched
    assert not [name for name in development if name.endswith('.pt')]
    assert [name for name in production if name.endswith('**/*.pt')]
