"""What WSGI scripts import is run-time code: nothing from the
``zope-pipeline`` commands (zope.pipeline.commands), which are the CLI."""

import os
import re

from zope.pipeline.serving import modwsgi_express

from tests.conftest import ROOT

IMPORT_RE = re.compile(r'^\s*(?:from|import)\s+([\w.]+)', re.M)


def imported_modules(text):
    return set(IMPORT_RE.findall(text))


def test_the_system_apache_wsgi_script_imports_no_command():
    with open(os.path.join(ROOT, 'etc', 'app.wsgi')) as script:
        modules = imported_modules(script.read())
    assert 'zope.pipeline.serving.startup' in modules
    assert not {name for name in modules
                if name.startswith('zope.pipeline.commands')}


def test_the_generated_mod_wsgi_script_imports_no_command():
    modules = imported_modules(modwsgi_express.WSGI_SCRIPT)
    assert 'zope.pipeline.serving.startup' in modules
    assert not {name for name in modules
                if name.startswith('zope.pipeline.commands')}
