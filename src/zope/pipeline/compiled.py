"""zope.pipeline's hot modules, compiled by Cython where the build could.

The modules ``MODULES`` names are plain Python.  Building the package
with Cython (``pip install``, a wheel: ``setup.py`` does it when Cython
and a C compiler are there) also compiles each of them to an extension
module in ``_compiled/`` beside its source: ``securitypolicy.py`` to
``_compiled/securitypolicy.cpython-311-x86_64-linux-gnu.so``.  The last
statement of each of those modules is ``use_compiled(globals())``: once
the Python module has run, the compiled copy of the same source is
loaded under the same name and replaces it in ``sys.modules``, so
importers, ``zope.configuration`` and pickles get the compiled module,
its classes and functions, under the names they always had.

The Python module stays in use when

- the environment sets ``ZOPE_PIPELINE_PURE_PYTHON`` or ``PURE_PYTHON``
  (zope.interface's, zope.security's and persistent's switch for their C
  code) to anything but ``0`` or nothing: the test suite's coverage run
  sets the first, since coverage cannot trace compiled code;
- no compiled copy was built (no Cython or no compiler at build time,
  another Python version);
- the compiled copy was built from another source than the ``.py``
  beside it: each copy carries the SHA-256 of the source it was compiled
  from (``SOURCE_DIGEST``), so a development checkout's edited module is
  never shadowed by a stale build;
- loading the compiled copy fails (it is logged).

This module imports nothing of zope.pipeline's: ``setup.py`` reads
``MODULES`` and ``digest_line`` from it before anything is installed.
"""

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import sys

#: The modules compiled by Cython where the build can.  Each ends with
#: ``use_compiled(globals())``.
MODULES = (
    'zope.pipeline.securitypolicy',
    'zope.pipeline.components',
    'zope.pipeline.templates',
    'zope.pipeline.traversers',
    'zope.pipeline.factories',
)

#: The variables that keep the Python modules in use.
PURE_PYTHON_VARIABLES = ('ZOPE_PIPELINE_PURE_PYTHON', 'PURE_PYTHON')

#: The directory, beside a module's source, of its compiled copy.
COMPILED_DIRECTORY = '_compiled'

#: The global a compiled copy holds: the SHA-256 of its source.
SOURCE_DIGEST = '__zope_pipeline_source_digest__'

log = logging.getLogger(__name__)


def digest(source):
    """The SHA-256 (hex) of a module's source, as bytes."""
    return hashlib.sha256(source).hexdigest()


def digest_line(source):
    """The line the build appends to the copy of ``source`` it compiles:
    the copy's global ``SOURCE_DIGEST``, naming ``source``'s digest."""
    return '\n%s = %r\n' % (SOURCE_DIGEST, digest(source))


def pure_python(environ=os.environ):
    """True when the environment asks for the Python modules."""
    return any(environ.get(name, '') not in ('', '0')
               for name in PURE_PYTHON_VARIABLES)


def is_compiled(module_globals):
    """True when ``module_globals`` are a compiled module's."""
    return module_globals.get('__file__', '').endswith(
        tuple(importlib.machinery.EXTENSION_SUFFIXES))


def compiled_path(module_file, name):
    """The compiled copy built for the module ``name`` whose source is
    ``module_file``, or None when none was built for this Python."""
    directory = os.path.join(os.path.dirname(module_file),
                             COMPILED_DIRECTORY)
    basename = name.rpartition('.')[2]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, basename + suffix)
        if os.path.isfile(path):
            return path
    return None


def source_digest(module_file):
    """The digest of the source at ``module_file``, or None when it
    cannot be read."""
    try:
        with open(module_file, 'rb') as source:
            return digest(source.read())
    except OSError:
        return None


def load(name, path):
    """Run the extension module at ``path`` as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def use_compiled(module_globals, environ=os.environ):
    """Replace the module whose globals these are by its compiled copy,
    if one was built from its source and the environment does not ask
    for Python; returns the module now in ``sys.modules`` under its name.

    Called last in the module's own code: the import system hands the
    importer whatever ``sys.modules`` holds under the name when the
    module's code has run.  In the compiled copy, which runs the same
    code, it does nothing."""
    name = module_globals['__name__']
    if is_compiled(module_globals) or pure_python(environ):
        return sys.modules.get(name)
    module_file = module_globals.get('__file__')
    path = compiled_path(module_file, name) if module_file else None
    if path is None:
        return sys.modules.get(name)
    try:
        module = load(name, path)
    except Exception:
        log.exception('The compiled copy of %s (%s) could not be loaded; '
                      'its Python module is used', name, path)
        return sys.modules.get(name)
    if getattr(module, SOURCE_DIGEST, None) != source_digest(module_file):
        log.warning('The compiled copy of %s (%s) was built from another '
                    'source than %s; the Python module is used',
                    name, path, module_file)
        return sys.modules.get(name)
    sys.modules[name] = module
    return module


def status():
    """{module name: the file it was loaded from} for ``MODULES``, as
    imported in this process."""
    result = {}
    for name in MODULES:
        importlib.import_module(name)
        result[name] = sys.modules[name].__file__
    return result
