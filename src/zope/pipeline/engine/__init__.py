"""The engine: stages registered in ZCML, ordered, checked and compiled
into one chain per request type.

``zcml`` (the ``pipeline`` directives), ``registry`` (what a
configuration registered), ``ordering`` (the one topological sorter),
``contract`` (the environ keys a stage reads and writes), ``settings``
(typed stage settings), ``build`` (what a stage factory is given),
``factories`` and ``publications`` (request factories and the request
types of ``<publisher>`` registrations), ``publisher`` (the root WSGI
application: the outer chain, the switch, the compiled chains) and
``introspect`` (the compiled pipeline as data and text).

The engine knows no stage: it builds on ``http``, ``zodb`` and
``security`` only.
"""
