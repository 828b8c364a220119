"""The one topological sorter for every ordered thing in zope.pipeline."""

import heapq

from zope.configuration.exceptions import ConfigurationError


def where(info):
    """Return ``file:line`` for a zope.configuration info (or its text)."""
    filename = getattr(info, 'file', None)
    if filename:
        return '%s:%s' % (filename, getattr(info, 'line', '?'))
    text = str(info or '').strip()
    return text.splitlines()[0] if text else '<unknown>'


class OrderingError(ConfigurationError):
    """The constraints of the registered items cannot be satisfied."""


class CycleError(OrderingError):
    """The constraints form a cycle.

    The cycle is listed from its earliest registered member, each member
    running before (outside of) the next one, back to the first.
    """

    def __init__(self, what, cycle, nodes):
        self.cycle = cycle
        lines = ['Cannot order the %s: they form a cycle, each running '
                 'before the next: %s.'
                 % (what, ' -> '.join(cycle + cycle[:1]))]
        for name in cycle:
            node = nodes[name]
            lines.append('  %s, registered at %s' % (node.describe(),
                                                     where(node.info)))
        super().__init__('\n'.join(lines))


class UnknownNameError(OrderingError):
    """A constraint names something that is not registered at all."""

    def __init__(self, node, relation, missing):
        self.missing = missing
        super().__init__(
            "Stage '%s', registered at %s, says %s='%s', but no stage named "
            "'%s' is registered." % (node.name, where(node.info), relation,
                                     missing, missing))


class PartError(OrderingError):
    """An outer stage must run after an inner one, or the reverse.

    Every outer stage runs before every inner stage, so an inner stage
    cannot say ``before`` an outer one, nor an outer stage ``after`` an
    inner one.
    """

    def __init__(self, registration, relation, other, other_registrations):
        self.name = registration.name
        self.other = other
        part = 'outer' if registration.outer else 'inner'
        other_part = 'inner' if registration.outer else 'outer'
        super().__init__(
            "Stage '%s' is an %s stage (registered at %s) but says "
            "%s='%s'; '%s' is an %s stage (registered at %s), and every "
            "outer stage runs before every inner stage." % (
                registration.name, part, where(registration.info), relation,
                other, other, other_part, ', '.join(
                    where(item.info) for item in other_registrations)))


class _Node:

    __slots__ = ('name', 'order', 'before', 'after', 'info')

    def __init__(self, name, order, before, after, info):
        self.name = name
        self.order = order
        self.before = tuple(before)
        self.after = tuple(after)
        self.info = info

    def describe(self):
        parts = ["'%s'" % self.name]
        if self.before:
            parts.append("before='%s'" % ' '.join(self.before))
        if self.after:
            parts.append("after='%s'" % ' '.join(self.after))
        return ' '.join(parts)


class TopologicalSorter:
    """Orders named items by ``before``/``after`` constraints.

    Items with no constraint between them keep their registration order
    (the order of ``add`` calls, or the explicit ``order``), so the result
    is deterministic: whenever several items could come next, the one
    registered first does.  So an item registered late with only a
    ``before`` lands just ahead of the item it must precede, and one with
    only an ``after`` lands behind everything registered before it.

    A constraint that names an item known elsewhere (``absent``) but not
    added here is ignored; one that names an item neither added nor absent
    is an error.
    """

    def __init__(self, what='stages'):
        self.what = what
        self.nodes = {}

    def add(self, name, before=(), after=(), info=None, order=None):
        if order is None:
            order = len(self.nodes)
        self.nodes[name] = _Node(name, order, before, after, info)

    def _edges(self, absent):
        successors = {name: set() for name in self.nodes}
        for node in self.nodes.values():
            for relation, others in (('before', node.before),
                                     ('after', node.after)):
                for other in others:
                    if other not in self.nodes:
                        if other in absent:
                            continue
                        raise UnknownNameError(node, relation, other)
                    if relation == 'before':
                        successors[node.name].add(other)
                    else:
                        successors[other].add(node.name)
        return successors

    def sorted(self, absent=frozenset()):
        """Return the names in an order that satisfies every constraint."""
        successors = self._edges(absent)
        indegree = dict.fromkeys(self.nodes, 0)
        for targets in successors.values():
            for target in targets:
                indegree[target] += 1
        ready = [(self.nodes[name].order, name)
                 for name, count in indegree.items() if count == 0]
        heapq.heapify(ready)
        result = []
        while ready:
            _, name = heapq.heappop(ready)
            result.append(name)
            for target in successors[name]:
                indegree[target] -= 1
                if indegree[target] == 0:
                    heapq.heappush(ready, (self.nodes[target].order, target))
        if len(result) < len(self.nodes):
            remaining = {name for name, count in indegree.items() if count}
            cycle = self._find_cycle(successors, remaining)
            raise CycleError(self.what, cycle, self.nodes)
        return result

    def _find_cycle(self, successors, remaining):
        """Return one cycle among ``remaining``, starting at its first node.

        Every remaining node still has a predecessor among the remaining
        ones, so walking predecessors must come back to a node already seen.
        (The successors of a remaining node are all remaining: it never
        released them.)
        """
        predecessors = {name: [] for name in remaining}
        for name in remaining:
            for target in successors[name]:
                predecessors[target].append(name)

        def order(name):
            return self.nodes[name].order
        current = min(remaining, key=order)
        path, seen = [], {}
        while current not in seen:
            seen[current] = len(path)
            path.append(current)
            current = min(predecessors[current], key=order)
        cycle = path[seen[current]:]
        cycle.reverse()
        first = min(range(len(cycle)), key=lambda i: order(cycle[i]))
        return cycle[first:] + cycle[:first]
