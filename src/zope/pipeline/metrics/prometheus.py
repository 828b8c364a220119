"""The Prometheus text exposition (format 0.0.4) of a group snapshot."""

import math

CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'


def escape(value):
    return (str(value).replace('\\', '\\\\').replace('"', '\\"')
            .replace('\n', '\\n'))


def labels(**pairs):
    return '{%s}' % ','.join('%s="%s"' % (key, escape(value))
                             for key, value in pairs.items())


def number(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 'NaN'
    if isinstance(value, float) and value.is_integer() and \
            abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def family(name, kind, text, samples):
    lines = ['# HELP %s %s' % (name, text), '# TYPE %s %s' % (name, kind)]
    lines.extend('%s%s %s' % (sample_name, label_text, number(value))
                 for sample_name, label_text, value in samples)
    return lines


def last_complete_step(snapshot):
    """The last step every process had closed, or None."""
    closed = snapshot['closed_until']
    if closed is None:
        return None
    start = closed - snapshot['step']
    for step in snapshot['steps']:
        if step['start'] == start:
            return step
    return None


def utilization(busy, capacity):
    return busy / capacity if capacity else None


def render(snapshot):
    """Return the exposition text for ``snapshot`` (see group.merge)."""
    totals = snapshot['totals']
    views = sorted(totals)
    lines = []
    lines += family(
        'zope_pipeline_requests_total', 'counter',
        'Requests answered, by published view and status.',
        [('zope_pipeline_requests_total', labels(view=view, status=code),
          count) for view in views
         for code, count in sorted(totals[view]['statuses'].items())])
    lines += family(
        'zope_pipeline_request_duration_seconds', 'histogram',
        'Time from entering the pipeline to closing the response body.',
        duration_samples(snapshot['bounds'], totals, views))
    for name, key, text in (
            ('zope_pipeline_response_bytes_total', 'bytes',
             'Bytes of response bodies, by view.'),
            ('zope_pipeline_response_blocks_total', 'blocks',
             'Blocks (iterations and write() calls) of response bodies.'),
            ('zope_pipeline_retries_total', 'retries',
             'Attempts retried after a transient error (e.g. a conflict).')):
        lines += family(name, 'counter', text,
                        [(name, labels(view=view), totals[view][key])
                         for view in views])
    lines += gauges(snapshot)
    return '\n'.join(lines) + '\n'


def duration_samples(bounds, totals, views):
    name = 'zope_pipeline_request_duration_seconds'
    samples = []
    for view in views:
        cumulative = 0
        buckets = totals[view]['buckets']
        for bound, count in zip(list(bounds) + ['+Inf'], buckets):
            cumulative += count
            le = bound if bound == '+Inf' else repr(float(bound))
            samples.append((name + '_bucket', labels(view=view, le=le),
                            cumulative))
        samples.append((name + '_sum', labels(view=view),
                        totals[view]['duration']))
        samples.append((name + '_count', labels(view=view), cumulative))
    return samples


def gauges(snapshot):
    step = last_complete_step(snapshot)
    ours = server = None
    if step is not None:
        ours = utilization(step['busy'], step['capacity'])
        server = utilization(step['server_busy'], step['server_capacity'])
    lines = family(
        'zope_pipeline_capacity_utilization', 'gauge',
        'Busy thread-seconds over available thread-seconds of the group '
        'in the last complete step.',
        [('zope_pipeline_capacity_utilization', '', ours)])
    if server is not None:
        lines += family(
            'zope_pipeline_modwsgi_capacity_utilization', 'gauge',
            "mod_wsgi's own capacity utilisation in the same step.",
            [('zope_pipeline_modwsgi_capacity_utilization', '', server)])
    lines += family(
        'zope_pipeline_processes', 'gauge',
        'Processes of the group with live metrics state.',
        [('zope_pipeline_processes', '', snapshot['processes'])])
    return lines
