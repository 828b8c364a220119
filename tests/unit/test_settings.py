"""Stage settings from the ini: typed by the stage's schema, and every
mistake (stage, key, value) fails at startup naming the key and the file."""

import textwrap

import pytest
from paste.deploy import loadapp
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.engine.settings import convert
from zope.pipeline.engine.settings import split_settings

from .engine_files import engine_file
from tests.engine.stages import WithSettings


def write_ini(tmp_path, *settings):
    ini = tmp_path / 'site.ini'
    ini.write_text(textwrap.dedent('''\
        [app:main]
        use = egg:zope.pipeline#main
        site_zcml = %s
        ''') % engine_file('settings.zcml') + '\n'.join(settings) + '\n')
    return str(ini)


def settings_stage(publisher):
    registration, spec = publisher.request_types['browser']
    return publisher.chain_for(spec).stages[0]


def load_error(tmp_path, *settings):
    ini = write_ini(tmp_path, *settings)
    with pytest.raises(ConfigurationError) as caught:
        loadapp('config:' + ini)
    return ini, str(caught.value)


def test_ini_values_are_converted_by_the_stage_schema(tmp_path, clean_zope):
    ini = write_ini(tmp_path, 'settings.count = 7', 'settings.debug = Yes',
                    'settings.ratio = 0.25', 'settings.greeting = hi there',
                    'settings.colour = green')
    stage = settings_stage(loadapp('config:' + ini))
    assert stage.app.settings == {'count': 7, 'debug': True, 'ratio': 0.25,
                                  'greeting': 'hi there', 'colour': 'green'}
    assert stage.settings == stage.app.settings


def test_fields_the_ini_leaves_out_get_their_defaults(tmp_path, clean_zope):
    stage = settings_stage(loadapp('config:' + write_ini(tmp_path)))
    assert stage.app.settings == {'count': 3, 'debug': False, 'ratio': 0.5,
                                  'greeting': 'hello', 'colour': 'red'}


@pytest.mark.parametrize('text, value', [
    ('true', True), ('on', True), ('1', True), ('FALSE', False),
    ('no', False), ('off', False), ('0', False)])
def test_booleans_are_read_the_way_ini_files_spell_them(text, value):
    settings = convert(WithSettings, 'settings', {'debug': text})
    assert settings['debug'] is value


def test_unknown_stage_name_fails_naming_the_key_and_the_ini(
        tmp_path, clean_zope):
    ini, message = load_error(tmp_path, 'setings.count = 2')
    assert message == (
        "Settings for unknown stage 'setings' in the application section of "
        "%s (setings.count): registered stages are create_request, respond, "
        "settings." % ini)


def test_unknown_key_of_a_known_stage_fails_listing_what_it_accepts(
        tmp_path, clean_zope):
    ini, message = load_error(tmp_path, 'settings.cuont = 2')
    assert message == (
        "Unknown setting 'settings.cuont' in the application section of %s: "
        "stage 'settings' accepts: colour, count, debug, greeting, ratio."
        % ini)


def test_setting_for_a_stage_without_settings_says_it_accepts_none(
        tmp_path, clean_zope):
    ini, message = load_error(tmp_path, 'respond.fast = true')
    assert message == (
        "Unknown setting 'respond.fast' in the application section of %s: "
        "stage 'respond' accepts: none." % ini)


def test_unknown_key_without_a_dot_fails(tmp_path, clean_zope):
    ini, message = load_error(tmp_path, 'count = 2')
    assert message == (
        "Unknown setting 'count' in the application section of %s: settings "
        "are '<stage>.<key>' or one of: debugger, demo, development, "
        "principals_zcml, "
        "site_zcml, speedups, template_cache." % ini)


@pytest.mark.parametrize('line, expected', [
    ('settings.count = many', "Invalid value 'many' for 'settings.count' in "
     "the application section of {ini} (How many): invalid literal for int() "
     "with base 10: 'many'."),
    ('settings.count = 0', "Invalid value '0' for 'settings.count' in the "
     "application section of {ini} (How many): Value is too small."),
    ('settings.ratio = half', "Invalid value 'half' for 'settings.ratio' in "
     "the application section of {ini} (A ratio): could not convert string "
     "to float: 'half'."),
    ('settings.debug = maybe', "Invalid value 'maybe' for 'settings.debug' "
     "in the application section of {ini} (Debug mode): expected one of: "
     "true, false, yes, no, on, off, 1, 0."),
    ('settings.colour = blue', "Invalid value 'blue' for 'settings.colour' "
     "in the application section of {ini} (A colour): Constraint not "
     "satisfied; expected one of: red, green."),
])
def test_invalid_value_fails_naming_the_key_the_ini_and_the_reason(
        tmp_path, clean_zope, line, expected):
    ini, message = load_error(tmp_path, line)
    assert message == expected.format(ini=ini)


def test_values_given_as_python_objects_are_validated_not_parsed(build):
    publisher = build('settings.zcml', {'settings': {'count': 9}})
    assert settings_stage(publisher).app.settings['count'] == 9
    with pytest.raises(ConfigurationError) as caught:
        build('settings.zcml', {'settings': {'count': 0}})
    assert str(caught.value) == (
        "Invalid value 0 for 'settings.count' in the application settings "
        "(How many): Value is too small.")


def test_split_settings_separates_publisher_options_from_stage_settings():
    options, stages = split_settings({
        'site_zcml': 'site.zcml', 'retry.attempts': '4',
        'retry.backoff': '0', 'metrics.statsd.host': 'x'})
    assert options == {'site_zcml': 'site.zcml'}
    assert stages == {'retry': {'attempts': '4', 'backoff': '0'},
                      'metrics': {'statsd.host': 'x'}}
