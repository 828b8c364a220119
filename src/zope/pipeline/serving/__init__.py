"""Serving a site in server processes: waitress or mod_wsgi daemons.

``startup`` (loading a site once, and never half; the readiness markers
it leaves are ``stages.readiness``'s, where the balancer's answer is),
``rolling`` (daemon processes restarted
one at a time), ``modwsgi_express`` (the mod_wsgi-express and Apache
configuration), ``layout`` (where a served site's files live and who may
change them) and ``ownership`` (running as root, serving as the daemon
user).

It builds on ``zope.pipeline.app`` and everything below; only the
commands build on it.
"""
