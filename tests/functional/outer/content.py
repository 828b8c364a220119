"""Content of the test site: a folder below the root application."""

from zope.site.folder import Folder


class Counter:
    """The object a ConflictError raised by the fixtures names."""

    _p_oid = b'\x00' * 7 + b'\x2a'


def populate(root):
    """Add ``folder`` to a new root application (open_root.populate)."""
    root['folder'] = Folder()
