"""``.. pipeline-chains:: INI``: the compiled chain of every request type of
a deployment, as ``zope-pipeline show-pipeline INI --format json`` prints
it when the documentation is built (never copied by hand).

``INI`` is relative to the repository root.  Option ``:request-type:``
shows one request type only.
"""

import json
import os
import subprocess
import sys

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

#: Where show-pipeline runs: the storage of a deploy ini lives in var/.
COMMAND = ('from zope.pipeline.cli import main; import sys; '
           'sys.exit(main(sys.argv[1:]))')


def show_pipeline(ini):
    """The JSON description of the chains of ``ini``."""
    done = subprocess.run(
        [sys.executable, '-c', COMMAND, 'show-pipeline',
         os.path.join(ROOT, ini), '--format', 'json'],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode:
        raise RuntimeError('show-pipeline %s failed:\n%s' % (ini, done.stderr))
    return json.loads(done.stdout)


def short_path(where):
    """A registration's ``file:line`` relative to the repository."""
    path, _, line = (where or '').rpartition(':')
    if not path:
        return where or ''
    if path.startswith(ROOT + os.sep):
        path = os.path.relpath(path, ROOT)
    elif '/site-packages/' in path:
        path = path.split('/site-packages/', 1)[1]
    return '%s:%s' % (path, line)


def names(values):
    return ', '.join('``%s``' % value for value in values or ()) or ''


def contract(stage):
    """The stage's contract: the keys it reads, then those it writes."""
    if not stage.get('contract_declared'):
        return 'not declared'
    return '; '.join(part for part in (
        'reads %s' % names(stage['reads']) if stage['reads'] else '',
        'writes %s' % names(stage['writes']) if stage['writes'] else '',
        'publishes' if stage['publishes'] else '') if part)


def chain_table(request_type, stages):
    lines = ['.. list-table:: %s' % request_type,
             '   :header-rows: 1',
             '',
             '   * - #',
             '     - stage',
             '     - part',
             '     - factory',
             '     - before / after',
             '     - reads / writes',
             '     - registered at']
    for number, stage in enumerate(stages, 1):
        order = '; '.join(part for part in (
            'before %s' % names(stage.get('before')) if stage.get('before')
            else '',
            'after %s' % names(stage.get('after')) if stage.get('after')
            else '') if part)
        lines += ['   * - %d' % number,
                  '     - ``%s``' % stage['name'],
                  '     - %s' % stage['part'],
                  '     - ``%s``' % stage['factory'],
                  '     - %s' % order,
                  '     - %s' % contract(stage),
                  '     - ``%s``' % short_path(stage.get('registered_at'))]
    return lines + ['']


class PipelineChains(SphinxDirective):
    required_arguments = 1
    option_spec = {'request-type': directives.unchanged}

    def run(self):
        data = show_pipeline(self.arguments[0])
        wanted = self.options.get('request-type')
        lines = []
        for request_type, chain in data['request_types'].items():
            if wanted and request_type != wanted:
                continue
            lines += chain_table(request_type, chain['stages'])
        content = StringList(lines, source=self.arguments[0])
        node = nodes.container()
        self.state.nested_parse(content, self.content_offset, node)
        return node.children


def setup(app):
    app.add_directive('pipeline-chains', PipelineChains)
    return {'parallel_read_safe': True, 'version': '1'}
