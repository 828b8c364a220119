"""The view-checked peer's view: the pipeline peer's, trusted."""

from zope.interface import implementer

from zope.pipeline.interfaces import ITrustedView

from benchmarks.peers.pipeline_peer.content import PageView


@implementer(ITrustedView)
class TrustedPageView(PageView):
    """Called unproxied; its permission is checked before the call."""
