"""The sample content keeps its own invariants, whoever calls it."""

import pytest

from zope.pipeline.sample.content import Page
from zope.pipeline.sample.interfaces import IComment
from zope.pipeline.sample.interfaces import InvalidComment


@pytest.mark.parametrize('author, text', [
    ('someone', 'x' * (IComment['text'].max_length + 1)),
    ('x' * (IComment['author'].max_length + 1), 'A comment'),
    ('someone', '   '),
    ({'evil': 'struct'}, 'A comment'),
    ('someone', ['a', 'list']),
    (None, 'A comment'),
    ('someone', b'bytes'),
])
def test_page_refuses_a_comment_outside_its_limits_and_stores_nothing(
        author, text):
    page = Page('A page')
    with pytest.raises(InvalidComment) as caught:
        page.add_comment(author, text)
    assert 'A comment needs a text of at most 2000 characters' in \
        str(caught.value)
    assert page.comment_count() == 0


def test_page_stores_a_comment_stripped_with_anonymous_for_a_blank_author():
    page = Page('A page')
    page.add_comment('  ', '  Hello  ')
    assert page.comment_count() == 1
    comment, = page.recent_comments()
    assert (comment['author'], comment['text']) == ('anonymous', 'Hello')


def test_a_refused_comment_is_a_bad_request():
    from zope.publisher.interfaces import IBadRequest
    assert IBadRequest.providedBy(InvalidComment('too long'))
