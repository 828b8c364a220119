"""zope.pipeline.compiled: a hot module's compiled copy replaces it only
when it was built from the source beside it and the environment does not
ask for Python."""

import importlib.machinery
import logging
import os
import pickle
import subprocess
import sys
import types

import pytest

from zope.pipeline import compiled

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
SOURCE = b'VALUE = "python"\n'


@pytest.fixture
def module_file(tmp_path):
    """A module's source, with its _compiled directory (empty)."""
    path = tmp_path / 'hot.py'
    path.write_bytes(SOURCE)
    (tmp_path / compiled.COMPILED_DIRECTORY).mkdir()
    return str(path)


def build(module_file, basename='hot'):
    """Put a (fake) compiled copy of ``basename`` beside module_file."""
    path = os.path.join(os.path.dirname(module_file),
                        compiled.COMPILED_DIRECTORY, basename + SUFFIX)
    with open(path, 'wb') as output:
        output.write(b'\x7fELF')
    return path


def copy_of(source, name='scratch.hot'):
    """What loading the compiled copy of ``source`` gives: a module whose
    globals name the digest the build appended."""
    module = types.ModuleType(name)
    exec(source + compiled.digest_line(source).encode('ascii'),
         vars(module))
    module.VALUE = 'compiled'
    return module


@pytest.fixture
def loads(monkeypatch):
    """Replaces compiled.load; records what it was asked to load."""
    asked = []

    def install(result):
        def load(name, path):
            asked.append((name, path))
            if isinstance(result, Exception):
                raise result
            return result
        monkeypatch.setattr(compiled, 'load', load)
        return asked
    return install


@pytest.fixture
def python_module(monkeypatch, module_file):
    """The Python module scratch.hot, in sys.modules, with its globals."""
    module = types.ModuleType('scratch.hot')
    module.__file__ = module_file
    exec(SOURCE, vars(module))
    monkeypatch.setitem(sys.modules, 'scratch.hot', module)
    return module


@pytest.mark.parametrize('environ, pure', [
    ({}, False),
    ({'ZOPE_PIPELINE_PURE_PYTHON': ''}, False),
    ({'ZOPE_PIPELINE_PURE_PYTHON': '0'}, False),
    ({'ZOPE_PIPELINE_PURE_PYTHON': '1'}, True),
    ({'PURE_PYTHON': '1'}, True),
    ({'PURE_PYTHON': '0', 'ZOPE_PIPELINE_PURE_PYTHON': 'yes'}, True),
])
def test_pure_python_follows_zope_pipelines_variable_and_zopes_own(
        environ, pure):
    assert compiled.pure_python(environ) is pure


def test_a_module_is_compiled_when_its_file_is_an_extension_module():
    assert compiled.is_compiled({'__file__': '/x/_compiled/hot' + SUFFIX})
    assert not compiled.is_compiled({'__file__': '/x/hot.py'})
    assert not compiled.is_compiled({})


def test_the_compiled_copy_is_found_in_the_compiled_directory_beside(
        module_file):
    assert compiled.compiled_path(module_file, 'scratch.hot') is None
    path = build(module_file)
    assert compiled.compiled_path(module_file, 'scratch.hot') == path
    assert compiled.compiled_path(module_file, 'scratch.cold') is None


def test_the_digest_line_names_the_digest_of_the_source(module_file):
    module = copy_of(SOURCE)
    assert getattr(module, compiled.SOURCE_DIGEST) == \
        compiled.source_digest(module_file) == compiled.digest(SOURCE)
    assert compiled.source_digest(module_file + '.gone') is None


def test_a_copy_built_from_this_source_replaces_the_module(
        python_module, module_file, loads):
    path = build(module_file)
    copy = copy_of(SOURCE)
    asked = loads(copy)
    assert compiled.use_compiled(vars(python_module), environ={}) is copy
    assert sys.modules['scratch.hot'] is copy
    assert asked == [('scratch.hot', path)]


def test_a_copy_built_from_another_source_is_not_used(
        python_module, module_file, loads, caplog):
    build(module_file)
    loads(copy_of(b'VALUE = "edited since"\n'))
    with caplog.at_level(logging.WARNING, logger=compiled.__name__):
        assert compiled.use_compiled(vars(python_module),
                                     environ={}) is python_module
    assert sys.modules['scratch.hot'] is python_module
    assert 'built from another source' in caplog.text


def test_a_copy_that_fails_to_load_is_logged_and_not_used(
        python_module, module_file, loads, caplog):
    build(module_file)
    loads(ImportError('undefined symbol: PyInit_hot'))
    with caplog.at_level(logging.WARNING, logger=compiled.__name__):
        assert compiled.use_compiled(vars(python_module),
                                     environ={}) is python_module
    assert 'undefined symbol' in caplog.text


@pytest.mark.parametrize('environ', [{'ZOPE_PIPELINE_PURE_PYTHON': '1'},
                                     {'PURE_PYTHON': '1'}])
def test_pure_python_keeps_the_python_module(python_module, module_file,
                                             loads, environ):
    build(module_file)
    asked = loads(copy_of(SOURCE))
    assert compiled.use_compiled(vars(python_module),
                                 environ=environ) is python_module
    assert asked == []


def test_without_a_compiled_copy_the_python_module_stays(
        python_module, loads):
    asked = loads(copy_of(SOURCE))
    assert compiled.use_compiled(vars(python_module),
                                 environ={}) is python_module
    assert asked == []


def test_a_module_without_a_file_stays(python_module, loads):
    del python_module.__file__
    asked = loads(copy_of(SOURCE))
    assert compiled.use_compiled(vars(python_module),
                                 environ={}) is python_module
    assert asked == []


def test_in_the_compiled_copy_itself_nothing_happens(monkeypatch, loads):
    copy = types.ModuleType('scratch.hot')
    copy.__file__ = '/x/_compiled/hot' + SUFFIX
    monkeypatch.setitem(sys.modules, 'scratch.hot', copy)
    asked = loads(None)
    assert compiled.use_compiled(vars(copy), environ={}) is copy
    assert asked == []


def test_every_compiled_module_ends_by_asking_for_its_copy():
    for name in compiled.MODULES:
        path = os.path.join(os.path.dirname(compiled.__file__),
                            *name.split('.')[2:]) + '.py'
        with open(path) as source:
            code = source.read()
        assert code.rstrip().endswith('use_compiled(globals())'), name


def run_python(code, **environ):
    env = dict(os.environ, **environ)
    env.pop('PURE_PYTHON', None)
    completed = subprocess.run([sys.executable, '-c', code], env=env,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.split()


BUILT = all(compiled.compiled_path(
    os.path.join(os.path.dirname(compiled.__file__),
                 *name.split('.')[2:]) + '.py', name)
    for name in compiled.MODULES)

# CI builds the package with Cython: there the copies must be there.
needs_copies = pytest.mark.skipif(
    not BUILT and not os.environ.get('CI'),
    reason='zope.pipeline was built without its compiled modules')


@needs_copies
def test_the_built_copies_are_imported_under_the_modules_own_names():
    lines = run_python(
        'import pickle\n'
        'from zope.pipeline import compiled\n'
        'for name, path in compiled.status().items():\n'
        '    print(name, path.rpartition("/")[0].endswith("/_compiled"))\n'
        'from zope.pipeline.securitypolicy import ZopeSecurityPolicy\n'
        'print(ZopeSecurityPolicy.__module__)\n'
        'print(pickle.loads(pickle.dumps(ZopeSecurityPolicy))\n'
        '      is ZopeSecurityPolicy)\n',
        ZOPE_PIPELINE_PURE_PYTHON='')
    assert lines == [word for name in compiled.MODULES
                     for word in (name, 'True')] + [
        'zope.pipeline.securitypolicy', 'True']


@needs_copies
def test_pure_python_imports_the_python_modules_though_copies_were_built():
    lines = run_python(
        'from zope.pipeline import compiled\n'
        'for path in compiled.status().values(): print(path[-3:])\n',
        ZOPE_PIPELINE_PURE_PYTHON='1')
    assert lines == ['.py'] * len(compiled.MODULES)


@needs_copies
def test_an_edited_module_is_not_shadowed_by_the_copy_built_before():
    lines = run_python(
        'from zope.pipeline import compiled\n'
        'compiled.source_digest = lambda path: "edited"\n'
        'import zope.pipeline.securitypolicy as module\n'
        'print(module.__file__[-3:])\n',
        ZOPE_PIPELINE_PURE_PYTHON='')
    assert lines == ['.py']


def test_the_status_names_the_file_each_module_was_loaded_from():
    status = compiled.status()
    assert list(status) == list(compiled.MODULES)
    for name, path in status.items():
        assert path == sys.modules[name].__file__


def test_the_python_modules_pickle_under_their_own_names_too():
    from zope.pipeline.securitypolicy import ZopeSecurityPolicy
    assert pickle.loads(pickle.dumps(ZopeSecurityPolicy)) \
        is ZopeSecurityPolicy


@needs_copies
def test_load_runs_a_copy_as_the_module_it_was_compiled_from():
    name = 'zope.pipeline.factories'
    source = os.path.join(os.path.dirname(compiled.__file__), 'factories.py')
    module = compiled.load(name, compiled.compiled_path(source, name))
    assert module.__name__ == name
    assert compiled.is_compiled(vars(module))
    assert module.BrowserRequest.__module__ == name
    assert getattr(module, compiled.SOURCE_DIGEST) == \
        compiled.source_digest(source)
