"""Rendering a benchmark's results as Markdown tables and RESULTS.md.

Everything here works on the JSON-ready dict ``benchmarks.harness`` makes,
so a saved ``results.json`` can be rendered again without measuring.
"""

from benchmarks import wrk
from benchmarks.stats import ratio

CEILING = 'ceiling'

#: The targets of the performance issues, reported against (never
#: asserted): the sample page's share of the ceiling, the stages' cost in
#: process, and a daemon's first response (0.7 s in the first of them,
#: 0.5 s since the peers comparison).
TARGETS = {
    ('mod_wsgi 2x1', 'mysql'): 0.50,
    ('mod_wsgi 2x1', 'sqlite'): 0.70,
}
STAGE_BUDGET_US = 150
FIRST_RESPONSE_BUDGET_S = 0.5


def markdown_table(headers, rows, align=None):
    """A GitHub-flavoured Markdown table; ``align`` per column: 'l'/'r'."""
    align = align or ['l'] + ['r'] * (len(headers) - 1)
    marks = {'l': ':--', 'r': '--:'}
    lines = ['| %s |' % ' | '.join(headers),
             '| %s |' % ' | '.join(marks[side] for side in align)]
    lines.extend('| %s |' % ' | '.join(str(cell) for cell in row)
                 for row in rows)
    return '\n'.join(lines)


def number(value, digits=1):
    if value is None:
        return '-'
    return '{:,.{}f}'.format(value, digits)


def percent(value):
    return '-' if value is None else '%.0f%%' % (value * 100)


def times(value):
    return '-' if value is None else '%.2f×' % value


def plus_minus(value, spread):
    if value is None or spread is None:
        return number(value)
    return '%s ± %s' % (number(value), number(spread))


def with_ratio(value, ceiling_ratio, digits=1):
    """'4.1 (2.30×)': a latency and its multiple of the ceiling's."""
    if ceiling_ratio is None:
        return number(value, digits)
    return '%s (%s)' % (number(value, digits), times(ceiling_ratio))


# -- the HTTP matrix


def ceiling_ratios(measurements):
    """Attach to each measurement its ratios to the ceiling measured with
    the same server configuration and load."""
    ceilings = {(m['config'], m['load']): m['summary'] for m in measurements
                if m['storage'] == CEILING}
    for measurement in measurements:
        ceiling = ceilings.get((measurement['config'], measurement['load']))
        summary = measurement['summary']
        measurement['ratio'] = {
            key: ratio(summary[key], ceiling[key] if ceiling else None)
            for key in ('requests_per_second', 'mean_ms', 'p50_ms',
                        'p99_ms')}
    return measurements


def verified_cell(summary):
    mark = 'yes' if summary['verified'] else '**NO**'
    return '%s (%d/%d)' % (mark, summary['verified_runs'], summary['runs'])


def http_rows(measurements):
    rows = []
    for measurement in ceiling_ratios(measurements):
        summary, ratios = measurement['summary'], measurement['ratio']
        is_ceiling = measurement['storage'] == CEILING
        rows.append([
            measurement['config'], measurement['storage'],
            measurement['load'], number(summary['requests_per_second'], 0),
            '100%' if is_ceiling else percent(
                ratios['requests_per_second']),
            with_ratio(summary['mean_ms'],
                       None if is_ceiling else ratios['mean_ms'], 2),
            with_ratio(summary['p50_ms'],
                       None if is_ceiling else ratios['p50_ms'], 2),
            with_ratio(summary['p99_ms'],
                       None if is_ceiling else ratios['p99_ms'], 2),
            summary['failed'], summary['non_2xx'],
            verification_cell(measurement)])
    return rows


def verification_cell(measurement):
    """ab runs: exact counts; wrk runs: exact counts, with the requests wrk
    left in flight when its time ran out (results saved before wrk was
    counted exactly carry their own note instead)."""
    cell = verified_cell(measurement['summary'])
    note = wrk.in_flight_note(measurement.get('in_flight') or ())
    if note is None:
        note = measurement.get('verification')
    if note:
        cell += ', %s' % note
    return cell


HTTP_HEADERS = ['server', 'storage', 'ab', 'req/s', 'of ceiling',
                'mean ms (× ceiling)', 'p50 ms (× ceiling)',
                'p99 ms (× ceiling)', 'failed', 'non-2xx', 'verified']


def http_table(measurements):
    align = ['l', 'l', 'l'] + ['r'] * (len(HTTP_HEADERS) - 3)
    return markdown_table(HTTP_HEADERS, http_rows(measurements), align)


def find(measurements, config, storage, load):
    for measurement in measurements:
        if (measurement['config'], measurement['storage'],
                measurement['load']) == (config, storage, load):
            return measurement
    return None


def target_lines(measurements, load='-c 8'):
    """The issue's targets, each with the measured figure."""
    ceiling_ratios(measurements)
    lines = []
    for (config, storage), target in TARGETS.items():
        measurement = find(measurements, config, storage, load)
        if measurement is None:
            continue
        measured = measurement['ratio']['requests_per_second']
        verdict = ('met' if measured is not None and measured >= target
                   else 'not met')
        lines.append('- %s on %s at `%s`: %s of the plain-WSGI ceiling '
                     '(target at least %s): %s.' % (
                         config, storage, load, percent(measured),
                         percent(target), verdict))
    return lines + process_vs_thread_lines(measurements, load)


def process_vs_thread_lines(measurements, load='-c 8'):
    """mod_wsgi with several processes vs waitress, per storage."""
    lines = []
    storages = sorted({m['storage'] for m in measurements} - {CEILING})
    for storage in storages:
        waitress = find(measurements, 'waitress 1x4', storage, load)
        several = [m for m in measurements
                   if m['server'] == 'mod_wsgi' and m['processes'] > 1
                   and m['storage'] == storage and m['load'] == load]
        if waitress is None or not several:
            continue
        best = max(several, key=lambda m: m['summary']['requests_per_second']
                   or 0)
        factor = ratio(best['summary']['requests_per_second'],
                       waitress['summary']['requests_per_second'])
        lines.append('- %s vs waitress 1x4 on %s at `%s`: %s the requests '
                     'per second (the reference measured 5.3× on 4 cores '
                     'in 2009).' % (best['config'], storage, load,
                                    times(factor)))
    return lines


# -- the peers comparison

#: How the storages are named in the peers table, in its column order.
STORAGE_NAMES = {'mysql': 'MariaDB', 'sqlite': 'SQLite'}
PEER_CEILING = 'ceiling'
PEER_REFERENCE = 'pyramid'

#: Issue 34's targets: (app, what it is compared with, the least ratio,
#: whether the ratio must exceed it rather than reach it).
PEER_TARGETS = (
    ('pipeline', 'pyramid', 0.85, False),
    ('pipeline', 'classic', 1.0, True),
    ('pipeline-checked', 'pyramid', 1.0, False),
)


def peer_storages(measurements):
    found = {m['storage'] for m in measurements}
    return ([name for name in STORAGE_NAMES if name in found]
            + sorted(found - set(STORAGE_NAMES)))


def peer_loads(measurements):
    """The loads measured, highest concurrency first."""
    loads = {m['load']: m['concurrency'] for m in measurements}
    return sorted(loads, key=lambda load: -loads[load])


def peer_summaries(measurements):
    return {(m['app'], m['storage'], m['load']): m['summary']
            for m in measurements}


def peer_rate(summaries, app, storage, load):
    summary = summaries.get((app, storage, load))
    return summary and summary['requests_per_second']


def peer_cells(summaries, app, storage, load):
    """req/s, its ratio to the ceiling and to Pyramid (same storage and
    load, same rounds)."""
    rate = peer_rate(summaries, app, storage, load)
    return [number(rate, 0),
            ratio_cell(rate, peer_rate(summaries, PEER_CEILING, storage,
                                       load)),
            ratio_cell(rate, peer_rate(summaries, PEER_REFERENCE, storage,
                                       load))]


def ratio_cell(value, reference):
    found = ratio(value, reference)
    return '-' if found is None else '%.2f' % found


def peer_verified(summaries, app, load):
    mine = [summary for (name, _, at_load), summary in summaries.items()
            if name == app and at_load == load]
    runs = sum(summary['runs'] for summary in mine)
    verified = sum(summary['verified_runs'] for summary in mine)
    mark = 'yes' if mine and verified == runs else '**NO**'
    return '%s (%d/%d)' % (mark, verified, runs)


def peers_table(data, load):
    """One row per app: req/s at ``load`` on each storage, with ratios."""
    summaries = peer_summaries(data['measurements'])
    storages = peer_storages(data['measurements'])
    headers = ['app']
    for storage in storages:
        headers += ['%s `%s` req/s' % (STORAGE_NAMES.get(storage, storage),
                                       load), '× ceiling', '× Pyramid']
    headers.append('verified runs')
    rows = []
    for app in data['apps']:
        row = [app['label']]
        for storage in storages:
            row += peer_cells(summaries, app['name'], storage, load)
        rows.append(row + [peer_verified(summaries, app['name'], load)])
    return markdown_table(headers, rows)


def app_label(name):
    """An app's short name in the target lines."""
    return {'pipeline': 'zope.pipeline', 'pipeline-checked':
            'zope.pipeline view-checked', 'pyramid': 'Pyramid',
            'classic': 'the classic publisher'}.get(name, name)


def peer_target_lines(data):
    """Issue 34's targets, per storage and load, where both apps ran."""
    summaries = peer_summaries(data['measurements'])
    lines = []
    for load in peer_loads(data['measurements']):
        for storage in peer_storages(data['measurements']):
            for app, other, least, exceed in PEER_TARGETS:
                found = ratio(peer_rate(summaries, app, storage, load),
                              peer_rate(summaries, other, storage, load))
                if found is None:
                    continue
                met = found > least if exceed else found >= least
                lines.append(
                    '- %s on %s at `%s`: %.2f× %s\'s requests per second '
                    '(target %s %g): %s.' % (
                        app_label(app),
                        STORAGE_NAMES.get(storage, storage), load, found,
                        app_label(other),
                        'above' if exceed else 'at least', least,
                        'met' if met else 'not met'))
    return lines


def page_bytes_line(data):
    sizes = []
    for storage, by_app in data['page_bytes'].items():
        sizes.append('%s: %s' % (STORAGE_NAMES.get(storage, storage),
                                 ', '.join('%s %d' % item
                                           for item in by_app.items())))
    return ('Page bytes (each checked for the title in `<title>` and '
            '`<h1>` and the ten items in order before measuring): %s.  Zope, '
            'the classic publisher and zope.pipeline add a `<base>` tag to '
            'the default view; the ceiling serves the bytes Pyramid '
            'renders.' % '; '.join(sizes))


def peers_section(data):
    header = ('%s, `GET %s`, medians of %d interleaved rounds, %s warm-up '
              'requests per app; run %s, load average %s before and %s '
              'after; `%s`.' % (
                  data['config'], data['path'], data['rounds'],
                  data['warmup'], data['date'],
                  ', '.join('%.2f' % v for v in
                            data['load_average']['before']),
                  ', '.join('%.2f' % v for v in
                            data['load_average'].get('after', ())),
                  data.get('command', 'python -m benchmarks')))
    parts = [header]
    parts += [peers_table(data, load)
              for load in peer_loads(data['measurements'])]
    parts.append(page_bytes_line(data))
    targets = peer_target_lines(data)
    if targets:
        parts.append('\n'.join(targets))
    return '\n\n'.join(parts)


# -- the servers comparison (--paste)


def server_summaries(measurements):
    return {(m['app'], m['config'], m['storage'], m['load']): m['summary']
            for m in measurements}


def paste_table(data, load):
    """One row per app and server configuration: req/s at ``load`` on
    each storage, and its ratio to the same app under the last
    configuration (mod_wsgi 2x1)."""
    summaries = server_summaries(data['measurements'])
    storages = peer_storages(data['measurements'])
    configs = data['configs']
    reference = configs[-1]
    headers = ['app', 'server']
    for storage in storages:
        headers += ['%s `%s` req/s' % (STORAGE_NAMES.get(storage, storage),
                                       load), '× %s' % reference]
    headers.append('verified runs')
    rows = []
    for app in data['apps']:
        for config in configs:
            row = [app['label'], config]
            runs = verified = 0
            for storage in storages:
                summary = summaries.get((app['name'], config, storage, load))
                base = summaries.get((app['name'], reference, storage, load))
                rate = summary and summary['requests_per_second']
                row += [number(rate, 0), ratio_cell(
                    rate, base and base['requests_per_second'])]
                if summary:
                    runs += summary['runs']
                    verified += summary['verified_runs']
            mark = 'yes' if runs and verified == runs else '**NO**'
            rows.append(row + ['%s (%d/%d)' % (mark, verified, runs)])
    return markdown_table(headers, rows,
                          ['l', 'l'] + ['r'] * (len(headers) - 2))


def paste_section(data):
    header = ('%s, `GET %s`, each app under each server, medians of %d '
              'interleaved rounds, %s warm-up requests per server; run %s; '
              '`%s`.' % (' and '.join(data['configs']), data['path'],
                         data['rounds'], data['warmup'], data['date'],
                         data.get('command', 'python -m benchmarks')))
    parts = [header]
    parts += [paste_table(data, load)
              for load in peer_loads(data['measurements'])]
    return '\n\n'.join(parts)


# -- in process, start-up, imports, write path


def inprocess_tables(data):
    summary = markdown_table(['measured in process', 'µs per request'], [
        ['full pipeline, %s' % data['path'], number(data['full_us'])],
        ['the view called directly (security-proxied, as published)',
         number(data['direct_us'])],
        ['the view called directly, without security proxies',
         number(data['direct_unproxied_us'])],
        ['pipeline cost (full − view called directly)',
         number(data['overhead_us'])],
        ['noise (half the interquartile range of the full pipeline)',
         number(data['noise_us'])],
    ])
    stages = markdown_table(
        ['stage', 'part', 'µs without it', 'cost µs (± half IQR)', 'note'],
        [[stage['name'], 'outer' if stage['outer'] else 'inner',
          number(stage['without_us']), plus_minus(stage['cost_us'],
                                                  stage.get('spread_us')),
          stage['note'] or '']
         for stage in data['stages']], ['l', 'l', 'r', 'r', 'l'])
    verdict = ('met' if data['overhead_us'] < STAGE_BUDGET_US else 'not met')
    target = ('Target: the stages cost below %d µs per request: %s (%s µs).'
              % (STAGE_BUDGET_US, verdict, number(data['overhead_us'])))
    return '\n\n'.join([summary, stages, target])


#: The rows of the start-up table: (key, label).
STARTS = (('waitress', 'waitress process (templates compiled)'),
          ('mod_wsgi', 'mod_wsgi daemon process (templates compiled '
                       'before loaded from the run directory)'),
          ('mod_wsgi_compiling', 'mod_wsgi daemon process (templates '
                                 'compiled)'))
#: The rows of a run made before daemons kept their compiled templates.
EARLIER_STARTS = (('waitress', 'waitress process'),
                  ('mod_wsgi', 'mod_wsgi daemon process'))


def startup_table(data):
    rows = []
    starts = STARTS if 'mod_wsgi_compiling' in data else EARLIER_STARTS
    for server, label in starts:
        figures = data[server]
        rows.append([label, number(figures['first_response_s'], 2),
                     number(figures['load_s'], 2),
                     number(figures['server_start_s'], 2)])
    table = markdown_table(
        ['worker', 'process start → first response (s)',
         'process start → app loaded (s)',
         'server command → first response (s)'], rows)
    slowest = max(data[server]['first_response_s'] or 0
                  for server, _label in starts)
    verdict = 'met' if slowest <= FIRST_RESPONSE_BUDGET_S else 'not met'
    return '%s\n\nMedians of %d starts.  Target: first response within ' \
           '%.1f s of the process start: %s.' % (
               table, data['repeats'], FIRST_RESPONSE_BUDGET_S, verdict)


def imports_tables(data):
    totals = ('Importing `zope.pipeline.app`: %s s; `make_app` (ZCML, '
              'pipelines): %s s; the whole interpreter: %s s.  %d modules '
              'imported, %s s of import time of their own.' % (
                  number(data['import_s'], 3), number(data['make_app_s'], 3),
                  number(data['process_s'], 3), data['modules'],
                  number(data['total_self_s'], 3)))
    distributions = markdown_table(
        ['distribution', 'import ms (own time of its modules)', 'modules',
         'heaviest module', 'imported through (the heaviest)'],
        [[item['distribution'], number(item['self_ms']), item['modules'],
          '`%s`' % item['heaviest'], through(item)]
         for item in data['top_distributions']],
        ['l', 'r', 'r', 'l', 'l'])
    modules = markdown_table(
        ['module', 'own ms', 'with its imports ms', 'imported through'],
        [['`%s`' % item['module'], number(item['self_ms']),
          number(item['cumulative_ms']), through(item)]
         for item in data['top_modules']],
        ['l', 'r', 'r', 'l'])
    legend = ('"Imported through": the chain of imports from the nearest '
              'module of zope.pipeline (or `ZCML`: a directive of the '
              "site's ZCML named it) down to the module: what it is "
              'there for.')
    return '\n\n'.join([totals, distributions, modules, legend])


def through(item):
    """The import chain of a summary item (older results have none)."""
    return '`%s`' % item['through'] if item.get('through') else '-'


def write_table(data):
    if 'skipped' in data:
        return 'Skipped: %s.' % data['skipped']
    rows = []
    for measurement in data['measurements']:
        summary = measurement['summary']
        rows.append([
            measurement['config'], measurement['storage'],
            measurement['load'], number(summary['requests_per_second'], 0),
            number(summary['mean_ms'], 2), number(summary['p99_ms'], 2),
            measurement['retries'],
            number(measurement['retries_per_1000'], 1),
            measurement['given_up'], summary['failed'],
            verified_cell(summary)])
    table = markdown_table(
        ['server', 'storage', 'ab', 'req/s', 'mean ms', 'p99 ms',
         'retries', 'retries per 1000', 'gave up', 'failed', 'verified'],
        rows, ['l', 'l', 'l'] + ['r'] * 8)
    return ('POST %s (%s); the form answers with a redirect, so every '
            'response is a 3xx the server counted.\n\n%s'
            % (data['path'], ', '.join('%s=%s' % item
                                       for item in data['fields'].items()),
               table))


# -- whole documents


def environment_lines(results):
    machine, versions = results['machine'], results['versions']
    lines = ['- Date: %s (%s run, %.0f s)' % (
        results['date'], results['mode'], results.get('duration_s', 0)),
        '- Machine: %s CPUs (%s), %s GiB memory, %s, kernel %s' % (
            machine['cpus'], machine['cpu_model'], machine['memory_gib'],
            machine['os'], machine['kernel']),
        '- Load average before and after: %s / %s (the machine may be '
        'shared)' % (
            ', '.join('%.2f' % v for v in results['load_average']['before']),
            ', '.join('%.2f' % v for v in
                      results['load_average'].get('after', ()))),
        '- Versions: %s' % ', '.join(
            '%s %s' % (name, version) for name, version in versions.items()
            if version and name != 'mod_wsgi-express'),
        '- Site: %s; page `%s`' % (results['site']['description'],
                                   results['site']['page_path'])]
    return lines


def command_lines(results):
    lines = ['- Harness: `%s`' % results.get(
        'command', 'python -m benchmarks')]
    http = results.get('http')
    if http:
        ab = [run['command'] for m in http['measurements'][:1]
              for run in m['runs'][:1]]
        lines.extend('- ab: `%s` (`-k` added for keep-alive rows; `-r` keeps '
                     'ab going after a socket error so it is counted)'
                     % command for command in ab)
        wrk_commands = [run['command'] for m in http['measurements']
                        if m.get('tool') == 'wrk' for run in m['runs']]
        if wrk_commands:
            lines.append('- wrk: `%s` (run in the checkout; the script '
                         'counts the requests written and the responses '
                         'received)' % wrk_commands[0])
        lines.extend('- %s: `%s`' % (server, command)
                     for server, command in sorted(
                         http['server_commands'].items()))
    peers = results.get('peers')
    if peers and peers.get('server_command'):
        lines.append('- peers (each app): `%s`' % peers['server_command'])
    paste = results.get('paste')
    if paste:
        lines.extend('- servers comparison, %s: `%s`' % item for item in
                     sorted(paste.get('server_commands', {}).items()))
    imports = results.get('imports')
    if imports:
        lines.append('- Imports: `%s`' % imports['command'])
    return lines


def sections(results):
    """(title, Markdown body) of each part that ran."""
    parts = []
    http = results.get('http')
    if http:
        body = [http_table(http['measurements']),
                'The page is %s bytes; the ceiling is a plain WSGI '
                'application returning a body of that size under the same '
                'server configuration.' % http['page_bytes']]
        targets = target_lines(http['measurements'])
        if targets:
            body.append('\n'.join(targets))
        parts.append(('Requests per second and latency', '\n\n'.join(body)))
    if results.get('peers'):
        parts.append(('Peers: the same page by Pyramid, Zope, the classic '
                      'publisher and zope.pipeline',
                      peers_section(results['peers'])))
    if results.get('paste'):
        parts.append(('Servers: paste.httpserver and mod_wsgi',
                      paste_section(results['paste'])))
    if results.get('write'):
        parts.append(('Write path: the comments form',
                      write_table(results['write'])))
    if results.get('inprocess'):
        parts.append(('Pipeline cost in process',
                      inprocess_tables(results['inprocess'])))
    if results.get('startup'):
        parts.append(('Worker start-up', startup_table(results['startup'])))
    if results.get('imports'):
        parts.append(('Imports', imports_tables(results['imports'])))
    return parts


METHOD = '''\
How the numbers are made: each configuration is started fresh (the WSGI
script is imported in each process at start), warmed up, then measured
with ab %(repeats)d times; the tables show medians, failures and non-2xx
responses summed over the runs.  A run is *verified* when ab completed all
its requests with no failure and no non-2xx response and the servers'
own count of responses (a counting middleware in every process) equals
ab's count.  wrk runs for a duration with a script that counts the
requests it wrote and the responses it received: a wrk run is verified
when the script's count of responses equals wrk's, with no socket error
and no non-2xx response, and the servers counted at least every response
wrk received and at most every request it wrote; the difference is the
requests wrk abandoned in flight when its time ran out (shown in the
table).  Latency ratios are multiples of the ceiling's; requests per
second are shares of it.  In-process costs are CPU time per request
(medians of alternating batches).'''

PEERS_METHOD = '''\
The peers comparison (`python -m benchmarks --peers`, and part of the
full run) serves one page, `/folder/page` (a container of ten persistent
items under `folder`, rendered by a template: the title in `<title>` and
`<h1>`, one `<li>` per item), with Pyramid (pyramid_tm,
pyramid_zodbconn, Chameleon; plain, and with an ACL security policy and
the view's permission), Zope (ZPublisher, a Chameleon
`PageTemplateFile`), the classic Zope 3 publisher (zope.app.wsgi and
zope.app.publication, a `browser:page` rendered by zope.tal),
zope.pipeline (the standard stages, the same `browser:page` compiled by
Chameleon; proxied, and configured view-checked) and the plain-WSGI
ceiling serving the same bytes, under one mod_wsgi-express
configuration. Each app has its own fresh database on each storage,
populated by a first start of the app alone; its servers then run side
by side, and each round measures every load on every app in turn (the
order rotating by one app per round), each ab run verified by the
server's count as above. Ratios are to the ceiling and to Pyramid
measured in the same rounds.  The servers comparison (`--paste`) serves
the classic publisher and zope.pipeline the same way under
paste.httpserver (one process, its default pool of 10 threads) and
mod_wsgi 2x1, every pair interleaved.'''


def render_results(results, charts=()):
    """The whole RESULTS.md."""
    lines = ['# zope.pipeline benchmarks', '',
             'Regenerate with `python -m benchmarks` (`make bench`); '
             '`--quick` runs a subset in a few minutes.', '']
    lines.extend(environment_lines(results))
    lines += ['', METHOD % {'repeats': results['plan']['repeats']}, '']
    if results.get('peers') or results.get('paste'):
        lines += [PEERS_METHOD, '']
    for chart in charts:
        lines += ['![%s](%s)' % (chart['title'], chart['path']), '']
    for title, body in sections(results):
        lines += ['## %s' % title, '', body, '']
    lines += ['## Command lines', '']
    lines.extend(command_lines(results))
    return '\n'.join(lines) + '\n'


def render_console(results):
    """What ``--quick`` prints."""
    lines = []
    for title, body in sections(results):
        lines += ['== %s' % title, body, '']
    return '\n'.join(lines)
