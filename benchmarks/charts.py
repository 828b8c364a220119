"""PNG charts of a benchmark's results (matplotlib, no display needed).

``requests-per-second.png`` (the headline: each server configuration on
each storage beside its plain-WSGI ceiling) and ``latency.png`` (p50 and
p99 of each configuration and storage), both at one ab load.
"""

import os

from benchmarks.report import CEILING

HEADLINE = 'requests-per-second.png'
LATENCY = 'latency.png'


def pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot
    return matplotlib.pyplot


def at_load(measurements, load):
    return [m for m in measurements if m['load'] == load]


def grouped(measurements, key):
    """(configs, series names, {series: [value per config]})."""
    configs = list(dict.fromkeys(m['config'] for m in measurements))
    series = list(dict.fromkeys(m['storage'] for m in measurements))
    if CEILING in series:  # the ceiling is drawn last, beside the storages
        series.remove(CEILING)
        series.append(CEILING)
    values = {name: [] for name in series}
    for name in series:
        for config in configs:
            found = [m for m in measurements
                     if m['config'] == config and m['storage'] == name]
            values[name].append(key(found[0]) if found else 0)
    return configs, series, values


def bar_chart(path, title, ylabel, configs, values):
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(max(6, 1.8 * len(configs) + 2), 4.5))
    width = 0.8 / max(1, len(values))
    for index, (name, heights) in enumerate(values.items()):
        offsets = [position + (index - (len(values) - 1) / 2) * width
                   for position in range(len(configs))]
        bars = axes.bar(offsets, [height or 0 for height in heights], width,
                        label=name)
        axes.bar_label(bars, fmt='%.0f', fontsize=7)
    axes.set_xticks(range(len(configs)), configs)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def requests_chart(measurements, directory, load='-c 8', page=''):
    chosen = at_load(measurements, load)
    if not chosen:
        return None
    configs, _, values = grouped(
        chosen, lambda m: m['summary']['requests_per_second'])
    return bar_chart(os.path.join(directory, HEADLINE),
                     'Requests per second, %s %s (ab %s)' % (
                         'GET', page, load), 'requests/s', configs, values)


def latency_chart(measurements, directory, load='-c 8'):
    chosen = [m for m in at_load(measurements, load)
              if m['storage'] != CEILING]
    if not chosen:
        return None
    values = {}
    configs = list(dict.fromkeys(m['config'] for m in chosen))
    for storage in dict.fromkeys(m['storage'] for m in chosen):
        for key in ('p50_ms', 'p99_ms'):
            label = '%s %s' % (storage, key.split('_')[0])
            values[label] = []
            for config in configs:
                found = [m for m in chosen if m['config'] == config
                         and m['storage'] == storage]
                values[label].append(found[0]['summary'][key]
                                     if found else 0)
    return bar_chart(os.path.join(directory, LATENCY),
                     'Latency percentiles (ab %s)' % load, 'ms', configs,
                     values)


def draw(results, directory):
    """Draw the charts; return [{'title', 'file'}] of those drawn."""
    http = results.get('http')
    if not http:
        return []
    os.makedirs(directory, exist_ok=True)
    drawn = []
    page = results['site']['page_path']
    for title, path in (
            ('Requests per second', requests_chart(
                http['measurements'], directory, page=page)),
            ('Latency percentiles', latency_chart(http['measurements'],
                                                  directory))):
        if path is not None:
            drawn.append({'title': title, 'file': path})
    return drawn
