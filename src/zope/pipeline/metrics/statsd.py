"""A statsd exporter: UDP datagrams, non-blocking, from the worker thread.

For every request drained from the collector it sends the duration as a
timer, ``<prefix>.<view>.time:<ms>|ms``; counters are summed per flush:
``<prefix>.<view>.requests``, ``.status.<code>``, ``.bytes``, ``.blocks``
and ``.retries`` (``|c``).  When a step closes it sends the gauge
``<prefix>.capacity_utilization`` of that step.  Lines are packed into
datagrams of at most ``MAX_DATAGRAM`` bytes.  A datagram the socket cannot
take at once is dropped and counted, never waited for.
"""

import re
import socket

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
    """'host:port' (or '[v6]:port') to (host, port)."""
    host, separator, port = text.strip().rpartition(':')
    if not separator or not port.isdigit() or not host:
        raise ValueError('statsd address must be host:port: %r' % text)
    return host.strip('[]'), int(port)


def pack(lines, limit=MAX_DATAGRAM):
    """Join lines with newlines into datagrams no longer than ``limit``."""
    datagram = b''
    for line in lines:
        line = line.encode('ascii')
        if datagram and len(datagram) + 1 + len(line) > limit:
            yield datagram
            datagram = b''
        datagram = datagram + b'\n' + line if datagram else line
    if datagram:
        yield datagram


class StatsdExporter:
    """Formats the worker's progress as statsd lines and sends them."""

    def __init__(self, address, prefix='zope.pipeline'):
        self.host, self.port = parse_address(address)
        self.prefix = prefix.rstrip('.')
        self.socket = None
        self.target = None
        self.sent = 0
        self.dropped = 0
        self.names = {}

    def open(self):
        family, kind, protocol, _, target = socket.getaddrinfo(
            self.host, self.port, 0, socket.SOCK_DGRAM)[0]
        self.socket = socket.socket(family, kind, protocol)
        self.socket.setblocking(False)
        self.target = target

    def close(self):
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def name_of(self, view):
        name = self.names.get(view)
        if name is None:
            name = self.names[view] = '%s.%s' % (self.prefix,
                                                 metric_name(view))
        return name

    def lines(self, progress, collector):
        """The statsd lines for one ``Collector.advance`` result."""
        lines = []
        counters = {}
        for record in progress.records:
            name = self.name_of(record.view or NO_VIEW)
            duration = max(record.end - record.start, 0.0)
            lines.append('%s.time:%.3f|ms' % (name, duration * 1000))
            for suffix, amount in (
                    ('requests', 1), ('bytes', record.bytes),
                    ('blocks', record.blocks),
                    ('retries', record.attempt - 1),
                    ('status.%d' % status_code(record.status), 1)):
                key = '%s.%s' % (name, suffix)
                counters[key] = counters.get(key, 0) + amount
        lines.extend('%s:%d|c' % (key, amount)
                     for key, amount in counters.items() if amount)
        for step in progress.closed:
            value = collector.utilization(step.start)
            if value is not None:
                lines.append('%s.capacity_utilization:%.4f|g'
                             % (self.prefix, value))
        return lines

    def export(self, progress, collector):
        """Send what ``progress`` brought; never blocks."""
        if self.socket is None:
            self.open()
        for datagram in pack(self.lines(progress, collector)):
            try:
                self.socket.sendto(datagram, self.target)
                self.sent += 1
            except OSError:
                self.dropped += 1
