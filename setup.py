"""The compiled copies of zope.pipeline's hot modules.

Everything else about the package is in pyproject.toml.  Where Cython
and a C compiler are there (pip's build environment installs Cython, a
build requirement), each module ``zope.pipeline.compiled.MODULES`` names
is compiled to an extension module in ``_compiled/`` beside its source
(a wheel, ``pip install``, ``pip install -e``: the editable install
builds them in the checkout, where git ignores them).  Without Cython,
or where a module fails to compile, the package is built without that
copy and its Python module is used: the build does not fail.
``ZOPE_PIPELINE_PURE_BUILD=1`` builds none.

What is compiled is a copy of each source with one line appended, the
source's SHA-256 (``compiled.digest_line``), in ``build/cython-src``;
at import the module checks it against the ``.py`` beside it
(``zope.pipeline.compiled.use_compiled``).
"""

import importlib.util
import os

from setuptools import Extension
from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join('build', 'cython-src')


def load_compiled_module():
    """zope.pipeline.compiled, read from the source tree (it imports
    nothing of the package)."""
    path = os.path.join(HERE, 'src', 'zope', 'pipeline', 'compiled.py')
    spec = importlib.util.spec_from_file_location(
        '_zope_pipeline_compiled', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_if_changed(path, data):
    """Write ``data`` to ``path`` unless it holds it already (Cython
    recompiles a source whose file is newer than its C file)."""
    try:
        with open(path, 'rb') as existing:
            if existing.read() == data:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as output:
        output.write(data)


def extensions():
    if os.environ.get('ZOPE_PIPELINE_PURE_BUILD', '') not in ('', '0'):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print('zope.pipeline: Cython is not installed; the package is '
              'built without compiled modules')
        return []
    compiled = load_compiled_module()
    modules = []
    for name in compiled.MODULES:
        relative = os.path.join(*name.split('.')) + '.py'
        with open(os.path.join(HERE, 'src', relative), 'rb') as source:
            data = source.read()
        copy = os.path.join(SOURCES, relative)
        write_if_changed(os.path.join(HERE, copy),
                         data + compiled.digest_line(data).encode('ascii'))
        # optional: a module that fails to compile leaves its Python
        # module in use instead of failing the build.
        modules.append(Extension(name, [copy], optional=True))
    built = cythonize(
        modules, build_dir=os.path.join('build', 'cython-c'), quiet=True,
        compiler_directives={'language_level': 3, 'binding': True})
    for extension in built:
        # Compiled as the module itself (its classes' __module__, its
        # __name__), built into _compiled/ under the same file name.
        package, _, basename = extension.name.rpartition('.')
        extension.name = '%s.%s.%s' % (package, compiled.COMPILED_DIRECTORY,
                                       basename)
    return built


class BuildExt(build_ext):
    """setuptools' build_ext, making the ``_compiled`` directories of an
    in-place (editable) build before it copies the modules there."""

    def copy_extensions_to_source(self):
        for extension in self.extensions:
            package = extension.name.split('.')[:-1]
            os.makedirs(os.path.join(HERE, 'src', *package), exist_ok=True)
        super().copy_extensions_to_source()


setup(ext_modules=extensions(), cmdclass={'build_ext': BuildExt})
