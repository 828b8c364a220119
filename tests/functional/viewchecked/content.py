"""Content without any security declaration (as a Grok model): under a
proxied chain every attribute of it is forbidden."""

import persistent
from zope.interface import Interface
from zope.interface import implementer
from zope.location.interfaces import IContained


class IHerd(Interface):
    """A herd of mammoths."""


class IMammoth(Interface):
    """One mammoth."""


@implementer(IHerd, IContained)
class Herd(persistent.Persistent):
    """Reached by its traverser through ``get``."""

    __name__ = __parent__ = None

    def __init__(self):
        self.members = {}

    def get(self, name):
        return self.members.get(name)


@implementer(IMammoth, IContained)
class Mammoth(persistent.Persistent):

    def __init__(self, name, parent):
        self.name = self.__name__ = name
        self.__parent__ = parent


def populate(root):
    """``open_root.populate``: the herd with manfred in it."""
    herd = Herd()
    herd.__name__, herd.__parent__ = 'herd', root
    herd.members['manfred'] = Mammoth('manfred', herd)
    root['herd'] = herd
