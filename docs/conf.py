"""Sphinx configuration of the zope.pipeline documentation.

Build with ``make docs`` (warnings are errors).  The chains of the
standard request types are generated at build time from
``zope-pipeline show-pipeline`` (``_ext/pipeline_chains.py``), the API
reference from the interfaces and the ZCML directives' schemas.
"""

import datetime
import importlib.metadata
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '_ext'))

project = 'zope.pipeline'
author = 'Zope Foundation and Contributors'
copyright = '%d, %s' % (datetime.date.today().year, author)
release = importlib.metadata.version('zope.pipeline')
version = '.'.join(release.split('.')[:2])

extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.viewcode',
    'repoze.sphinx.autointerface',
    'myst_parser',
    'pipeline_chains',
]

source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
master_doc = 'index'
exclude_patterns = ['_build']
myst_heading_anchors = 3
# The Markdown pages link to files of the repository (etc/, tests/...),
# which are not documents of this site.
suppress_warnings = ['myst.xref_missing']

autodoc_member_order = 'bysource'
autodoc_default_options = {'members': True}

html_theme = 'furo'
html_title = 'zope.pipeline %s' % release
