"""process_inputs: zope.publisher's form (or XML-RPC body) processing.

Form marshalling (``:int``, ``:list``, ``:record``, ``:method``...) and
charset negotiation are zope.publisher's; what it cannot understand (bad
multipart, bad encoding, a bad ``:int``) becomes a 400 here, not a 500.
"""

import xml.parsers.expat

from zope.interface import Interface

from zope.pipeline import environ as keys
from zope.pipeline.errors import BadInput

#: What zope.publisher raises for input it cannot understand.
INPUT_ERRORS = (ValueError, UnicodeError, KeyError, TypeError, LookupError,
                xml.parsers.expat.ExpatError)


class IProcessInputsSettings(Interface):
    """process_inputs has no settings."""


environ_keys = {
    keys.REQUEST_KEY: 'read: processInputs() fills its form or arguments',
}


class ProcessInputsStage:
    """Call ``request.processInputs()``; bad input is a BadInput (400)."""

    settings_schema = IProcessInputsSettings
    environ_keys = environ_keys

    def __init__(self, next_app):
        self.next_app = next_app

    def __call__(self, environ, start_response):
        try:
            environ[keys.REQUEST_KEY].processInputs()
        except INPUT_ERRORS as exc:
            raise BadInput('Could not process the request input: %s'
                           % type(exc).__name__) from exc
        return self.next_app(environ, start_response)
