"""The one address allow-list of the package (trusted proxies, metrics)."""

import pytest
from zope.configuration.exceptions import ConfigurationError

from zope.pipeline.http.addresses import AddressList
from zope.pipeline.http.addresses import node_address
from zope.pipeline.http.addresses import parse_address


@pytest.mark.parametrize('address', ['127.0.0.1', '127.9.9.9', '::1',
                                     '::ffff:127.0.0.1', '10.1.2.3'])
def test_addresses_in_the_listed_networks_are_in_the_list(address):
    assert address in AddressList('127.0.0.0/8 ::1 10.0.0.0/8', 'x.allow')


@pytest.mark.parametrize('address', ['192.0.2.1', '::2', '', 'unknown',
                                     '::ffff:192.0.2.1', None])
def test_other_addresses_and_non_addresses_are_not(address):
    assert address not in AddressList('127.0.0.0/8 ::1', 'x.allow')


def test_an_ipv4_mapped_network_in_the_list_holds_the_ipv4_addresses():
    mapped = AddressList('::ffff:127.0.0.0/104', 'x.allow')
    assert '127.0.0.1' in mapped and '::ffff:127.0.0.1' in mapped
    assert '128.0.0.1' not in mapped


def test_a_list_shows_its_setting_and_networks():
    assert repr(AddressList('127.0.0.1 ::ffff:10.0.0.0/104', 'x.allow')) == \
        '<AddressList x.allow: 127.0.0.1/32 10.0.0.0/8>'


def test_an_empty_list_holds_nothing_and_is_false():
    assert not AddressList('', 'x.allow')
    assert not AddressList(None, 'x.allow')
    assert '127.0.0.1' not in AddressList('', 'x.allow')


def test_a_bad_network_fails_naming_the_setting():
    with pytest.raises(ConfigurationError, match=(
            r"virtual_host.trusted_proxies: '10.0.0.0/33' is not an IP "
            r"address or network; write addresses or networks separated by "
            r"spaces")):
        AddressList('127.0.0.1 10.0.0.0/33', 'virtual_host.trusted_proxies')


@pytest.mark.parametrize('node, expected', [
    ('192.0.2.60', '192.0.2.60'), (' 192.0.2.60:4711', '192.0.2.60'),
    ('"[2001:db8:cafe::17]:4711"', '2001:db8:cafe::17'),
    ('[2001:db8::17]', '2001:db8::17'), ('2001:db8::17', '2001:db8::17'),
    ('::ffff:10.0.0.1', '10.0.0.1'), ('unknown', None), ('_hidden', None),
    ('', None), ('a.example', None),
])
def test_forwarded_nodes_give_their_address(node, expected):
    address = node_address(node)
    assert (str(address) if address else None) == expected


def test_parse_address_is_none_for_junk():
    assert parse_address('junk') is None
    assert str(parse_address('::ffff:127.0.0.1')) == '127.0.0.1'


def test_an_untrusted_client_address_is_unknown_with_any_forwarded_for():
    from zope.pipeline.http.addresses import AddressList
    from zope.pipeline.stages import virtual_host
    proxies = AddressList('', 'virtual_host.trusted_proxies')
    base = {'REMOTE_ADDR': '192.0.2.7'}
    assert virtual_host.client_address(base, False, proxies) == '192.0.2.7'
    for key in virtual_host.FORWARDED_FOR_KEYS:
        environ = dict(base, **{key: '203.0.113.9'})
        assert virtual_host.client_address(environ, False, proxies) == ''
    assert virtual_host.client_address(
        {'REMOTE_ADDR': 'not-an-address'}, False, proxies) == ''
