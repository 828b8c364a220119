"""A statsd exporter on pystatsd's client, fed by the metrics worker.

For every request drained from the collector it sends the duration as a
timer, ``<prefix>.<view>.time:<ms>|ms``; counters are summed per flush:
``<prefix>.<view>.requests``, ``.status.<code>``, ``.bytes``, ``.blocks``
and ``.retries`` (``|c``).  When a step closes it sends the gauge
``<prefix>.capacity_utilization`` of that step.  One flush is one
``StatsClient.pipeline()``, packed into datagrams of at most
``MAX_DATAGRAM`` bytes.  The client's socket is non-blocking: a datagram
it cannot take at once is dropped, never waited for; pystatsd ignores
send errors, so what was dropped is not counted.  pystatsd is the
``statsd`` extra of zope.pipeline, imported only when an exporter is
configured.
"""

import importlib.util
import ipaddress
import re

from zope.pipeline.metrics.collector import NO_VIEW
from zope.pipeline.metrics.collector import status_code

#: Safe for Ethernet MTUs after IP and UDP headers (statsd's advice).
MAX_DATAGRAM = 1432

UNSAFE = re.compile(r'[^A-Za-z0-9_-]+')


def metric_name(view):
    """A view name as one statsd path segment: 'Page:index.html' becomes
    'Page_index_html' (dots would make levels, colons end the name)."""
    return UNSAFE.sub('_', view).strip('_') or '_'


def parse_address(text):
    """'host:port' (or '[v6]:port') to (host, port); pystatsd must be
    installed."""
    host, separator, port = text.strip().rpartition(':')
    if not separator or not port.isdigit() or not host:
        raise ValueError('statsd address must be host:port: %r' % text)
    if importlib.util.find_spec('statsd') is None:
        raise ValueError('the statsd exporter needs pystatsd: pip install '
                         '"zope.pipeline[statsd]"')
    return host.strip('[]'), int(port)


def is_ipv6(host):
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


def connect(host, port, prefix):
    """pystatsd's UDP client on a non-blocking socket (a host name is
    looked up as IPv4, as pystatsd does)."""
    from statsd import StatsClient  # late: optional (the statsd extra)
    client = StatsClient(host, port, prefix=prefix or None,
                         maxudpsize=MAX_DATAGRAM, ipv6=is_ipv6(host))
    client._sock.setblocking(False)  # pystatsd has no option for it
    return client


class StatsdExporter:
    """Sends the worker's progress to statsd, one pipeline per flush."""

    def __init__(self, address, prefix='zope.pipeline'):
        self.host, self.port = parse_address(address)
        self.prefix = prefix.rstrip('.')
        self.client = None
        self.names = {}

    def close(self):
        if self.client is not None:
            self.client.close()
            self.client = None

    def name_of(self, view):
        name = self.names.get(view)
        if name is None:
            name = self.names[view] = metric_name(view)
        return name

    def stats(self, progress, collector):
        """(client method, stat, value) for one ``Collector.advance``
        result; stats are named without the prefix (the client adds it)."""
        stats = []
        counters = {}
        for record in progress.records:
            name = self.name_of(record.view or NO_VIEW)
            duration = max(record.end - record.start, 0.0)
            stats.append(('timing', name + '.time', duration * 1000))
            for suffix, amount in (
                    ('requests', 1), ('bytes', record.bytes),
                    ('blocks', record.blocks),
                    ('retries', record.attempt - 1),
                    ('status.%d' % status_code(record.status), 1)):
                key = '%s.%s' % (name, suffix)
                counters[key] = counters.get(key, 0) + amount
        stats.extend(('incr', key, amount)
                     for key, amount in counters.items() if amount)
        for step in progress.closed:
            value = collector.utilization(step.start)
            if value is not None:
                stats.append(('gauge', 'capacity_utilization',
                              round(value, 4)))
        return stats

    def export(self, progress, collector):
        """Send what ``progress`` brought; never blocks."""
        if self.client is None:
            self.client = connect(self.host, self.port, self.prefix)
        with self.client.pipeline() as batch:
            for method, stat, value in self.stats(progress, collector):
                getattr(batch, method)(stat, value)
