"""Where the engine tests' ZCML and ini files are, and where in them.

The test sites in tests/engine name their stage factories
``tests.engine.stages.*``, so importing this module puts the project root
on ``sys.path``.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ENGINE = os.path.join(ROOT, 'tests', 'engine')

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def engine_file(name):
    """The absolute path of a file in tests/engine."""
    return os.path.join(ENGINE, name)


def line_of(path, text):
    """The number of the one line of ``path`` that contains ``text``."""
    with open(path) as lines:
        found = [number for number, line in enumerate(lines, 1)
                 if text in line]
    assert len(found) == 1, (path, text, found)
    return found[0]


def at(name, text):
    """``file:line`` of the registration in tests/engine/``name`` that
    contains ``text`` (each test registration is on one line)."""
    path = engine_file(name)
    return '%s:%d' % (path, line_of(path, text))
