"""Stage settings: from ``<stage>.<key> = value`` lines to typed values."""

from zope.configuration.exceptions import ConfigurationError
from zope.schema import getFieldsInOrder
from zope.schema.interfaces import IBool
from zope.schema.interfaces import ValidationError

#: Keys of the paste.deploy section that are not stage settings.
PUBLISHER_OPTIONS = {
    'site_zcml': 'The ZCML file that configures the site (and its stages).',
    'principals_zcml': 'A ZCML file of principals and their grants, loaded '
                       'after site_zcml (written by `zope-pipeline '
                       'adduser`).',
    'demo': 'true: a demonstration site, which may be served beyond '
            'loopback with known passwords (with a warning).',
    'development': 'true: a development site, which may serve known '
                   'passwords on loopback to the local user (never behind '
                   'trusted proxies, never a request a proxy forwarded); '
                   'it reads a changed template again at its next render.',
    'debugger': 'true (development only): werkzeug\'s interactive debugger '
                'shows the server errors of clients on this machine '
                '(zope.pipeline[debug]).',
    'template_cache': 'A private directory (relative to the ini) keeping '
                      'the view templates Chameleon compiles for the '
                      'processes started later; "memory": none.  Default: '
                      'templates-<uid> in $ZOPE_PIPELINE_RUN_DIR when it '
                      'is set (under mod_wsgi), else memory.',
    'speedups': 'false: leave zope.pipeline._speedups out and run the '
                'stock code of the packages they stand in for (so does '
                'ZOPE_PIPELINE_SPEEDUPS=0 in the environment, which wins).  '
                'Default: true.',
}


def split_settings(local_conf, where='the application section'):
    """Split a paste.deploy section into publisher options and stage settings.

    Returns ``(options, {stage_name: {key: raw_value}})``.
    """
    options, stages = {}, {}
    for key, value in local_conf.items():
        stage, dot, field = key.partition('.')
        if dot:
            stages.setdefault(stage, {})[field] = value
        elif key in PUBLISHER_OPTIONS:
            options[key] = value
        else:
            raise ConfigurationError(
                "Unknown setting '%s' in %s: settings are '<stage>.<key>' or "
                "one of: %s." % (key, where,
                                 ', '.join(sorted(PUBLISHER_OPTIONS))))
    return options, stages


def fields_of(factory):
    schema = getattr(factory, 'settings_schema', None)
    return dict(getFieldsInOrder(schema)) if schema is not None else {}


def check_settings(registry, stage_settings, where='the application section'):
    """Fail on a stage name or key that no registered stage accepts."""
    by_name = {}
    for registration in registry.stages:
        by_name.setdefault(registration.name, {}).update(
            fields_of(registration.factory))
    for stage, values in stage_settings.items():
        if stage not in by_name:
            raise ConfigurationError(
                "Settings for unknown stage '%s' in %s (%s): registered "
                "stages are %s." % (stage, where, ', '.join(
                    '%s.%s' % (stage, key) for key in sorted(values)),
                    ', '.join(sorted(by_name))))
        for key in values:
            if key not in by_name[stage]:
                known = ', '.join(sorted(by_name[stage])) or 'none'
                raise ConfigurationError(
                    "Unknown setting '%s.%s' in %s: stage '%s' accepts: %s."
                    % (stage, key, where, stage, known))


#: How an ini spells a boolean (zope.schema's Bool.fromUnicode would read
#: every other word, a typo included, as False).
BOOLEANS = {'true': True, 'yes': True, 'on': True, '1': True,
            'false': False, 'no': False, 'off': False, '0': False}


def from_text(field, text):
    """Convert one ini value with the field's ``fromUnicode``."""
    if IBool.providedBy(field):
        if text.lower() not in BOOLEANS:
            raise ValueError('expected one of: true, false, yes, no, on, '
                             'off, 1, 0')
        value = BOOLEANS[text.lower()]
        field.validate(value)
        return value
    return field.fromUnicode(text)


def reason(field, error):
    """Say why a value was refused, with the accepted choices if any."""
    if isinstance(error, ValueError) or not isinstance(error,
                                                       ValidationError):
        text = str(error)
    else:
        text = error.doc()
    text = text.rstrip('.')
    vocabulary = getattr(field, 'vocabulary', None)
    if vocabulary is not None:
        text += '; expected one of: %s' % ', '.join(
            str(term.value) for term in vocabulary)
    return text + '.'


def convert(factory, stage, raw, where='the application section'):
    """Return the keyword arguments for ``factory``: every field's value."""
    result = {}
    for key, field in fields_of(factory).items():
        if key not in raw:
            result[key] = field.default
            continue
        value = raw[key]
        try:
            if isinstance(value, str):
                value = from_text(field, value.strip())
            else:
                field.validate(value)
        except (ValidationError, ValueError) as exc:
            raise ConfigurationError(
                "Invalid value %r for '%s.%s' in %s (%s): %s" % (
                    raw[key], stage, key, where, field.title,
                    reason(field, exc))) from None
        result[key] = value
    return result
