"""The worked example of docs/configuration.md, "Turning a publication into
stages" (docs/examples/publication/cachedpages): the classic publication
is refused at startup; its stage does the same work."""

import os
import sys

import pytest

from fixtures.testing import CLASSIC_ZCML
from fixtures.testing import classic_settings
from tests.conftest import ROOT

EXAMPLE = os.path.join(ROOT, 'docs', 'examples', 'publication')

SITE = '''<configure xmlns="http://namespaces.zope.org/zope">
  <include file="%s" />
  %s
</configure>
'''


@pytest.fixture
def example(monkeypatch, tmp_path):
    """Write a site of the classic fixture plus ``zcml``; return its
    path."""
    monkeypatch.syspath_prepend(EXAMPLE)

    def site(zcml):
        path = tmp_path / 'site.zcml'
        path.write_text(SITE % (CLASSIC_ZCML, zcml))
        return str(path)
    yield site
    for name in [name for name in sys.modules
                 if name.startswith('cachedpages')]:
        del sys.modules[name]


def test_classic_publication_of_the_example_is_refused_at_startup(
        example, make_testapp):
    pytest.importorskip('zope.app.publication')
    from zope.pipeline.engine.publications import PublicationError
    site = example(
        '<include package="zope.app.publication" file="meta.zcml" />\n'
        '<publisher name="BROWSER" factory="cachedpages.publication.'
        'CachedPagesFactory" methods="GET POST HEAD" priority="11" />')
    with pytest.raises(PublicationError) as raised:
        make_testapp(site, classic_settings())
    assert 'cachedpages.publication.CachedPagesPublication of <publisher ' \
        'name="BROWSER"' in str(raised.value)
    assert 'overrides afterCall of zope.app.publication.browser.' \
        'BrowserPublication' in str(raised.value)


@pytest.fixture
def app(example, make_testapp):
    site = example('<include package="cachedpages" />')
    return make_testapp(site, classic_settings())


def test_stage_of_the_example_marks_pages_that_set_no_cache_control(app):
    response = app.get('/folder/doc')
    assert response.headers['Cache-Control'] == 'private, max-age=60'


def test_stage_of_the_example_leaves_error_pages_alone(app):
    response = app.get('/folder/nothing', status=404)
    assert response.headers.get('Cache-Control') != 'private, max-age=60'


def test_stage_of_the_example_takes_its_value_from_the_settings(
        example, make_testapp):
    site = example('<include package="cachedpages" />')
    app = make_testapp(site, classic_settings(
        cache_control={'value': 'no-store'}))
    assert app.get('/folder/doc').headers['Cache-Control'] == 'no-store'
