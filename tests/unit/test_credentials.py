"""zope.pipeline.security.credentials: which addresses are loopback, where
database
passwords are read from, and when a known one stops a server."""

import logging

import pytest

from zope.pipeline.security import credentials
from zope.pipeline.zodb.storage import load_database_config

MYSQL_ZCONFIG = '''\
%%import relstorage
<zodb main>
  <relstorage>
    <mysql>
      db zp
      user zp
      %s
    </mysql>
  </relstorage>
</zodb>
'''


@pytest.mark.parametrize('host, loopback', [
    ('127.0.0.1', True), ('127.0.0.2', True), ('::1', True),
    ('[::1]', True), ('localhost', True), ('0.0.0.0', False),
    ('192.0.2.1', False), ('::', False), ('www.example', False),
    (None, False),
])
def test_loopback_addresses(host, loopback):
    assert credentials.is_loopback(host) is loopback


@pytest.mark.parametrize('text, password', [
    ('[client]\npassword="quoted-one"\n', 'quoted-one'),
    ("[client]\npassword = 'single'\n", 'single'),
    ('[client]\npassword=plain\n', 'plain'),
    ('[client]\nuser=zp\n', None),
    ('[mysqld]\npassword=server\n', None),
    ('no section at all', None),
])
def test_the_password_of_an_option_file(tmp_path, text, password):
    path = tmp_path / 'client.cnf'
    path.write_text(text)
    assert credentials.option_file_password(str(path)) == password


def test_a_missing_option_file_has_no_password(tmp_path):
    assert credentials.option_file_password(str(tmp_path / 'none')) is None


def database(tmp_path, line):
    path = tmp_path / 'zodb.conf'
    path.write_text(MYSQL_ZCONFIG % line)
    return str(path), load_database_config(str(path)).database[0]


def test_known_database_passwords_in_the_zconfig_or_its_option_file(
        tmp_path):
    option_file = tmp_path / 'client.cnf'
    option_file.write_text('[client]\npassword="zope-pipeline-sample"\n')
    configs = [database(tmp_path, 'passwd zope-pipeline-sample')]
    assert credentials.databases_with_known_passwords(configs) == \
        [configs[0][0]]
    configs = [database(tmp_path, 'read_default_file %s' % option_file)]
    assert credentials.databases_with_known_passwords(configs) == \
        [configs[0][0]]
    configs = [database(tmp_path, 'passwd a-password-of-our-own')]
    assert credentials.databases_with_known_passwords(configs) == []


def test_a_database_in_memory_or_not_on_mysql_has_no_password(tmp_path):
    path = tmp_path / 'memory.conf'
    path.write_text('<zodb main>\n  <mappingstorage />\n</zodb>\n')
    section = load_database_config(str(path)).database[0]
    assert credentials.mysql_section_of(section) is None
    assert credentials.databases_with_known_passwords(
        [('', None), (str(path), section)]) == []


def test_a_known_database_password_on_a_public_address_is_refused(
        clean_zope, tmp_path, caplog):
    configs = [database(tmp_path, 'passwd zope-pipeline-sample')]
    with caplog.at_level(logging.ERROR, 'zope.pipeline.security.credentials'):
        with pytest.raises(credentials.KnownPasswordError,
                           match='connects with a known password'):
            credentials.check_known_passwords(configs, '192.0.2.1', False,
                                              'site.ini')
    assert 'zope-pipeline init-db site.ini' in caplog.text
    assert credentials.check_known_passwords(configs, '127.0.0.1', False,
                                             'site.ini') == []
    assert credentials.check_known_passwords(
        [database(tmp_path, 'passwd a-password-of-our-own')], None, False,
        'site.ini') == []


def test_a_site_without_virtual_host_trusts_no_proxy_and_is_production():
    class Bare:
        pass
    assert credentials.trusted_proxies(Bare()) is None
    assert credentials.exposures_of(Bare()) == [
        'by an ini that is not a development one (it does not say '
        'development = true)']


def test_a_development_site_on_loopback_is_reached_by_its_user_only():
    assert credentials.reach_of('127.0.0.1', []) is None
    assert credentials.reach_of('::1', ['behind proxies']) == \
        'behind proxies'
    assert credentials.reach_of('0.0.0.0', ['behind proxies']) == \
        'on 0.0.0.0, which is not loopback and behind proxies'


def test_a_demo_or_a_site_without_known_passwords_is_not_kept_local(
        clean_zope):
    def application(environ, start_response):
        return []
    assert credentials.keep_known_passwords_local(application, [], True) \
        is application
    assert credentials.keep_known_passwords_local(application, [], False) \
        is application
