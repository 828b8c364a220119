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

_LINE = re.compile(r'^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$')

_CODE = '''\
import json, sys, time
started = time.perf_counter()
import zope.pipeline.app
imported = time.perf_counter()
from zope.pipeline.settings import split_settings
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


def summarize(records, top=10):
    return {
        'modules': len(records),
        'total_self_s': sum(record.self_us for record in records) / 1e6,
        'top_modules': [
            {'module': record.module, 'self_ms': record.self_us / 1000,
             'cumulative_ms': record.cumulative_us / 1000}
            for record in sorted(records, key=lambda r: -r.self_us)[:top]],
        'top_distributions': [
            {'distribution': name, 'self_ms': total / 1000,
             'modules': count, 'heaviest': heaviest}
            for name, total, count, heaviest in
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
