"""Inline SVG line charts of step series (no JavaScript, no libraries).

A series is a label, a colour, a dash pattern and ``[(step start, value or
None)]``; None (an unknown step) breaks the line instead of drawing zero.
The legend goes below the time axis, in rows laid out from an upper bound
of each label's width; the chart's height grows by its rows, and its
viewBox lets the page scale it to the width it has.
"""

import html
import math
import time

WIDTH = 720
#: Height of the title, plot and time axis, without the legend.
HEIGHT = 230
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 30, 34
#: Legend rows: their height, and the room before the first one.
LEGEND_ROW, LEGEND_GAP = 18, 6
#: Size of the legend text (the page's style sets the same), and upper
#: bounds of a character's advance in em, as in DejaVu Sans (the widest
#: common sans-serif): most lower case and digits, then capitals, then
#: the widest letters and the symbols.
LEGEND_FONT = 11
NARROW, CAPITAL, WIDE = 0.66, 0.8, 1.0
NARROW_CHARACTERS = frozenset(
    'abcdefghijklnopqrstuvxyz0123456789 .,:;-_/()[]\'|!')
WIDE_CHARACTERS = frozenset('MWmw')
SAMPLE_WIDTH = 24
#: Room between two entries of one legend row.
ENTRY_GAP = 14

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
    places = legend_places(lines)
    rows = max((row for row, _ in places), default=-1) + 1
    height = HEIGHT + (LEGEND_GAP + rows * LEGEND_ROW if rows else 0)

    def x(moment):
        return LEFT + (moment - begin) / span * plot_width

    def y(value):
        return TOP + plot_height - scale.fraction(value) * plot_height

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="chart" '
             'viewBox="0 0 %d %d" preserveAspectRatio="xMinYMin meet" '
             'role="img" aria-label="%s">' % (WIDTH, height,
                                              html.escape(title)),
             '<title>%s</title>' % html.escape(title),
             '<text x="%d" y="18" class="title">%s (%s)</text>'
             % (LEFT, html.escape(title), html.escape(unit)),
             '<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>'
             % (LEFT, TOP, plot_width, plot_height)]
    parts += axes(begin, end, scale.ticks, x, y)
    for line in lines:
        parts += draw_line(line, x, y)
    if lines:
        parts.append('<g class="legend">')
        parts += [legend_entry(line, row, left) for line, (row, left)
                  in zip(lines, places)]
        parts.append('</g>')
    if not values:
        parts.append('<text x="%d" y="%d" class="empty">no complete steps '
                     'yet</text>' % (LEFT + plot_width / 2 - 60,
                                     TOP + plot_height / 2))
    parts.append('</svg>')
    return '\n'.join(parts)


def character_width(character):
    """Upper bound of the advance of ``character`` in the legend, in px."""
    if character in NARROW_CHARACTERS:
        em = NARROW
    elif character.isupper() and character not in WIDE_CHARACTERS:
        em = CAPITAL
    else:
        em = WIDE
    return em * LEGEND_FONT


def entry_width(line):
    """Upper bound of the width of a legend entry (sample and label)."""
    return SAMPLE_WIDTH + sum(map(character_width, line.label))


def legend_places(lines):
    """``[(row, left)]`` of each legend entry, rows as wide as the chart.

    A label too long for a row of its own is squeezed to the row's width
    by ``legend_entry`` (``textLength``), never cut.
    """
    places, row, left = [], 0, LEFT
    for line in lines:
        width = entry_width(line)
        if left > LEFT and left + width > WIDTH - RIGHT:
            row, left = row + 1, LEFT
        places.append((row, left))
        left += width + ENTRY_GAP
    return places


def axes(begin, end, ticks, x, y):
    parts = []
    for value in ticks:
        parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                     'class="grid"/>' % (x(begin), y(value), x(end),
                                         y(value)))
        parts.append('<text x="%.1f" y="%.1f" class="tick" '
                     'text-anchor="end">%s</text>'
                     % (x(begin) - 6, y(value) + 4, tick_label(value)))
    for moment, anchor in ((begin, 'start'), ((begin + end) / 2, 'middle'),
                           (end, 'end')):
        parts.append('<text x="%.1f" y="%d" class="tick" '
                     'text-anchor="%s">%s</text>'
                     % (x(moment), HEIGHT - 12, anchor, clock_label(moment)))
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


def legend_entry(line, row, left):
    """One legend entry: a sample of the line and its whole label."""
    middle = HEIGHT + LEGEND_GAP + row * LEGEND_ROW + LEGEND_ROW / 2
    dash = ' stroke-dasharray="%s"' % line.dash if line.dash else ''
    room = WIDTH - RIGHT - left - SAMPLE_WIDTH
    squeeze = ''
    if entry_width(line) - SAMPLE_WIDTH > room:
        squeeze = (' textLength="%d" lengthAdjust="spacingAndGlyphs"'
                   % room)
    return ('<g class="legend-entry"><line x1="%d" y1="%.1f" x2="%d" '
            'y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%d" '
            'y="%.1f" class="legend"%s>%s</text></g>' % (
                left, middle, left + 18, middle, line.color, dash,
                left + SAMPLE_WIDTH, middle + 4, squeeze,
                html.escape(line.label)))
