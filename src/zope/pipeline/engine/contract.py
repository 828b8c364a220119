"""The stage contract: which environ keys a stage reads and writes, checked
when a chain compiles.

A stage factory declares it once, as its ``contract`` attribute (see
``IStageFactory``)::

    class MyStage:
        contract = Contract(reads=(keys.REQUEST_KEY,), writes=(MY_KEY,))

- ``reads``: keys it needs, which a stage before it (or the server) must
  have written;
- ``reads_if_present``: keys it reads when they are there (written by a
  stage further in, on the way back, or by none);
- ``writes``: keys it sets;
- ``results``: of those, the keys an outer stage reads on the way back
  (the published view's name, for metrics): the retry stage copies them
  from each attempt's copy of the environ to the request's own;
- ``publishes``: True for the stage that calls what traversal found (a
  chain without one would answer every request with 404).

Keys are the constants of ``zope.pipeline.environ``; the server's keys
(``environ.from_server``) count as written before the first stage.  A
factory that declares no contract is not checked, and the checks assume
it may write any key and may publish.
"""

import functools
import os

from zope.configuration import config
from zope.configuration import xmlconfig
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import environ as keys
from zope.pipeline.engine.ordering import where

#: How a factory declared its contract before ``Contract``: attributes of
#: these names, which are no longer read (``contract_of`` refuses them).
FORMER_ATTRIBUTES = ('reads', 'reads_if_present', 'writes', 'publishes')


class Contract:
    """What one stage factory declares (``declared`` is False for the
    contract of a factory that declares none: ``UNDECLARED``)."""

    __slots__ = ('reads', 'reads_if_present', 'writes', 'results',
                 'publishes', 'declared')

    def __init__(self, reads=(), reads_if_present=(), writes=(), results=(),
                 publishes=False, declared=True):
        self.reads = tuple(reads)
        self.reads_if_present = tuple(reads_if_present)
        self.writes = tuple(writes)
        self.results = tuple(results)
        self.publishes = bool(publishes)
        self.declared = declared
        unwritten = [key for key in self.results if key not in self.writes]
        if unwritten:
            raise ValueError('results must be keys the stage writes: %s'
                             % ', '.join(unwritten))

    def __repr__(self):
        return '<Contract reads=%r writes=%r>' % (self.reads, self.writes)


#: The contract of a factory that declares none: not checked.
UNDECLARED = Contract(declared=False)


def declared_contract(factory):
    """The ``Contract`` ``factory`` declares, or ``UNDECLARED``."""
    contract = getattr(factory, 'contract', None)
    return contract if isinstance(contract, Contract) else UNDECLARED


def contract_of(registration):
    """The contract of a registered stage's factory; a ConfigurationError
    for a factory that still declares it as separate attributes (which
    would silently go unchecked)."""
    contract = declared_contract(registration.factory)
    if contract is UNDECLARED:
        former = [name for name in FORMER_ATTRIBUTES
                  if hasattr(registration.factory, name)]
        if former:
            raise ConfigurationError(
                "Stage '%s' (registered at %s): its factory declares %s as "
                'attributes of their own; declare its contract once, as '
                '``contract = zope.pipeline.engine.contract.Contract(%s)``.'
                % (
                    registration.name, where(registration.info),
                    ', '.join(former),
                    ', '.join('%s=...' % name for name in former)))
    return contract


def result_keys(registrations):
    """The keys the stages of ``registrations`` declare as results, in
    registration order, each once."""
    found = {}
    for registration in registrations:
        found.update(dict.fromkeys(contract_of(registration).results))
    return tuple(found)


def key_name(key):
    """``'zope.request'`` -> ``"'zope.request' (environ.REQUEST_KEY)"``."""
    for name, value in vars(keys).items():
        if value == key and name.isupper() and isinstance(value, str):
            return "'%s' (zope.pipeline.environ.%s)" % (key, name)
    return "'%s'" % key


def describe_registrations(registrations):
    return ', '.join("'%s' (registered at %s)" % (
        registration.name, where(registration.info))
        for registration in registrations)


#: The standard stages: where to look for a writer the site has none of.
STANDARD_ZCML = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'pipeline.zcml')


@functools.cache
def standard_registrations():
    """The registrations of pipeline.zcml, loaded on their own (it
    registers no component), to name the standard stage that writes a key
    a site's configuration lost (by overriding that stage)."""
    context = config.ConfigurationMachine()
    xmlconfig.registerCommonDirectives(context)
    xmlconfig.file(STANDARD_ZCML, context=context)
    return tuple(context.pipeline_registry.stages)


def writers_of(key, registrations):
    """The registrations that write ``key``: the site's, else the standard
    ones (for a site that overrode or left out the stage)."""
    for candidates in (registrations, standard_registrations()):
        writers = [registration for registration in candidates
                   if key in contract_of(registration).writes]
        if writers:
            return writers
    return []


def missing_writer(what, registration, key, candidates):
    if candidates:
        fix = ('%s would write it: register it before \'%s\' in this '
               'chain, or remove \'%s\'' % (
                   describe_registrations(candidates), registration.name,
                   registration.name))
    else:
        fix = ('no registered stage writes it: register one that does, or '
               "remove '%s'" % registration.name)
    return ConfigurationError(
        "%s: stage '%s' (registered at %s) reads %s, which no stage before "
        'it writes; %s.' % (what, registration.name,
                            where(registration.info), key_name(key), fix))


def check_reads(what, chain, checked, all_registrations):
    """Fail for the first stage of ``checked`` (a tail of ``chain``) that
    reads a key no earlier stage of ``chain`` nor the server writes."""
    written = set()
    unchecked_before = False
    for registration in chain:
        contract = contract_of(registration)
        if registration in checked and not unchecked_before:
            for key in contract.reads:
                if key not in written and not keys.from_server(key):
                    raise missing_writer(
                        what, registration, key,
                        writers_of(key, all_registrations))
        written.update(contract.writes)
        unchecked_before = unchecked_before or not contract.declared


def check_publishes(what, inner, all_registrations):
    """Fail for an inner chain with no stage that publishes."""
    contracts = [contract_of(registration) for registration in inner]
    if any(contract.publishes or not contract.declared
           for contract in contracts):
        return
    publishers = [registration for registration in all_registrations
                  if contract_of(registration).publishes]
    last = "'%s'" % inner[-1].name if inner else 'no inner stage'
    raise ConfigurationError(
        '%s: no stage publishes (declares publishes = True), so the chain '
        'would end after %s and answer every request with 404 Not Found; '
        'register a publishing stage for this request type%s.' % (
            what, last,
            ' (%s publish)' % describe_registrations(publishers)
            if publishers else ''))


def check_chain(what, outer, inner, all_registrations):
    """Check the inner chain ``inner`` run after the outer chain ``outer``:
    ``what`` names the chain ("request type 'browser'")."""
    check_reads(what, list(outer) + list(inner), set(inner),
                all_registrations)
    check_publishes(what, inner, all_registrations)


def check_outer(outer, all_registrations):
    check_reads('The outer chain', outer, set(outer), all_registrations)
