"""Publishing a request with Zope's semantics: what the stages share.

``publication`` (``request.publication`` under zope.pipeline),
``traversers`` (the publishing traversers and the traversal policy),
``scene`` (what is in force on the thread while a request's code runs),
``responses`` (a zope.publisher response sent through WSGI),
``templates`` (view templates compiled by Chameleon) and ``debugpage``
(the error page in debug mode).

It builds on the engine and below; the stages build on it.
"""
