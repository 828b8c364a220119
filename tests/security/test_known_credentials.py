"""Known credentials: the production configuration carries none, passwords
never travel on a command line, and no server offers a known password
beyond loopback unless its ini says it is a demonstration."""

import base64
import configparser
import os

import pytest
import webtest

from zope.pipeline.cli import build_parser
from zope.pipeline.cli import main as zope_pipeline
from zope.pipeline.commands import init_db
from zope.pipeline.commands import serve
from zope.pipeline.security.credentials import KNOWN_PASSWORDS
from zope.pipeline.security.credentials import database_passwords
from zope.pipeline.security.credentials import mysql_section_of
from zope.pipeline.zodb.storage import load_database_config

from tests.conftest import ROOT

PRODUCTION_INI = os.path.join(ROOT, 'etc', 'deploy-mysql.ini')
DEVELOPMENT_INI = os.path.join(ROOT, 'etc', 'deploy.ini')
POPULATE = 'zope.pipeline.sample.content.populate'


def basic(login, password):
    token = base64.b64encode(('%s:%s' % (login, password)).encode())
    return {'HTTP_AUTHORIZATION': 'Basic ' + token.decode()}


def production_site():
    """etc/deploy-mysql.ini's site ZCML and principals file, on a
    database in memory."""
    from zope.pipeline.app import make_app
    from zope.pipeline.app import principals_file
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(PRODUCTION_INI)
    options = dict(parser.items('app:main'))
    here = os.path.dirname(PRODUCTION_INI)
    publisher = make_app(os.path.join(here, options['site_zcml']),
                         {'open_root': {'populate': POPULATE}},
                         principals_zcml=principals_file(here, options, ''))
    return webtest.TestApp(publisher,
                           extra_environ={'REMOTE_ADDR': '127.0.0.1'})


def test_admin_admin_cannot_edit_the_page_of_the_production_site(
        clean_zope):
    app = production_site()
    response = app.get('/folder/page/@@edit',
                       extra_environ=basic('admin', 'admin'), status='*')
    assert response.status_int == 401


def test_the_production_zconfig_ships_no_known_database_password():
    path = os.path.join(ROOT, 'etc', 'zodb-mysql.conf')
    section = load_database_config(path).database[0]
    mysql = mysql_section_of(section)
    assert not mysql.passwd
    assert not set(database_passwords(mysql)) & set(KNOWN_PASSWORDS)


def test_no_command_takes_a_password_as_an_argument():
    """ps shows every user the command lines of every process."""
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    offending = []
    for name, subparser in commands.items():
        for action in subparser._actions:
            takes_value = action.nargs != 0
            if 'password' in action.dest and takes_value and \
                    not action.dest.endswith('_file'):
                offending.append('%s %s' % (name, action.option_strings))
    assert offending == []


def test_init_db_never_lets_the_database_user_in_from_any_host():
    remote = {'db': 'zp', 'user': 'zp', 'passwd': None, 'host': 'db.example',
              'port': None, 'unix_socket': None, 'read_default_file': None,
              'config': 'zodb.conf'}

    class Connection:
        def cursor(self):
            return self

        def execute(self, sql, parameters=None):
            pass

        def fetchone(self):
            return ('root@app1.example',)

        def close(self):
            pass

    args = build_parser().parse_args(['init-db', PRODUCTION_INI])
    assert init_db.client_hosts(args, remote, Connection()) == \
        ['app1.example']
    args = build_parser().parse_args(['init-db', PRODUCTION_INI,
                                      '--client-host', '%'])
    with pytest.raises(SystemExit, match='wildcard'):
        init_db.client_hosts(args, remote, Connection())


@pytest.fixture
def saved_logging():
    """The ini's logging sections change the root and zope.pipeline
    loggers (a handler on the stderr pytest captures for this test only):
    put them back."""
    import logging
    loggers = [logging.getLogger(), logging.getLogger('zope.pipeline')]
    saved = [(logger.level, list(logger.handlers), logger.propagate)
             for logger in loggers]
    yield
    for logger, (level, handlers, propagate) in zip(loggers, saved):
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate = propagate


@pytest.fixture
def no_waitress(monkeypatch, saved_logging):
    """waitress.serve recorded instead of serving."""
    import waitress
    served = []
    monkeypatch.setattr(waitress, 'serve',
                        lambda application, **options: served.append(
                            options))
    monkeypatch.setattr(serve, 'open_databases', lambda publisher: None)
    # As the user running the tests (root would become www-data).
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    return served


def test_the_sample_admin_is_not_served_on_a_public_address(
        clean_zope, no_waitress):
    with pytest.raises(SystemExit) as caught:
        zope_pipeline(['serve', DEVELOPMENT_INI, '--host', '0.0.0.0'])
    assert "the administrator 'admin' has a known password" in \
        str(caught.value)
    assert 'demo = true' in str(caught.value)
    assert no_waitress == []


def test_the_sample_admin_is_served_on_loopback(clean_zope, no_waitress):
    assert zope_pipeline(['serve', DEVELOPMENT_INI, '--host',
                          '127.0.0.1']) == 0
    assert no_waitress[0]['host'] == '127.0.0.1'


def test_a_demo_site_with_the_sample_admin_starts_with_a_warning(
        clean_zope, no_waitress, tmp_path, capsys):
    ini = tmp_path / 'demo.ini'
    text = open(DEVELOPMENT_INI).read().replace(
        'site_zcml = site-dev.zcml', 'site_zcml = %s\ndemo = true'
        % os.path.join(ROOT, 'etc', 'site-dev.zcml')).replace(
        '%(here)s/zodb-sqlite.conf', '')
    ini.write_text(text)
    # (The ini's logging sections send the warning to stderr.)
    assert zope_pipeline(['serve', str(ini), '--host', '0.0.0.0']) == 0
    assert no_waitress[0]['host'] == '0.0.0.0'
    assert "WARNING [zope.pipeline.security.credentials] pid %d: " \
        "Demonstration " \
        "site (demo = true): %s would be served on 0.0.0.0" % (
            os.getpid(), ini) in capsys.readouterr().err


def development_copy(tmp_path, extra='', development=True):
    """etc/deploy.ini (the sample administrator admin/admin) on a
    database in memory; without its ``development = true`` it stands for
    a production ini that carries a known password."""
    text = open(DEVELOPMENT_INI).read().replace(
        'site_zcml = site-dev.zcml', 'site_zcml = %s\n%s'
        % (os.path.join(ROOT, 'etc', 'site-dev.zcml'), extra)).replace(
        '%(here)s/zodb-sqlite.conf', '')
    if not development:
        text = text.replace('development = true\n', '')
    ini = tmp_path / 'site.ini'
    ini.write_text(text)
    return str(ini)


@pytest.fixture
def served_apps(monkeypatch, saved_logging):
    """The applications serve would give waitress, instead of serving."""
    served = []
    monkeypatch.setattr(serve, 'run_as', lambda user, group: (None, None))
    monkeypatch.setattr(serve, 'serve_waitress',
                        lambda application, *args, **kwargs:
                        served.append(application) or 0)
    return served


def test_known_password_refused_behind_trusted_proxy(
        clean_zope, served_apps, tmp_path):
    """A local nginx in front of a loopback waitress serves the internet:
    trusted_proxies says so."""
    ini = development_copy(
        tmp_path, 'virtual_host.trusted_proxies = 127.0.0.1 ::1')
    with pytest.raises(SystemExit) as caught:
        zope_pipeline(['serve', ini, '--host', '127.0.0.1'])
    assert 'behind proxies (virtual_host.trusted_proxies = 127.0.0.1/32 ' \
        '::1/128)' in str(caught.value)
    assert "the administrator 'admin' has a known password" in \
        str(caught.value)
    assert served_apps == []


def test_known_password_refused_by_a_production_ini_on_loopback(
        clean_zope, served_apps, tmp_path):
    ini = development_copy(tmp_path, development=False)
    with pytest.raises(SystemExit) as caught:
        zope_pipeline(['serve', ini, '--host', '127.0.0.1'])
    assert 'not a development one' in str(caught.value)
    assert served_apps == []


@pytest.mark.parametrize('header', [
    {'HTTP_X_FORWARDED_FOR': '198.51.100.7'},
    {'HTTP_FORWARDED': 'for=198.51.100.7'},
    {'HTTP_X_REAL_IP': '198.51.100.7'},
    {'HTTP_VIA': '1.1 proxy'},
    {'REMOTE_ADDR': '192.0.2.8'},
])
def test_known_password_refused_to_a_request_a_local_proxy_forwarded(
        clean_zope, served_apps, tmp_path, header):
    """A proxy nobody declared (no trusted_proxies) in front of the
    development site: what it forwards never reaches admin/admin."""
    assert zope_pipeline(['serve', development_copy(tmp_path), '--host',
                          '127.0.0.1']) == 0
    app = webtest.TestApp(served_apps[0],
                          extra_environ={'REMOTE_ADDR': '127.0.0.1'})
    edit = '/folder/page/@@edit'
    assert app.get(edit, extra_environ=basic('admin', 'admin'),
                   status='*').status_int == 200
    response = app.get(edit, extra_environ=dict(basic('admin', 'admin'),
                                                **header), status='*')
    assert response.status_int == 403
    assert 'known passwords' in response.text
