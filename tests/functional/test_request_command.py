"""zope-pipeline request INI URL: one request published through the site
of an ini (etc/deploy.ini, its database in a temporary directory) without
a server, its response printed: status, headers with -d, body."""

import pytest
import zope.testing.cleanup

from zope.pipeline.cli import main
from zope.pipeline.zodb import storage

from tests.functional.test_explain import deploy_ini
from tests.functional.test_explain import logging_restored  # noqa: F401


@pytest.fixture
def ini(tmp_path):
    return deploy_ini(tmp_path)


def request(capsys, *args):
    """One command, in a process of its own as it were."""
    storage.close_all()
    zope.testing.cleanup.cleanUp()
    code = main(['request'] + list(args))
    return code, capsys.readouterr().out


def test_a_page_with_its_status_headers_and_body(clean_zope, capsys, ini):
    code, out = request(capsys, ini, '/folder/page', '-d')
    head, _, body = out.partition('\n\n')
    lines = head.splitlines()
    assert code == 0 and lines[0] == '200 Ok'
    assert 'Content-Type: text/html;charset=utf-8' in lines
    # the ini's own stages ran: the debug headers of etc/deploy.ini
    assert 'X-Pipeline-Attempt: 1' in lines
    assert '<title>A page with 10 items</title>' in body


def test_without_display_headers_the_status_and_body(clean_zope, capsys,
                                                      ini):
    code, out = request(capsys, ini, 'http://localhost/folder/page')
    assert out.startswith('200 Ok\n<!DOCTYPE html>')


def test_user_publishes_as_that_principal(clean_zope, capsys, ini):
    code, out = request(capsys, ini, '/folder/page/@@edit')
    assert code == 1 and out.startswith('401 Unauthorized\n')
    code, out = request(capsys, ini, '/folder/page/@@edit', '--user',
                        'admin')
    assert code == 0 and out.startswith('200 Ok\n')


def test_an_unknown_user_is_named(clean_zope, capsys, ini):
    with pytest.raises(SystemExit, match="No principal has the login or "
                       "id 'nobody'"):
        main(['request', ini, '/', '--user', 'nobody'])


def test_data_posts_a_form_that_is_committed(clean_zope, capsys, ini,
                                             tmp_path):
    form = tmp_path / 'form'
    form.write_text('author=cli&text=Posted+from+the+command+line')
    code, out = request(capsys, ini, '/folder/page/@@add-comment',
                        '--data', '@' + str(form), '-d')
    assert code == 0 and out.startswith('303 See Other\n')
    # a redirect with no body says no type: neither a guessed text/plain
    # nor a warning that it was guessed
    lines = out.partition('\n\n')[0].splitlines()
    names = {line.split(':')[0].lower() for line in lines[1:]}
    assert 'Location: http://localhost/folder/page#comments' in lines
    assert not names & {'content-type', 'x-content-type-warning'}
    code, out = request(capsys, ini, '/folder/page')
    assert 'Posted from the command line' in out


def test_headers_and_methods(clean_zope, capsys, ini):
    code, out = request(capsys, ini, '/folder/page', '--method', 'head',
                        '--header', 'Accept-Language: de', '-d')
    assert code == 0 and out.startswith('200 Ok\n')
    assert '<html' not in out
    with pytest.raises(SystemExit, match='NAME:VALUE'):
        main(['request', ini, '/', '--header', 'no colon'])


def test_mistakes_are_one_sentence(clean_zope, tmp_path, ini):
    with pytest.raises(SystemExit, match='does not exist'):
        main(['request', str(tmp_path / 'none.ini'), '/'])
    with pytest.raises(SystemExit, match='Cannot read --data'):
        main(['request', ini, '/', '--data', '@' + str(tmp_path / 'none')])


def test_help_lists_the_request_command(capsys):
    with pytest.raises(SystemExit):
        main(['--help'])
    assert 'request' in capsys.readouterr().out


def test_inline_data_and_content_headers():
    from zope.pipeline.commands.request import header_items
    from zope.pipeline.commands.request import request_body
    assert request_body('a=b&c=d') == b'a=b&c=d'
    assert request_body(None) is None
    assert header_items(['Content-Type: text/plain', 'X-A: 1']) == {
        'CONTENT_TYPE': 'text/plain', 'HTTP_X_A': '1'}
