"""Request metrics: aggregation with RRDTool semantics and exporters.

The ``metrics`` stage (``zope.pipeline.stages.metrics``) fills one
``Record`` per request; ``collector`` aggregates records per process into
fixed steps (``rrd`` has the step arithmetic) and lifetime totals;
``runtime`` runs the background worker that feeds ``statsd``, the
per-process state files of ``group`` and mod_wsgi's reader (``modwsgi``);
``prometheus`` renders the group's numbers for ``/_metrics`` and
``admin`` draws them (``charts``) for administrators.
"""

from zope.interface import Attribute
from zope.interface import Interface

# The environ key of the request's metrics Record, importable from here
# where it used to be defined; zope.pipeline.environ defines every key.
from zope.pipeline.environ import RECORD_KEY  # noqa: F401 E402 - re-exported


class IMetricsRuntime(Interface):
    """The metrics of this process (registered by the metrics stage)."""

    collector = Attribute('The Collector of this process.')
    chart_steps = Attribute('How many recent steps pages show.')

    def group_snapshot():
        """Return the merged numbers of every process of the group."""
