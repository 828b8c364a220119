"""The administrator page: the recent steps of the group as SVG charts.

Requests per second, p50 and p99 latency, the share of 4xx/5xx answers
and capacity utilisation per view (with mod_wsgi's own utilisation beside
ours, where mod_wsgi is the server), and retries per second; a table of
the lifetime totals below, with p50/p99 estimated from the ``le`` buckets.
``?refresh=N`` reloads the page every N seconds (a meta refresh, bounded
to REFRESH_LIMITS; off by default).
Registered in metrics.zcml as ``metrics.html`` on sites, protected by the
``zope.pipeline.ViewMetrics`` permission.
"""

import html

from zope.component import queryUtility

from zope.pipeline.metrics import IMetricsRuntime
from zope.pipeline.metrics.charts import PALETTE
from zope.pipeline.metrics.charts import Line
from zope.pipeline.metrics.charts import chart
from zope.pipeline.metrics.collector import CACHE_EVENTS
from zope.pipeline.metrics.histogram import bound_quantile
from zope.pipeline.metrics.histogram import merge_counts
from zope.pipeline.metrics.histogram import percentile

#: Views drawn one by one; the rest are drawn together as 'other'.
MAX_VIEWS = 6
OTHER = 'other'
#: Shortest and longest ``?refresh=`` period, in seconds.
REFRESH_LIMITS = (5, 3600)
#: Periods the page's refresh control offers.
REFRESH_CHOICES = (10, 30, 60, 300)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
p.about { color: #555; margin-top: 0; }
nav.back { margin-bottom: 0.6em; }
div.charts { display: grid; gap: 12px;
              grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); }
svg.chart { background: #fff; border: 1px solid #ddd; width: 100%;
            height: auto; display: block; }
svg .plot { fill: none; stroke: none; }
form.refresh { margin: 0 0 1em; font-size: 0.9em; }
svg .title { font-size: 13px; font-weight: bold; }
svg .tick, svg .legend { font-size: 11px; fill: #444; }
svg .empty { font-size: 12px; fill: #999; }
svg .grid { stroke: #e5e5e5; stroke-width: 1; }
table { border-collapse: collapse; margin-top: 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
"""


class Window:
    """The steps of a group snapshot from ``begin`` to ``end``."""

    def __init__(self, snapshot, count):
        self.step = snapshot['step']
        self.end = snapshot['closed_until'] or 0.0
        self.begin = self.end - count * self.step
        self.steps = {step['start']: step for step in snapshot['steps']
                      if self.begin <= step['start'] < self.end}
        self.starts = [self.begin + index * self.step
                       for index in range(count)]

    def points(self, value_of):
        """[(moment, value)]: a step's value at its end, None if unknown."""
        points = []
        for start in self.starts:
            step = self.steps.get(start)
            points.append((start + self.step,
                           None if step is None else value_of(step)))
        return points


def chosen_views(window):
    """The busiest views of the window, by requests, at most MAX_VIEWS."""
    requests = {}
    for step in window.steps.values():
        for name, view in step['views'].items():
            requests[name] = requests.get(name, 0) + view['requests']
    ranked = sorted(requests, key=lambda name: (-requests[name], name))
    return ranked[:MAX_VIEWS], ranked[MAX_VIEWS:]


def view_data(step, names):
    """A step's amounts of ``names`` summed (one view, or 'other')."""
    total = {'requests': 0.0, 'retries': 0.0, 'busy': 0.0, 'errors': 0.0,
             'client_errors': 0.0, 'latency': {}}
    for name in names:
        view = step['views'].get(name)
        if view is None:
            continue
        for key in ('requests', 'retries', 'busy', 'errors',
                    'client_errors'):
            total[key] += view.get(key, 0.0)
        merge_counts(total['latency'], view['latency'])
    return total


def groups_of(window):
    shown, rest = chosen_views(window)
    groups = [(name, [name]) for name in shown]
    if rest:
        groups.append((OTHER, rest))
    return groups


def per_view_lines(window, value_of, dash=''):
    lines = []
    for index, (label, names) in enumerate(groups_of(window)):
        lines.append(Line(label, window.points(
            lambda step, names=names: value_of(step, view_data(step, names))),
            PALETTE[index % len(PALETTE)], dash))
    return lines


def ratio(part, whole):
    return part / whole if whole else None


def requests_chart(window):
    step = window.step
    lines = per_view_lines(window, lambda _, data: data['requests'] / step)
    return chart('Requests', 'per second', lines, window.begin, window.end)


def latency_chart(window):
    def quantile(fraction):
        def value(_, data):
            seconds = percentile(data['latency'], fraction)
            return None if seconds is None else seconds * 1000
        return value
    lines = []
    for p50, p99 in zip(per_view_lines(window, quantile(0.5)),
                        per_view_lines(window, quantile(0.99), '5,3')):
        p50.label = 'p50 ' + p50.label
        p99.label = 'p99 ' + p99.label
        lines += [p50, p99]
    return chart('Latency p50 (solid), p99 (dashed)', 'ms, log scale',
                 lines, window.begin, window.end, log=True)


def utilization_chart(window):
    lines = per_view_lines(
        window, lambda step, data: percent(data['busy'], step['capacity']))
    lines.append(Line('all views', window.points(
        lambda step: percent(step['busy'], step['capacity'])),
        '#555555'))
    if any(step['server_capacity'] for step in window.steps.values()):
        lines.append(Line('mod_wsgi', window.points(
            lambda step: percent(step['server_busy'],
                                 step['server_capacity'])),
            '#D55E00', '2,3'))
    highest = max((value for line in lines for _, value in line.points
                   if value is not None), default=0)
    return chart('Capacity utilisation', '% of thread time', lines,
                 window.begin, window.end,
                 maximum=100 if highest <= 100 else None)


def percent(part, whole):
    value = ratio(part, whole)
    return None if value is None else value * 100


def error_share(data):
    """Percent of a step's requests answered 4xx or 5xx; None for none."""
    return percent(data['errors'] + data['client_errors'], data['requests'])


def errors_chart(window):
    lines = per_view_lines(window, lambda _, data: error_share(data))
    lines.append(Line('all views', window.points(
        lambda step: error_share(view_data(step, step['views']))),
        '#555555'))
    return chart('Error rate', '% of requests 4xx or 5xx', lines,
                 window.begin, window.end, maximum=100)


def retries_chart(window):
    step = window.step
    lines = per_view_lines(window, lambda _, data: data['retries'] / step)
    return chart('Retries', 'per second', lines, window.begin, window.end)


def milliseconds(estimate):
    """Table text of a ``bound_quantile`` estimate, in ms."""
    seconds, above = estimate
    if seconds is None:
        return ''
    return ('&gt; %g' if above else '%.1f') % (seconds * 1000)


def totals_table(snapshot):
    rows = []
    bounds = snapshot['bounds']
    for name in sorted(snapshot['totals']):
        view = snapshot['totals'][name]
        requests = sum(view['statuses'].values())
        statuses = ', '.join('%s: %d' % item
                             for item in sorted(view['statuses'].items()))
        quantiles = [milliseconds(bound_quantile(bounds, view['buckets'],
                                                 fraction))
                     for fraction in (0.5, 0.99)]
        rows.append('<tr><td>%s</td><td>%d</td><td>%s</td><td>%.1f</td>'
                    '<td>%s</td><td>%s</td><td>%d</td><td>%d</td></tr>' % (
                        html.escape(name), requests, html.escape(statuses),
                        view['duration'] / requests * 1000 if requests
                        else 0.0, quantiles[0], quantiles[1], view['bytes'],
                        view['retries']))
    return ('%s<table><tr><th>View</th><th>Requests</th><th>By status</th>'
            '<th>Mean ms</th><th>p50 ms</th><th>p99 ms</th><th>Bytes</th>'
            '<th>Retries</th></tr>%s</table><p class="about">p50 and p99 '
            'are estimates from the histogram buckets (le %s s), placed '
            'linearly inside the bucket, as Prometheus does; "&gt; x" '
            'means beyond the last bucket.</p>'
            % (cache_table(snapshot), ''.join(rows),
               html.escape(' '.join('%g' % bound
                                                   for bound in bounds))))


def cache_table(snapshot):
    """The response cache's events by view ('' when it did nothing)."""
    rows = []
    for name in sorted(snapshot['totals']):
        cache = snapshot['totals'][name].get('cache') or {}
        if cache:
            rows.append('<tr><td>%s</td>%s</tr>' % (html.escape(name), ''.join(
                '<td>%d</td>' % cache.get(event, 0)
                for event in CACHE_EVENTS)))
    if not rows:
        return ''
    return ('<table class="cache"><caption>Response cache</caption><tr>'
            '<th>View</th>%s</tr>%s</table>' % (
                ''.join('<th>%s</th>' % event.capitalize()
                        for event in CACHE_EVENTS), ''.join(rows)))


def refresh_period(text):
    """The ``?refresh=`` period in seconds, or None (off).

    Not a whole number, or 0, is off; others are held to REFRESH_LIMITS.
    """
    try:
        seconds = int(text)
    except (TypeError, ValueError):
        return None
    if seconds <= 0:
        return None
    low, high = REFRESH_LIMITS
    return min(max(seconds, low), high)


def refresh_control(period):
    """A GET form choosing the refresh period (no script)."""
    choices = sorted(set(REFRESH_CHOICES) | ({period} if period else set()))
    options = ['<option value="0"%s>off</option>'
               % ('' if period else ' selected')]
    options += ['<option value="%d"%s>every %d s</option>'
                % (seconds, ' selected' if seconds == period else '',
                   seconds) for seconds in choices]
    return ('<form class="refresh" method="get"><label>Reload '
            '<select name="refresh">%s</select></label> '
            '<button type="submit">Apply</button></form>' % ''.join(options))


def render_page(snapshot, count, refresh=None, site_url=None):
    """The whole HTML page for a group snapshot; ``refresh`` in seconds;
    ``site_url`` the site's address, linked at the top (the way back)."""
    window = Window(snapshot, count)
    charts = [requests_chart(window), latency_chart(window),
              errors_chart(window), utilization_chart(window),
              retries_chart(window)]
    meta = ('<meta http-equiv="refresh" content="%d">' % refresh
            if refresh else '')
    return ('<!DOCTYPE html><html><head><meta charset="utf-8">%s'
            '<meta name="viewport" content="width=device-width">'
            '<title>Request metrics</title><style>%s</style></head><body>'
            '%s<h1>Request metrics</h1><p class="about">%d process(es), %d '
            'threads in all; steps of %g s; the last %d steps. Gaps are '
            'unknown steps, not zero.</p>%s<div class="charts">%s</div>'
            '<h2>Since the processes started</h2>%s</body></html>' % (
                meta, STYLE, back_link(site_url), snapshot['processes'],
                snapshot['threads'],
                snapshot['step'], count, refresh_control(refresh),
                '\n'.join(charts), totals_table(snapshot)))


def back_link(site_url):
    """The link back to the site, above the charts."""
    if not site_url:
        return ''
    return ('<nav class="back"><a href="%s">&larr; Back to the site</a>'
            '</nav>' % html.escape(site_url, quote=True))


class MetricsPage:
    """``metrics.html``: the charts of the group this process belongs to."""

    def __init__(self, context, request):
        self.context = context
        self.request = request

    def __call__(self):
        self.request.response.setHeader('Content-Type',
                                        'text/html;charset=utf-8')
        self.request.response.setHeader('Cache-Control', 'no-store')
        runtime = queryUtility(IMetricsRuntime)
        if runtime is None:
            return ('<!DOCTYPE html><html><body><p>The metrics stage is not '
                    'in the pipeline.</p></body></html>')
        return render_page(runtime.group_snapshot(), runtime.chart_steps,
                           refresh_period(self.request.form.get('refresh')),
                           self.request.getApplicationURL() + '/')
