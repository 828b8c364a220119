"""Which site is benchmarked, the ini and WSGI scripts its servers load."""

import os
import runpy

import webtest

from benchmarks import scripts  # noqa: E402
from benchmarks import serverside  # noqa: E402
from benchmarks import sites  # noqa: E402

DEPLOY_INI = '''\
[DEFAULT]
shared = yes

[app:main]
use = egg:zope.pipeline#main
site_zcml = site.zcml
open_root.zodb_config = %(here)s/zodb.conf
retry.attempts = 4
debug_headers.enabled = true
where = %(here)s/data
'''


def test_an_app_section_is_read_interpolated_without_defaults(tmp_path):
    ini = tmp_path / 'deploy.ini'
    ini.write_text(DEPLOY_INI)
    section = sites.read_app_section(str(ini))
    assert section['where'] == '%s/data' % tmp_path
    assert 'shared' not in section and 'here' not in section


def test_deploy_settings_lose_storage_and_development_settings(tmp_path):
    ini = tmp_path / 'deploy.ini'
    ini.write_text(DEPLOY_INI)
    site_zcml, settings = sites.settings_from_ini(str(ini))
    assert site_zcml == str(tmp_path / 'site.zcml')
    assert settings == {'retry.attempts': '4',
                        'debug_headers.enabled': 'false',
                        'where': '%s/data' % tmp_path}


def test_the_sample_site_is_read_from_its_deploy_inis(tmp_path):
    (tmp_path / 'deploy.ini').write_text(DEPLOY_INI)
    (tmp_path / 'zodb-sqlite.conf').write_text('')
    site = sites.sample_site(str(tmp_path))
    assert site.name == 'sample'
    assert site.zodb_templates == {
        'sqlite': str(tmp_path / 'zodb-sqlite.conf'), 'mysql': None}
    assert site.settings_for('mysql') == site.settings_for('sqlite')
    (tmp_path / 'deploy-mysql.ini').write_text(
        DEPLOY_INI.replace('retry.attempts = 4', 'retry.attempts = 2'))
    site = sites.sample_site(str(tmp_path))
    assert site.settings_for('mysql')['retry.attempts'] == '2'
    assert site.settings_for('sqlite')['retry.attempts'] == '4'


def test_the_sample_sites_comments_form_is_the_one_it_declares():
    from zope.pipeline import sample
    form = sites.sample_comments_form()
    path, fields = sample.COMMENTS_FORM
    assert form.path == path
    assert form.fields == dict(fields)
    assert form.redirects


def test_the_sample_site_is_chosen_when_installed():
    assert sites.sample_installed()
    assert sites.discover().name == 'sample'
    assert sites.discover('sample').name == 'sample'
    assert sites.discover('minimal').name == 'minimal'


def test_the_minimal_site_has_the_page_and_a_comments_form():
    site = sites.minimal_site()
    assert os.path.exists(site.site_zcml)
    assert site.page_path == '/folder/page'
    assert site.comments.body() == (b'text=A+comment+from+the+benchmark&'
                                    b'author=bench')


def test_the_bench_ini_has_the_site_its_settings_and_the_storage():
    text = scripts.bench_ini('/s/site.zcml', {'retry.attempts': '4',
                                              'x.y': '50%'}, '/tmp/z.conf')
    assert text.splitlines() == [
        '[app:main]', 'use = egg:zope.pipeline#main',
        'site_zcml = /s/site.zcml', 'retry.attempts = 4', 'x.y = 50%%',
        'open_root.zodb_config = /tmp/z.conf']


def test_the_pipeline_script_serves_the_ini_counted(tmp_path, clean_zope):
    site = sites.minimal_site()
    ini = tmp_path / 'bench.ini'
    ini.write_text(scripts.bench_ini(
        site.site_zcml, site.settings_for('sqlite'), ''))
    script = tmp_path / 'app.wsgi'
    script.write_text(scripts.pipeline_script(str(ini), str(tmp_path),
                                              str(tmp_path)))
    application = runpy.run_path(str(script))['application']
    response = webtest.TestApp(application).get('/folder/page')
    assert b'Item number 10' in response.body
    assert serverside.total_counts(str(tmp_path)).s2xx == 1


def test_the_ceiling_script_serves_a_plain_body_counted(tmp_path):
    script = tmp_path / 'ceiling.wsgi'
    script.write_text(scripts.ceiling_script(321, str(tmp_path),
                                             str(tmp_path)))
    application = runpy.run_path(str(script))['application']
    assert len(webtest.TestApp(application).get('/').body) == 321
    assert serverside.total_counts(str(tmp_path)).total == 1


def test_the_minimal_sites_form_stores_a_comment_and_redirects(
        make_testapp):
    site = sites.minimal_site()
    app = make_testapp(site.site_zcml, {'open_root': {
        'populate': 'benchmarks.minimal_site.content.populate'}})
    response = app.post(site.comments.path, site.comments.fields,
                        status=302)  # ab and WebTest speak HTTP/1.0
    assert response.location == 'http://localhost/folder/page'


def test_a_sample_without_comments_form_has_no_write_path(monkeypatch):
    from zope.pipeline import sample
    monkeypatch.delattr(sample, 'COMMENTS_FORM')
    assert sites.sample_comments_form() is None


def test_without_the_sample_the_minimal_site_is_benchmarked(monkeypatch):
    monkeypatch.setattr(sites, 'sample_installed', lambda: False)
    assert sites.discover().name == 'minimal'
