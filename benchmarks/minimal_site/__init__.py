"""A benchmark-only site, used when the sample site (zope.pipeline.sample)
is absent: ``/folder/page`` is a page template listing ten item titles."""
