"""The one seam for code that stands in for another package's code.

Everything in zope.pipeline that replaces, copies or reads the private
state of another package lives here, one module per package it stands
in for (``zope_component``, ``zope_publisher``...).  Each module's
docstring names what it buys, measured (instructions per request of the
peers' page, ``python -m benchmarks.instructions``), and the upstream
change that would retire it; each has ``install()`` and ``uninstall()``.

Nothing here is installed by importing it: ``make_app`` (and
``make_publisher_for_loaded_site``) call ``apply`` when the application
is made.  ``speedups = false`` in the application's ini section, or
``ZOPE_PIPELINE_SPEEDUPS=0`` in the environment (which wins over the
ini), leaves them all out: the stock code of zope.publisher,
zope.component, zope.container's traversers, zope.browserpage,
transaction and RelStorage's poll runs then, and every
suite passes both ways (CI runs the functional and compat suites
without them too).  Installing is process-wide, as the packages it
stands in for are: the last application made decides.
"""

import importlib
import os

#: The environment variable that, when set, decides whether the speedups
#: are installed (``0``, ``false``, ``no``, ``off``: not), whatever the
#: ini says.
ENVIRONMENT_VARIABLE = 'ZOPE_PIPELINE_SPEEDUPS'

#: The modules of the seam, installed in this order (uninstalled in the
#: reverse order).
MODULES = ('relstorage', 'zope_browserpage', 'zope_component',
           'zope_container', 'zope_publisher')

OFF = ('0', 'false', 'no', 'off')


class State:
    """Whether the speedups are installed in this process."""
    installed = False


def modules():
    return [importlib.import_module('%s.%s' % (__name__, name))
            for name in MODULES]


def wanted(setting=True):
    """Whether to install the speedups: ``ZOPE_PIPELINE_SPEEDUPS`` when
    it is set, else ``setting`` (the ini's ``speedups``)."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, '').strip().lower()
    if value:
        return value not in OFF
    return bool(setting)


def install():
    """Install every speedup (nothing when they are installed)."""
    if State.installed:
        return
    for module in modules():
        module.install()
    State.installed = True


def uninstall():
    """Put the stock code back (nothing when none is installed)."""
    if not State.installed:
        return
    for module in reversed(modules()):
        module.uninstall()
    State.installed = False


def apply(setting=True):
    """Install the speedups or take them out, as ``wanted(setting)``
    says; return whether they are installed."""
    if wanted(setting):
        install()
    else:
        uninstall()
    return State.installed
