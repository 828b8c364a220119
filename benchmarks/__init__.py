"""The zope.pipeline benchmark harness (``python -m benchmarks`` in a
checkout; it is not installed with zope.pipeline): ab runs against
waitress and mod_wsgi, verified server-side, with the plain-WSGI ceiling,
the in-process cost of the pipeline and its stages, worker start-up and
the write path."""
