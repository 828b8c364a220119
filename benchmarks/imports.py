"""What importing the application and loading its ZCML costs.

``python -X importtime`` runs ``import zope.pipeline.app`` and
``make_app(site_zcml, settings)`` (in-memory database, so no storage is
opened); its report is read into totals, the ten modules with the most
time of their own, and the ten distributions (top-level packages, or
``zope.x`` for namespace packages) whose modules cost the most together.
"""

import collections
import dataclasses
import json
import re
import subprocess
import sys
import time

from benchmarks.scripts import PROJECT_ROOT

#: Namespace packages: a distribution is named by two components.
NAMESPACES = ('zope', 'zope.app', 'five', 'z3c')

#: Our own distribution, where a chain of imports starts.
OURS = 'zope.pipeline'
#: What the measuring code imports itself (see _CODE).
TOP_IMPORTS = ('json', 'sys', 'time')

_LINE = re.compile(r'^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$')

_CODE = '''\
import json, sys, time
started = time.perf_counter()
import zope.pipeline.app
imported = time.perf_counter()
from zope.pipeline.engine.settings import split_settings
settings = split_settings(json.loads(sys.argv[2]))[1]
settings.setdefault('open_root', {})['zodb_config'] = ''
zope.pipeline.app.make_app(sys.argv[1], settings)
built = time.perf_counter()
print(json.dumps({'import_s': imported - started,
                  'make_app_s': built - imported}))
'''


@dataclasses.dataclass
class ImportRecord:
    module: str
    self_us: int
    cumulative_us: int
    depth: int


def parse_importtime(text):
    """The records of ``-X importtime`` output, in the order printed."""
    records = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            self_us, cumulative_us, indent, module = match.groups()
            records.append(ImportRecord(module, int(self_us),
                                        int(cumulative_us),
                                        (len(indent) - 1) // 2))
    return records


def distribution_of(module):
    parts = module.split('.')
    for count in (3, 2):
        if '.'.join(parts[:count - 1]) in NAMESPACES and len(parts) >= count:
            return '.'.join(parts[:count])
    return parts[0]


def by_distribution(records):
    """[(distribution, total self us, modules, heaviest module)], costly
    first."""
    totals = collections.defaultdict(int)
    modules = collections.defaultdict(list)
    for record in records:
        name = distribution_of(record.module)
        totals[name] += record.self_us
        modules[name].append(record)
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    return [(name, total, len(modules[name]),
             max(modules[name], key=lambda record: record.self_us).module)
            for name, total in ranked]


def importers(records):
    """For each record, the index of the record of the module that
    imported it, or None for an import at the top.  ``-X importtime``
    prints a module after everything it imported, one level deeper."""
    parents = [None] * len(records)
    waiting = []
    for index, record in enumerate(records):
        while waiting and records[waiting[-1]].depth > record.depth:
            parents[waiting.pop()] = index
        waiting.append(index)
    return parents


def imported_through(records, parents, index):
    """What brought a module in: the chain of imports from the nearest of
    our modules (``zope.pipeline...``) down to it, e.g.
    ``zope.pipeline.zodb.storage > ZODB > BTrees``; a chain that starts at the
    top without passing one of ours was loaded by the site's ZCML (its
    directives import what they name) while ``make_app`` ran."""
    chain = [records[index].module]
    parent = parents[index]
    while parent is not None:
        chain.append(records[parent].module)
        if distribution_of(chain[-1]) == OURS:
            break
        parent = parents[parent]
    chain.reverse()
    if distribution_of(chain[0]) != OURS and chain[0] not in TOP_IMPORTS:
        chain.insert(0, 'ZCML')
    if len(chain) > 4:
        chain[2:-1] = ['...']
    return ' > '.join(chain)


def summarize(records, top=10):
    parents = importers(records)
    index_of = {id(record): index for index, record in enumerate(records)}

    def through(record):
        return imported_through(records, parents, index_of[id(record)])

    ranked = sorted(records, key=lambda r: -r.self_us)[:top]
    heaviest = {}
    for record in records:
        name = distribution_of(record.module)
        if name not in heaviest or record.self_us > heaviest[name].self_us:
            heaviest[name] = record
    return {
        'modules': len(records),
        'total_self_s': sum(record.self_us for record in records) / 1e6,
        'top_modules': [
            {'module': record.module, 'self_ms': record.self_us / 1000,
             'cumulative_ms': record.cumulative_us / 1000,
             'through': through(record)}
            for record in ranked],
        'top_distributions': [
            {'distribution': name, 'self_ms': total / 1000,
             'modules': count, 'heaviest': heaviest_name,
             'through': through(heaviest[name])}
            for name, total, count, heaviest_name in
            by_distribution(records)[:top]],
    }


def command(site_zcml, app_settings):
    return [sys.executable, '-X', 'importtime', '-c', _CODE, site_zcml,
            json.dumps(app_settings)]


def measure(site_zcml, app_settings, timeout=300):
    """Run the import in a fresh interpreter; return its summary."""
    started = time.perf_counter()
    completed = subprocess.run(
        command(site_zcml, app_settings), capture_output=True, text=True,
        cwd=PROJECT_ROOT, timeout=timeout)
    wall = time.perf_counter() - started
    if completed.returncode:
        errors = [line for line in completed.stderr.splitlines()
                  if not line.startswith('import time:')]
        raise RuntimeError('Importing the application failed:\n%s'
                           % '\n'.join(errors[-30:]))
    result = summarize(parse_importtime(completed.stderr))
    result.update(json.loads(completed.stdout.strip().splitlines()[-1]))
    result['process_s'] = wall
    result['command'] = ("python -X importtime -c 'import zope.pipeline.app;"
                         " zope.pipeline.app.make_app(site_zcml, settings)'")
    return result
