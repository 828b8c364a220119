"""``python -m benchmarks``: run the zope.pipeline benchmarks."""

import sys

from benchmarks.cli import main

sys.exit(main())
