"""The sample site: a small but real content site published by the
pipeline.

Folders, pages listing their items (``/folder/page`` lists ten), comments
written to the database by a form, a search over titles, a protected edit
view, a custom 404 page, static resources and a counter that concurrent
POSTs make conflict.  ``content.populate`` is the ``open_root.populate``
callable that fills a new database; ``configure.zcml`` registers the views
and the security declarations; ``etc/site.zcml`` includes it.
"""

#: The page the benchmarks and the peer comparisons request.
PAGE_PATH = '/folder/page'

#: The comments form (path, fields): a POST that writes to the database.
COMMENTS_FORM = (PAGE_PATH + '/@@add-comment',
                 (('author', 'bench'),
                  ('text', 'A comment from the benchmark')))
