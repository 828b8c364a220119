"""HTTP and WSGI, without Zope: what a request is made of and how an
answer is sent.

``wsgi`` (deferred start, closing iterators, small responses), ``bodies``
(the request body read once), ``cookies``, ``hosts``, ``addresses`` and
``origins`` (the settings that name clients and sites), ``paths`` (dot
segments), ``logtext`` (client text made safe for a log line) and
``errors`` (what an exception means for the answer: a bad request, a
retry, a 503).

Nothing here imports the rest of zope.pipeline but its base modules
(``interfaces``, ``environ``, ``components``).
"""
