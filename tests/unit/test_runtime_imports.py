"""The run-time modules import no test package (the test extra's)."""

import subprocess
import sys

#: The test and compat extras' packages (zope.app.* modules, not the bare
#: namespace; zope.testing aside: its clean-up hook is imported optionally
#: by zope.component, zope.security and the metrics runtime alike).
TEST_PACKAGES = ('pytest', '_pytest', 'webtest', 'hypothesis', 'matplotlib',
                 'zope.testbrowser', 'zope.testrunner', 'zope.app.')

IMPORT_EVERYTHING = '''
import importlib, pkgutil, sys
import zope.pipeline
for module in pkgutil.walk_packages(zope.pipeline.__path__,
                                    'zope.pipeline.'):
    if not module.name.startswith(('zope.pipeline.testing',
                                   'zope.pipeline.sample')):
        importlib.import_module(module.name)
print('\\n'.join(sorted(sys.modules)))
'''


def test_no_run_time_module_imports_a_test_package():
    loaded = subprocess.run(
        [sys.executable, '-c', IMPORT_EVERYTHING], check=True,
        capture_output=True, text=True).stdout.split()
    assert 'zope.pipeline.metrics.runtime' in loaded
    assert [name for name in loaded
            if name.startswith(TEST_PACKAGES)] == []
