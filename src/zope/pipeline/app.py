"""Building the publisher: ZCML, settings and the paste.deploy factory."""

import logging
import os
import re
import sys

from zope.configuration import config
from zope.configuration import xmlconfig
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline import _speedups
from zope.pipeline.engine import publications
from zope.pipeline.engine.publisher import Publisher
from zope.pipeline.engine.registry import PipelineRegistry
from zope.pipeline.engine.settings import BOOLEANS
from zope.pipeline.engine.settings import split_settings
from zope.pipeline.security import checkerleak
from zope.pipeline.security import credentials
from zope.pipeline.security.privatefiles import RUN_DIR_VARIABLE
from zope.pipeline.security.privatefiles import UnsafePathError
from zope.pipeline.security.privatefiles import private_directory

logger = logging.getLogger('zope.pipeline.app')

#: The ZCML a site gets when its ini names none.
DEFAULT_SITE_ZCML = os.path.join(os.path.dirname(__file__), 'site.zcml')

#: The standard stages and request types alone, without any component
#: registration (``configure.zcml`` includes it).
PIPELINE_ZCML = os.path.join(os.path.dirname(__file__), 'pipeline.zcml')

#: Every publisher made in this process, newest last (for the CLI).
built = []

#: ``template_cache`` keeping compiled templates in memory only.
IN_MEMORY = 'memory'

#: The ZCML that adds the interactive debugger stage (``debugger = true``
#: in a development ini: zope.pipeline.stages.debugger).
DEBUGGER_ZCML = os.path.join(os.path.dirname(__file__), 'debugger.zcml')

#: The files the configurations loaded in this process were read from,
#: as far as they got (``configuration_files``): what ``serve --reload``
#: watches.
loaded_files = set()


#: How a configuration error names a file: a directive's ``ParserInfo``
#: (``File "PATH", line 4.2-4.39``), a file that does not parse (the SAX
#: parser's ``PATH:LINE:COLUMN: message``).
NAMED_FILE_RES = (re.compile(r'File "([^"]+)", line \d'),
                  re.compile(r'(/[^\s:]+):\d+:\d+:'))


def configuration_files(context, error=None):
    """The files a configuration read, from its public record: the ZCML
    file of each action (``ParserInfo.file``), and, when loading failed
    with ``error``, the files the error names (the directives it passed
    through, the file that does not parse)."""
    files = {getattr(action.get('info'), 'file', None)
             for action in context.actions}
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        for pattern in NAMED_FILE_RES:
            files.update(pattern.findall(str(error)))
        error = error.__cause__ or error.__context__
    return {os.path.abspath(name) for name in files
            if isinstance(name, str) and os.path.isfile(name)}


def load_zcml(site_zcml, principals_zcml=None, more=()):
    """Execute ``site_zcml``, then ``principals_zcml`` if given, then the
    files of ``more`` (in the same configuration, so conflicts between
    them are found); return the PipelineRegistry they filled.  The files
    read are added to ``loaded_files``, those read before an error
    included."""
    return configure(site_zcml, principals_zcml, more)[0]


def configure(site_zcml, principals_zcml=None, more=()):
    """``load_zcml``: (the PipelineRegistry, the principals the ZCML
    defined, ``credentials.defined_principals``)."""
    if not os.path.exists(site_zcml):
        raise ConfigurationError("The site ZCML file %s does not exist."
                                 % site_zcml)
    loaded_files.add(os.path.abspath(site_zcml))
    context = config.ConfigurationMachine()
    xmlconfig.registerCommonDirectives(context)
    try:
        xmlconfig.file(site_zcml, context=context, execute=False)
        for path in (principals_zcml, *more):
            if path:
                loaded_files.add(os.path.abspath(path))
                xmlconfig.file(path, context=context, execute=False)
    except Exception as error:
        loaded_files.update(configuration_files(context, error))
        raise
    loaded_files.update(configuration_files(context))
    principals = credentials.defined_principals(context.actions)
    context.execute_actions()
    registry = getattr(context, 'pipeline_registry', None)
    return (registry if registry is not None else PipelineRegistry(),
            principals)


def use_template_cache(directory):
    """Keep the templates Chameleon compiles in ``directory`` (None: in
    memory), for the whole process (``templates.use_cache_directory``)."""
    if directory is None and \
            'zope.pipeline.publishing.templates' not in sys.modules:
        return  # nothing compiled yet, nothing to forget
    # late: Chameleon, once a site is made
    from zope.pipeline.publishing import templates
    templates.use_cache_directory(directory)


def make_app(site_zcml=DEFAULT_SITE_ZCML, settings=None,
             where_settings='the application settings', principals_zcml=None,
             demo=False, template_cache=None, development=False,
             debugger=False, checked_passwords=None, speedups=True):
    """Load the site's ZCML (and its principals) and return its Publisher.

    ``demo`` and ``development`` are recorded on the publisher
    (``publisher.demo``, ``publisher.development``) for the servers'
    known-password check (zope.pipeline.security.credentials).
    ``template_cache`` is the directory keeping compiled view templates
    for the processes started later (None: memory;
    ``template_cache_directory``).  Template files are read again when
    they change in development only (``templates.check_template_files``).
    ``debugger`` adds werkzeug's interactive debugger (``DEBUGGER_ZCML``);
    a site with it and without ``development`` is refused.
    ``checked_passwords`` is the record of the principals already checked
    for known passwords (``credentials.CheckedPasswords``; None: none).
    ``speedups`` false leaves zope.pipeline._speedups out (so does
    ``ZOPE_PIPELINE_SPEEDUPS=0``, whatever ``speedups`` says).
    """
    if debugger and not development:
        raise ConfigurationError(
            'debugger = true in %s: the interactive debugger runs Python '
            'sent by the browser; it is for a development ini only '
            '(development = true), never in production.' % where_settings)
    _speedups.apply(speedups)
    use_template_cache(template_cache)
    # late: Chameleon, once a site is made
    from zope.pipeline.publishing import templates
    templates.check_template_files(development)
    registry, principals = configure(site_zcml, principals_zcml,
                                     [DEBUGGER_ZCML] if debugger else ())
    publisher = Publisher(registry, settings, where_settings)
    if not development and 'debugger' in publisher.outer.names():
        raise ConfigurationError(
            'The site\'s ZCML registers the debugger stage, which runs '
            'Python sent by the browser, and %s does not say development = '
            'true: it is for development only.' % where_settings)
    publisher.checked_passwords = credentials.CheckedPasswords(
        principals, checked_passwords)
    publisher.demo = demo
    publisher.development = development
    publisher.principals_zcml = principals_zcml
    # Every checker exists now: stop the C checker's leak on them.
    checkerleak.apply()
    built.append(publisher)
    return publisher


def make_publisher_for_loaded_site(settings=None,
                                   pipeline_zcml=PIPELINE_ZCML,
                                   where_settings='the publisher settings',
                                   registry=None, speedups=True):
    """Return a Publisher for a site whose configuration is already loaded.

    For a process that has run its site's ZCML already, without
    zope.pipeline's ``configure.zcml`` (a test layer that loaded an
    application's ``ftesting.zcml``; an application that configures
    itself): running that ZCML again would register its principals and
    subscribers twice.  Only ``pipeline_zcml`` is executed, in a
    configuration machine of its own; it must hold ``pipeline:stage`` and
    ``pipeline:requestFactory`` directives only (the standard
    ``pipeline.zcml`` does).  The components the stages use (traversers,
    views, the security policy, authentication) are the loaded site's.

    Neither the metrics stages (not in ``pipeline.zcml``) nor the C
    checker workaround (``checkerleak.apply``) are part of it.

    ``registry``, when given, is the PipelineRegistry of stages and request
    factories to compile instead (the site's own, as its loaded
    configuration registered them, its ``<publisher>`` registrations made
    request types: ``zope.pipeline.testing``).  Otherwise the loaded
    site's ``<publisher>`` registrations, if any, become request types of
    ``pipeline_zcml``'s (``zope.pipeline.engine.publications``).  ``speedups``
    as for ``make_app``.
    """
    _speedups.apply(speedups)
    if registry is None:
        registry = load_zcml(pipeline_zcml)
        publications.apply(registry, publications.from_global_registry())
    return Publisher(registry, settings, where_settings)


def principals_file(here, options, where):
    """The ``principals_zcml`` file named by the ini, or None (a missing
    file is logged: nobody can log in as administrator then)."""
    name = options.get('principals_zcml', '').strip()
    if not name:
        return None
    path = os.path.normpath(os.path.join(here, name))
    if not os.path.exists(path):
        logger.warning(
            'The principals file %s (principals_zcml in %s) does not exist: '
            'the site has no administrator.  Create one with '
            '`zope-pipeline adduser INI --login LOGIN`.', path, where)
        return None
    return path


def demo_option(options, where, name='demo', default='false'):
    """The boolean publisher option ``name``."""
    text = options.get(name, default).strip().lower()
    if text not in BOOLEANS:
        raise ConfigurationError(
            "%s = %r in %s: expected one of: true, false, yes, no, on, "
            "off, 1, 0." % (name, options[name], where))
    return BOOLEANS[text]


def template_cache_directory(here, options, where):
    """The directory ``template_cache`` names (relative to ``here``),
    created private or checked to be; None for ``memory``.  Unset, it is
    ``templates-<uid>`` in the server's run directory
    (``$ZOPE_PIPELINE_RUN_DIR``) when the environment names one, and
    memory when it does not or the directory cannot be used there
    (logged)."""
    name = options.get('template_cache', '').strip()
    if name == IN_MEMORY:
        return None
    if name:
        path = os.path.normpath(os.path.join(here, name))
        try:
            return private_directory(path)
        except (OSError, UnsafePathError) as error:
            raise ConfigurationError(
                'template_cache = %s in %s cannot keep compiled templates: '
                '%s  (Name a directory private to the server\'s user, or '
                '"%s".)' % (name, where, error, IN_MEMORY)) from None
    run_dir = os.environ.get(RUN_DIR_VARIABLE, '').strip()
    if not run_dir:
        return None
    path = os.path.join(run_dir, 'templates-%d' % os.geteuid())
    try:
        return private_directory(path, parents=True)
    except (OSError, UnsafePathError) as error:
        logger.warning('Compiled templates are kept in memory: %s cannot '
                       'keep them (%s).  Set template_cache in %s.',
                       path, error, where)
        return None


def app_factory(global_conf, **local_conf):
    """paste.deploy ``app_factory``: ``use = egg:zope.pipeline#main``.

    ``site_zcml`` (relative to the ini's directory) names the site's ZCML;
    ``principals_zcml`` a ZCML file of principals loaded after it (see
    ``zope-pipeline adduser``); ``demo = true`` allows known passwords
    beyond loopback, ``development = true`` on loopback
    (zope.pipeline.security.credentials); ``debugger = true`` (development
    only)
    werkzeug's interactive debugger; ``template_cache`` keeps
    compiled templates (``template_cache_directory``); ``speedups =
    false`` leaves zope.pipeline._speedups out; every other key is
    a stage setting, ``<stage>.<key> = value``.
    """
    ini = global_conf.get('__file__')
    where_settings = ('the application section of %s' % ini if ini
                      else 'the application section')
    options, settings = split_settings(local_conf, where_settings)
    here = global_conf.get('here') or os.getcwd()
    site_zcml = os.path.join(here, options.get('site_zcml',
                                               DEFAULT_SITE_ZCML))
    principals = principals_file(here, options, where_settings)
    checked = credentials.checked_passwords_path(ini, principals) \
        if ini else None
    return make_app(site_zcml, settings, where_settings, principals,
                    demo_option(options, where_settings),
                    template_cache_directory(here, options, where_settings),
                    demo_option(options, where_settings, 'development'),
                    demo_option(options, where_settings, 'debugger'),
                    checked,
                    demo_option(options, where_settings, 'speedups',
                                default='true'))
