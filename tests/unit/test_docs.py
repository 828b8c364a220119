"""The documentation keeps up with the code: every interface of
zope.pipeline.interfaces is in the API reference."""

import os

from zope.interface.interface import InterfaceClass

from tests.conftest import ROOT
from zope.pipeline import interfaces


def test_every_interface_is_in_the_api_reference():
    with open(os.path.join(ROOT, 'docs', 'api.rst')) as api:
        text = api.read()
    missing = [name for name, value in vars(interfaces).items()
               if isinstance(value, InterfaceClass)
               and value.__module__ == interfaces.__name__
               and '.. autointerface:: zope.pipeline.interfaces.%s\n' % name
               not in text]
    assert missing == []
