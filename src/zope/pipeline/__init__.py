"""zope.pipeline: the Zope publisher as an explicit WSGI pipeline."""
