"""Which site the benchmark serves, and how to write to it.

The sample site (``zope.pipeline.sample``, deployed by ``etc/deploy.ini``
and ``etc/deploy-mysql.ini``) when it is installed; otherwise the
benchmark-only site in ``benchmarks/minimal_site``, which has the same
``/folder/page`` (a page template listing ten item titles) and a comments
form.
"""

import configparser
import dataclasses
import importlib.util
import os

from benchmarks.scripts import PROJECT_ROOT

ETC = os.path.join(PROJECT_ROOT, 'etc')
MINIMAL_SITE = os.path.join(PROJECT_ROOT, 'benchmarks', 'minimal_site')

#: The URL every comparison uses.
PAGE_PATH = '/folder/page'

#: The ini that deploys the sample site on each storage.
DEPLOY_INIS = {'sqlite': 'deploy.ini', 'mysql': 'deploy-mysql.ini'}

#: The ZConfig file of each storage, used as the template of ours.
ZODB_CONFIGS = {'sqlite': 'zodb-sqlite.conf', 'mysql': 'zodb-mysql.conf'}

#: Settings the benchmark replaces or must not copy from a deploy ini.
NOT_COPIED = ('use', 'site_zcml', 'open_root.zodb_config')

#: Development-only settings turned off, so every storage is measured with
#: the same pipeline (deploy.ini enables debug headers, deploy-mysql.ini
#: does not).
PRODUCTION_SETTINGS = {'debug_headers.enabled': 'false'}


@dataclasses.dataclass
class CommentsForm:
    """A form POST that writes to the database."""

    path: str
    fields: dict
    redirects: bool = True

    def body(self):
        from urllib.parse import urlencode
        return urlencode(self.fields).encode('ascii')


@dataclasses.dataclass
class Site:
    name: str
    description: str
    site_zcml: str
    #: {storage: {ini key: value}} without the storage itself.
    app_settings: dict
    #: {storage: ZConfig template path or None}
    zodb_templates: dict
    comments: CommentsForm = None
    page_path: str = PAGE_PATH

    def settings_for(self, storage):
        return dict(self.app_settings.get(storage)
                    or self.app_settings['sqlite'])


def read_app_section(ini, section='app:main'):
    """The interpolated settings of an ini's app section, as a dict."""
    here = os.path.dirname(os.path.abspath(ini))
    parser = configparser.ConfigParser(
        defaults={'here': here, '__file__': os.path.abspath(ini)})
    parser.optionxform = str
    parser.read(ini)
    defaults = set(parser.defaults())
    return {key: value for key, value in parser.items(section)
            if key not in defaults}


def settings_from_ini(ini):
    """(site_zcml, other settings) of a deploy ini."""
    section = read_app_section(ini)
    here = os.path.dirname(os.path.abspath(ini))
    site_zcml = os.path.join(here, section.get('site_zcml', 'site.zcml'))
    settings = {key: value for key, value in section.items()
                if key not in NOT_COPIED}
    for key, value in PRODUCTION_SETTINGS.items():
        if key in settings:
            settings[key] = value
    return site_zcml, settings


def sample_installed():
    return importlib.util.find_spec('zope.pipeline.sample') is not None


def sample_comments_form():
    """The sample site's comments form, as its package declares it."""
    from zope.pipeline import sample
    declared = getattr(sample, 'COMMENTS_FORM', None)
    if declared is None:
        return None
    path, fields = declared
    return CommentsForm(path, dict(fields))


def existing(path):
    return path if os.path.exists(path) else None


def sample_site(etc=ETC):
    site_zcml, settings = settings_from_ini(
        os.path.join(etc, DEPLOY_INIS['sqlite']))
    app_settings = {'sqlite': settings}
    mysql_ini = os.path.join(etc, DEPLOY_INIS['mysql'])
    if os.path.exists(mysql_ini):
        app_settings['mysql'] = settings_from_ini(mysql_ini)[1]
    return Site(
        name='sample',
        description='the sample site (zope.pipeline.sample) as %s deploys '
                    'it' % os.path.relpath(etc, PROJECT_ROOT),
        site_zcml=site_zcml, app_settings=app_settings,
        zodb_templates={storage: existing(os.path.join(etc, name))
                        for storage, name in ZODB_CONFIGS.items()},
        comments=sample_comments_form())


def minimal_site():
    settings = {'open_root.populate':
                'benchmarks.minimal_site.content.populate'}
    return Site(
        name='minimal',
        description='the benchmark-only site in benchmarks/minimal_site '
                    '(zope.pipeline.sample is not installed)',
        site_zcml=os.path.join(MINIMAL_SITE, 'site.zcml'),
        app_settings={'sqlite': settings},
        zodb_templates={'sqlite': None, 'mysql': None},
        comments=CommentsForm(PAGE_PATH + '/@@add-comment',
                              {'text': 'A comment from the benchmark',
                               'author': 'bench'}))


def discover(prefer='auto'):
    """The site to benchmark: 'sample', 'minimal' or 'auto'."""
    if prefer == 'minimal':
        return minimal_site()
    if prefer == 'sample' or sample_installed():
        return sample_site()
    return minimal_site()
