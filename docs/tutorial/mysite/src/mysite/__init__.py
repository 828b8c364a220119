"""mysite: notes, published by zope.pipeline."""
