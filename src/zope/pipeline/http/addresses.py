"""Client address allow-lists: one parser and one matcher for every setting
that lists addresses or networks (``virtual_host.trusted_proxies``,
``metrics_endpoint.allow``).

An IPv4 address written as IPv6 (``::ffff:127.0.0.1``, what a dual-stack
server reports) is the IPv4 address, in a list and in a request alike.
"""

import functools
import ipaddress

from zope.configuration.exceptions import ConfigurationError

#: The IPv4-mapped IPv6 addresses (RFC 4291, section 2.5.5.2).
IPV4_MAPPED = ipaddress.ip_network('::ffff:0:0/96')


def plain(network):
    """``network`` with an IPv4-mapped IPv6 network written as IPv4."""
    if network.version == 6 and network.prefixlen >= 96 and \
            network.subnet_of(IPV4_MAPPED):
        return ipaddress.ip_network(
            (int(network.network_address) & 0xffffffff,
             network.prefixlen - 96))
    return network


def parse_network(item, setting):
    try:
        return plain(ipaddress.ip_network(item, strict=False))
    except ValueError:
        raise ConfigurationError(
            '%s: %r is not an IP address or network; write addresses or '
            'networks separated by spaces, e.g. "127.0.0.1 10.0.0.0/8 ::1".'
            % (setting, item)) from None


#: Distinct client addresses whose parsing is remembered.
PARSED_ADDRESSES = 4096


@functools.lru_cache(maxsize=PARSED_ADDRESSES)
def parse_address(text):
    """The IP address of ``text`` (IPv4-mapped IPv6 as IPv4), else None
    (remembered: a client sends many requests)."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return getattr(address, 'ipv4_mapped', None) or address


@functools.lru_cache(maxsize=PARSED_ADDRESSES)
def address_text(address):
    """``str(address)``, remembered."""
    return str(address)


def node_address(node):
    """The address of a forwarded node: an X-Forwarded-For item or a
    Forwarded ``for=`` value (``192.0.2.60``, ``192.0.2.60:4711``,
    ``[2001:db8::17]:4711``, ``2001:db8::17``); None for ``unknown``,
    an obfuscated name (``_hidden``) or anything else."""
    node = node.strip().strip('"')
    if node.startswith('['):
        node = node[1:].partition(']')[0]
    elif node.count(':') == 1:
        node = node.partition(':')[0]
    return parse_address(node)


class AddressList:
    """The addresses and networks of one setting; ``address in list``
    takes an address as text (REMOTE_ADDR) or an ``ipaddress`` address."""

    def __init__(self, text, setting):
        self.setting = setting
        self.networks = tuple(parse_network(item, setting)
                              for item in (text or '').split())

    def __bool__(self):
        return bool(self.networks)

    def __contains__(self, address):
        if isinstance(address, str):
            address = parse_address(address)
        if address is None or not self.networks:
            return False
        return any(address in network for network in self.networks)

    def __repr__(self):
        return '<AddressList %s: %s>' % (
            self.setting, ' '.join(str(network) for network in self.networks))
