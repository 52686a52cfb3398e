"""``python -m bench [module ...]``: run the benchmarks (see :mod:`bench.harness`)."""

import sys

from bench.harness import main

sys.exit(main())
