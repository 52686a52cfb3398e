"""The benchmark harness behind ``python -m bench`` (``make bench``).

A benchmark module is a module ``bench.<name>`` with a function ``run() -> list[Result]``; add its
name to :data:`MODULES` to have it run by default. ``python -m bench evaluation`` runs only the
modules named. Results are printed as a table and written to ``bench-results.json`` as a list of
``{"name", "value", "unit"}`` objects, plus ``"peer"``, ``"peer_value"`` and ``"ratio"`` (value /
peer value, higher is better for rates) when a peer was measured in the same run.

Timing follows :mod:`timeit`'s practice: a fixed batch of work, one untimed warm-up pass (tables
and memos are then as they are in a long-running server), the garbage collector off while timing,
and the best of a few repeats, which is the figure least disturbed by other load on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

MODULES: Final = (
    "evaluation",
    "hand",
    "sealing",
    "deck_secrets",
    "fairness",
    "services",
    "wallet",
    "cluster",
    "growth",
)
"""Benchmark modules run by default, in order."""

RESULTS_FILE: Final = Path("bench-results.json")


@dataclass(frozen=True, slots=True)
class Result:
    """One measured figure, optionally next to the same figure for a peer implementation."""

    name: str
    value: float
    unit: str
    peer: str | None = None
    peer_value: float | None = None

    @property
    def ratio(self) -> float | None:
        """``value / peer_value``, or None without a peer."""
        if self.peer_value is None or self.peer_value == 0:
            return None
        return self.value / self.peer_value

    def as_json(self) -> dict[str, object]:
        """The JSON object written to ``bench-results.json``."""
        record: dict[str, object] = {"name": self.name, "value": self.value, "unit": self.unit}
        if self.peer is not None:
            record.update(peer=self.peer, peer_value=self.peer_value, ratio=self.ratio)
        return record


class BenchModule(Protocol):
    """What a benchmark module provides."""

    def run(self) -> list[Result]: ...


def rates(batches: dict[str, Callable[[], int]], repeats: int = 5) -> dict[str, float]:
    """Operations per second of each batch: best of ``repeats`` timed runs after a warm-up.

    A batch does a fixed amount of work and returns how many operations it did. The batches are
    interleaved within each repeat so that a slow moment of the machine hits them alike.
    """
    for batch in batches.values():
        batch()  # warm-up, untimed
    best = dict.fromkeys(batches, float("inf"))
    with gc_paused():
        for _ in range(repeats):
            for name, batch in batches.items():
                start = time.perf_counter()
                count = batch()
                best[name] = min(best[name], (time.perf_counter() - start) / count)
    return {name: 1 / seconds for name, seconds in best.items()}


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection in this process within the block (the timed part of a benchmark):
    a load generator's own collection pauses would be counted as the measured server's latency."""
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()


def format_value(value: float) -> str:
    """A figure with thousands separators, or two decimals below 100."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def format_table(results: Sequence[Result]) -> str:
    """The results as an aligned text table."""
    header = ("benchmark", "value", "unit", "peer", "peer value", "ratio")
    rows = [
        (
            result.name,
            format_value(result.value),
            result.unit,
            result.peer or "",
            "" if result.peer_value is None else format_value(result.peer_value),
            "" if result.ratio is None else f"{result.ratio:.2f}x",
        )
        for result in results
    ]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    numeric = {1, 4, 5}
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.rjust(width) if column in numeric else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def write_results(results: Sequence[Result], path: Path = RESULTS_FILE) -> None:
    """Write the results as a JSON list."""
    path.write_text(json.dumps([result.as_json() for result in results], indent=2) + "\n")


def run_modules(names: Sequence[str]) -> tuple[list[Result], list[str]]:
    """Import ``bench.<name>`` for each name and collect what its ``run()`` returns; the
    results, and the names of the modules that failed (each failure printed with its
    traceback: one broken module does not cost the others' figures)."""
    results: list[Result] = []
    failed: list[str] = []
    for name in names:
        module: BenchModule = importlib.import_module(f"bench.{name}")
        print(f"running bench.{name} ...", flush=True)
        try:
            results.extend(module.run())
        except Exception:
            traceback.print_exc()
            print(f"bench.{name} failed: its figures are missing from the results", flush=True)
            failed.append(name)
    return results, failed


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the chosen (or all) benchmark modules, print and save the results."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules",
        nargs="*",
        metavar="module",
        help=f"modules to run (default: {', '.join(MODULES)})",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_FILE, help="JSON results file")
    parser.add_argument(
        "--large",
        action="store_true",
        help="the growth curves' larger sizes (BENCH_GROWTH_SCALE=10 unless set: see bench.growth)",
    )
    options = parser.parse_args(argv)
    if options.large:
        os.environ.setdefault("BENCH_GROWTH_SCALE", "10")
    names = options.modules or list(MODULES)
    unknown = [name for name in names if importlib.util.find_spec(f"bench.{name}") is None]
    if unknown:
        parser.error(f"no benchmark module named {', '.join(unknown)}")
    started = time.perf_counter()
    results, failed = run_modules(names)
    print()
    print(format_table(results))
    write_results(results, options.output)
    elapsed = time.perf_counter() - started
    print(f"\n{len(results)} results written to {options.output} in {elapsed:.1f} s")
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
