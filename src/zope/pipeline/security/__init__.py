"""Security: who may do what, and what must never be served by accident.

``models`` (the two security models a chain is compiled with and the
view rules they follow), ``policy`` (the Zope security policy),
``passwords`` and ``credentials`` (password hashes; known default
passwords), ``failedlogins`` (the login throttle), ``privatefiles``
(directories and secrets created for their owner only) and
``checkerleak`` (the workaround for zope.security's C checker leak).

It builds on ``http`` and ``zodb``, never on the engine or the stages.
"""
