"""The database: ZODB and RelStorage as a served site uses them.

``storage`` (the database of a process, opened after fork, closed at
exit), ``mysqltimeouts`` (the ``<mysql-with-timeouts>`` ZConfig section),
``maintenance`` (pack and check, online), ``compat`` (fixes for
RelStorage, applied before a storage opens) and ``responsecache`` (pages
kept with the objects they read, dropped when a commit changes one).

It builds on ``http`` (which errors are outages) only.
"""
