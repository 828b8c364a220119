"""Dot segments of a request path, resolved once and the same way for every
stage (virtual_host checks the result, traverse walks it).

As RFC 3986 says, ``.`` is dropped and ``..`` removes the name before it;
empty names are dropped.  A ``..`` may not climb above the root, nor above
a virtual root: the ``++`` that ends a ``++vh++`` directive (the names
after it are the client's path below the virtual host).
"""

from zope.publisher.interfaces import BadRequest

VH_PREFIX = '++vh++'
VH_END = '++'


class ClimbsAboveRoot(BadRequest):
    """A ``..`` in the path would leave the (virtual) root: a 400."""

    def __init__(self, path):
        super().__init__('The path climbs above the root of the site '
                         'with "..".')
        self.path = path


def resolve(path):
    """Return the names of ``path``, dot segments resolved, root first.

    Raise ``ClimbsAboveRoot`` for a ``..`` above the root or a virtual
    root.
    """
    names = []
    floor = 0
    open_vh = False
    for name in path.split('/'):
        if name == '..':
            if len(names) <= floor:
                raise ClimbsAboveRoot(path)
            removed = names.pop()
            open_vh = open_vh and not removed.startswith(VH_PREFIX)
        elif name and name != '.':
            names.append(name)
            if name.startswith(VH_PREFIX):
                open_vh = True
            elif name == VH_END and open_vh:
                floor, open_vh = len(names), False
    return names


def has_dot_segments(path):
    """A quick test: whether ``path`` may hold a ``.`` or ``..`` name."""
    return '/.' in path
