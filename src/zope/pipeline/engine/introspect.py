"""What the publisher will do, per request type, as data and as text."""

import json
import textwrap

from zope.pipeline.engine.contract import contract_of
from zope.pipeline.engine.ordering import where
from zope.pipeline.engine.registry import UNKNOWN_PLACE
from zope.pipeline.security.models import PROXIED
from zope.pipeline.security.models import security_model


def dotted_name(obj):
    module = getattr(obj, '__module__', None)
    name = getattr(obj, '__qualname__', None) or getattr(obj, '__name__', None)
    if module and name:
        return '%s.%s' % (module, name)
    return repr(obj)


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    return repr(value)


def describe_stage(stage, part):
    registration = stage.registration
    factory = registration.factory
    return {
        'name': registration.name,
        'part': part,
        'factory': dotted_name(factory),
        'for': (None if registration.outer
                else registration.for_.__identifier__),
        'settings': _jsonable(stage.settings),
        'before': list(registration.before),
        'after': list(registration.after),
        'registered_at': where(registration.info),
        'passes_through': stage.passes_through,
        **describe_contract(contract_of(registration)),
    }


def describe_contract(contract):
    """The stage contract as data: ``declared`` is False for a factory
    that declares nothing (its keys are then unknown, not empty)."""
    return {
        'reads': list(contract.reads),
        'reads_if_present': list(contract.reads_if_present),
        'writes': list(contract.writes),
        'results': list(contract.results),
        'publishes': contract.publishes,
        'contract_declared': contract.declared,
    }


def describe_origin(registration):
    """What produced a request type and chose its security model: the
    ``<publisher>`` registration of a publication, or the
    ``pipeline:requestFactory`` one (``registered_at``), and the
    ``pipeline:security`` directive that chose its model, if one did;
    for a view-checked one, the interfaces of the views it trusts
    (``securitymodels.TRUSTED_VIEW_INTERFACES``: they run on bare
    objects, every other view stays proxied)."""
    chosen_at = getattr(registration, 'security_chosen_at', None)
    publication = getattr(registration, 'publication', None)
    model = security_model(getattr(registration, 'security', PROXIED))
    return {
        **model.describe(),
        'security_chosen_at': (where(chosen_at) if chosen_at is not None
                               else None),
        'publication': publication,
        'registered_by': ('publisher' if publication
                          else 'pipeline:requestFactory'),
        'registered_at': (where(registration.info)
                          if registration.info is not None
                          else UNKNOWN_PLACE),
    }


def describe(publisher):
    """Return ``{"request_types": {name: {"interfaces", "origin",
    "stages"}}}``.

    This is the shape ``show-pipeline --format json`` prints: per request
    type, the interfaces its requests provide, what produced it and its
    security model (``describe_origin``) and the complete chain, outer
    stages first.  ``describe_request_factories`` says how each request
    type is chosen.
    """
    outer = [describe_stage(stage, 'outer')
             for stage in publisher.outer.stages]
    request_types = {}
    for name, (registration, spec) in publisher.request_types.items():
        chain = publisher.chain_for(spec)
        request_types[name] = {
            'interfaces': [iface.__identifier__ for iface in spec.__iro__],
            'origin': describe_origin(registration),
            'stages': outer + [describe_stage(stage, 'inner')
                               for stage in chain.stages],
        }
    return {'request_types': request_types}


def describe_request_factories(publisher):
    """Return, per request type, the request factory that makes it."""
    return {name: {
        'factory': dotted_name(registration.factory.request_class),
        'methods': list(registration.methods),
        'mimetypes': list(registration.mimetypes),
        'priority': registration.priority,
        'registered_at': where(registration.info),
    } for name, (registration, spec) in publisher.request_types.items()}


def _short(identifier):
    return identifier.rsplit('.', 1)[-1]


def format_text(data, request_type=None, factories=None):
    """Render ``describe()`` data (and, if given, the
    ``describe_request_factories()`` data) as stable, readable text."""
    lines = []
    for name, info in data['request_types'].items():
        if request_type and name != request_type:
            continue
        lines.append('Request type: %s' % name)
        if factories and name in factories:
            lines.extend(_factory_lines(factories[name]))
        lines.append('  interfaces:    %s' % ', '.join(
            _short(iface) for iface in info['interfaces']))
        lines.extend(_origin_lines(info['origin']))
        lines.append('')
        part = None
        for number, stage in enumerate(info['stages'], 1):
            if stage['part'] != part:
                part = stage['part']
                lines.append('  -- %s chain%s --' % (part, (
                    ': the same for every request type' if part == 'outer'
                    else ': chosen by the switch for these interfaces')))
            lines.extend(_stage_lines(number, stage))
        lines.append('')
    return '\n'.join(lines)


def _factory_lines(factory):
    return [
        '  request class: %s' % factory['factory'],
        '  chosen for:    methods %s, mimetypes %s, priority %s (%s)' % (
            ' '.join(factory['methods']), ' '.join(factory['mimetypes']),
            factory['priority'], factory['registered_at'])]


#: The width the text of a stage's description is filled to.
TEXT_WIDTH = 79


def _filled(label, text):
    """``label`` then ``text`` filled to ``TEXT_WIDTH``, its lines after
    the first indented as far as the label."""
    return textwrap.fill(text, TEXT_WIDTH, initial_indent=label,
                         subsequent_indent=' ' * len(label),
                         break_on_hyphens=False, break_long_words=False)


def _origin_lines(origin):
    if origin['publication']:
        made = '  made from:     the publication %s (<publisher> at %s)' % (
            origin['publication'], origin['registered_at'])
    else:
        made = '  made from:     pipeline:requestFactory at %s' % (
            origin['registered_at'])
    security = '  security:      %s' % origin['security']
    if origin['security_chosen_at']:
        security += ' (pipeline:security at %s)' % (
            origin['security_chosen_at'])
    lines = [made, security]
    if origin.get('trusted_views'):
        lines.append(_filled(
            '  trusted views: ', 'views providing %s run on bare objects, '
            'their permission checked once when called; every other view '
            'is made on the security-proxied context, stays proxied and '
            'is checked as in the proxied chain' % ', '.join(
                origin['trusted_views'])))
    return lines


def _stage_lines(number, stage):
    lines = ['  %2d. %s' % (number, stage['name']),
             '      factory:       %s' % stage['factory']]
    if stage['for']:
        lines.append('      for:           %s' % stage['for'])
    lines.append('      registered at: %s' % stage['registered_at'])
    if stage['before'] or stage['after']:
        lines.append('      constraints:   %s' % '; '.join(
            '%s %s' % (relation, ' '.join(stage[relation]))
            for relation in ('before', 'after') if stage[relation]))
    for key, value in sorted(stage['settings'].items()):
        lines.append('      setting:       %s.%s = %s'
                     % (stage['name'], key, json.dumps(value)))
    if stage.get('passes_through'):
        lines.append('      called:        no: it passes every request '
                     'through (what it declares is assembled)')
    return lines + _contract_lines(stage)


def _contract_lines(stage):
    if not stage['contract_declared']:
        return ['      contract:      not declared (not checked)']
    lines = ['      %-15s%s' % (label + ':', ' '.join(stage[key]) or '-')
             for key, label in (('reads', 'reads'),
                                ('reads_if_present', 'may read'),
                                ('writes', 'writes'),
                                ('results', 'results'))
             if stage[key] or key in ('reads', 'writes')]
    if stage['publishes']:
        lines.append('      publishes:     yes')
    return lines
