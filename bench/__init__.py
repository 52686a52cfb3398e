"""Benchmarks, run with ``python -m bench`` (``make bench``); see :mod:`bench.harness`."""
