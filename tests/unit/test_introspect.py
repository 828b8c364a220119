"""Introspection data and its text rendering."""

from zope.pipeline.engine.introspect import _jsonable
from zope.pipeline.engine.introspect import describe_request_factories
from zope.pipeline.engine.introspect import dotted_name
from zope.pipeline.engine.introspect import format_text

from .engine_files import at


class Unnamed:
    __module__ = None

    def __repr__(self):
        return '<unnamed>'


def test_dotted_name_of_classes_functions_and_anything_else():
    assert dotted_name(format_text) == \
        'zope.pipeline.engine.introspect.format_text'
    assert dotted_name(Unnamed()) == '<unnamed>'


def test_settings_become_json_values():
    assert _jsonable({'a': (1, 2.5), 3: {'x', }, 'b': None, 'c': True,
                      'd': Unnamed()}) == {
        'a': [1, 2.5], '3': ['x'], 'b': None, 'c': True, 'd': '<unnamed>'}


def test_request_factories_are_described_per_request_type(build):
    factories = describe_request_factories(build('specific.zcml'))
    assert factories['xmlrpc'] == {
        'factory': 'zope.pipeline.engine.factories.XMLRPCRequest',
        'methods': ['POST'], 'mimetypes': ['text/xml'], 'priority': 20,
        'registered_at': at('types.zcml', '"xmlrpc"')}


def test_text_without_factory_data_starts_with_the_interfaces(build):
    text = format_text(build('specific.zcml').describe(), 'http')
    assert text.startswith('Request type: http\n  interfaces:    '
                           'IHTTPCredentials, IHTTPRequest, ')
    assert text.count('Request type:') == 1


def test_text_of_every_request_type_in_registration_order(build):
    text = format_text(build('specific.zcml').describe())
    assert [line for line in text.splitlines()
            if line.startswith('Request type:')] == [
        'Request type: browser', 'Request type: xmlrpc', 'Request type: http']
