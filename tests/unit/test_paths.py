"""Dot segments, resolved once for virtual_host and traverse."""

import pytest
from zope.publisher.interfaces import IBadRequest

from zope.pipeline.http.paths import ClimbsAboveRoot
from zope.pipeline.http.paths import has_dot_segments
from zope.pipeline.http.paths import resolve


@pytest.mark.parametrize('path, names', [
    ('/', []), ('', []), ('/a/b/', ['a', 'b']), ('/a/./b', ['a', 'b']),
    ('/a/../b', ['b']), ('//a//b', ['a', 'b']), ('/a/b/../..', []),
    ('/++vh++http:h:80/++/a/..', ['++vh++http:h:80', '++']),
    ('/f/++vh++http:h:80/s/../++/a', ['f', '++vh++http:h:80', '++', 'a']),
    ('/f/++vh++http:h:80/../g', ['f', 'g']),
    ('/a/++/..', ['a']), ('/...', ['...']),
])
def test_dot_segments_are_resolved_as_rfc3986_says(path, names):
    assert resolve(path) == names


@pytest.mark.parametrize('path', [
    '/..', '/a/../..', '/../etc/passwd',
    '/++vh++http:h:80/++/..', '/++vh++http:h:80/++/x/../..',
    '/folder/++vh++http:h:80/site/++/../../..', '/f/++vh++/++/a/../..',
])
def test_climbing_above_the_root_or_a_virtual_root_is_a_bad_request(path):
    with pytest.raises(ClimbsAboveRoot) as raised:
        resolve(path)
    assert IBadRequest.providedBy(raised.value)
    assert raised.value.path == path
    assert 'climbs above the root' in str(raised.value)


def test_has_dot_segments_is_a_quick_test():
    assert has_dot_segments('/a/../b') and has_dot_segments('/.')
    assert not has_dot_segments('/a/b.html')
