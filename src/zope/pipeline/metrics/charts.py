"""Inline SVG line charts of step series (no JavaScript, no libraries).

A series is a label, a colour, a dash pattern and ``[(step start, value or
None)]``; None (an unknown step) breaks the line instead of drawing zero.
"""

import html
import math
import time

WIDTH = 720
HEIGHT = 230
LEFT, RIGHT, TOP, BOTTOM = 52, 172, 30, 34
#: Longest legend label shown whole.
LABEL_LENGTH = 24

#: Colours of the series, in order (colour-blind safe, Okabe-Ito).
PALETTE = ('#0072B2', '#E69F00', '#009E73', '#CC79A7', '#D55E00',
           '#56B4E9', '#F0E442', '#000000')


class Line:
    """One series of a chart."""

    def __init__(self, label, points, color, dash=''):
        self.label = label
        self.points = points
        self.color = color
        self.dash = dash


def nice_maximum(value):
    """The smallest 1, 2 or 5 x 10^n at least ``value`` (1 for nothing)."""
    if not value or value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 5):
        if magnitude * factor >= value * (1 - 1e-12):
            return magnitude * factor
    return magnitude * 10


def segments(points):
    """Split points at unknown values into runs of known ones."""
    run = []
    for moment, value in points:
        if value is None:
            if run:
                yield run
            run = []
        else:
            run.append((moment, value))
    if run:
        yield run


def clock_label(moment):
    return time.strftime('%H:%M:%S', time.localtime(moment))


class LinearScale:
    """Values from 0 to a round maximum."""

    def __init__(self, values, maximum=None):
        self.top = maximum if maximum is not None else nice_maximum(
            max(values) if values else 0)
        self.ticks = [self.top * fraction for fraction in
                      (0, 0.25, 0.5, 0.75, 1)]

    def fraction(self, value):
        return min(value, self.top) / self.top


class LogScale:
    """Values over whole decades (for latencies that span several)."""

    def __init__(self, values):
        positive = [value for value in values if value > 0] or [1.0]
        self.low = math.floor(math.log10(min(positive)))
        self.high = max(math.ceil(math.log10(max(positive))), self.low + 1)
        self.ticks = [10.0 ** power
                      for power in range(self.low, self.high + 1)]

    def fraction(self, value):
        if value <= 0:
            return 0.0
        return ((math.log10(value) - self.low) / (self.high - self.low))


def tick_label(value):
    """Short tick text: 0.25, 5, 120, 2.5k."""
    if value >= 1000:
        return '%gk' % (value / 1000)
    return '%g' % round(value, 3)


def chart(title, unit, lines, begin, end, maximum=None, log=False):
    """Return an ``<svg>`` element drawing ``lines`` over ``[begin, end]``."""
    values = [value for line in lines for _, value in line.points
              if value is not None]
    scale = LogScale(values) if log else LinearScale(values, maximum)
    plot_width = WIDTH - LEFT - RIGHT
    plot_height = HEIGHT - TOP - BOTTOM
    span = (end - begin) or 1.0

    def x(moment):
        return LEFT + (moment - begin) / span * plot_width

    def y(value):
        return TOP + plot_height - scale.fraction(value) * plot_height

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="chart" '
             'width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
             'aria-label="%s">' % (WIDTH, HEIGHT, WIDTH, HEIGHT,
                                   html.escape(title)),
             '<title>%s</title>' % html.escape(title),
             '<text x="%d" y="18" class="title">%s (%s)</text>'
             % (LEFT, html.escape(title), html.escape(unit))]
    parts += axes(begin, end, scale.ticks, x, y)
    for index, line in enumerate(lines):
        parts += draw_line(line, x, y)
        parts.append(legend_entry(line, index))
    if not values:
        parts.append('<text x="%d" y="%d" class="empty">no complete steps '
                     'yet</text>' % (LEFT + plot_width / 2 - 60,
                                     TOP + plot_height / 2))
    parts.append('</svg>')
    return '\n'.join(parts)


def axes(begin, end, ticks, x, y):
    parts = []
    for value in ticks:
        parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                     'class="grid"/>' % (x(begin), y(value), x(end),
                                         y(value)))
        parts.append('<text x="%.1f" y="%.1f" class="tick" '
                     'text-anchor="end">%s</text>'
                     % (x(begin) - 6, y(value) + 4, tick_label(value)))
    for moment in (begin, (begin + end) / 2, end):
        parts.append('<text x="%.1f" y="%d" class="tick" '
                     'text-anchor="middle">%s</text>'
                     % (x(moment), HEIGHT - 12, clock_label(moment)))
    return parts


def draw_line(line, x, y):
    parts = []
    dash = ' stroke-dasharray="%s"' % line.dash if line.dash else ''
    for run in segments(line.points):
        if len(run) == 1:
            moment, value = run[0]
            parts.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>'
                         % (x(moment), y(value), line.color))
            continue
        points = ' '.join('%.1f,%.1f' % (x(moment), y(value))
                          for moment, value in run)
        parts.append('<polyline points="%s" fill="none" stroke="%s" '
                     'stroke-width="2"%s/>' % (points, line.color, dash))
    return parts


def legend_entry(line, index):
    top = TOP + 4 + index * 18
    left = WIDTH - RIGHT + 12
    dash = ' stroke-dasharray="%s"' % line.dash if line.dash else ''
    label = line.label if len(line.label) <= LABEL_LENGTH else \
        line.label[:LABEL_LENGTH - 1] + '…'
    return ('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
            'stroke-width="2"%s/><text x="%d" y="%d" class="legend">%s'
            '</text>' % (left, top, left + 18, top, line.color, dash,
                         left + 24, top + 4, html.escape(label)))
