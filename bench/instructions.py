"""A child process's instructions counted by callgrind: a cost figure the machine's load does not
move (CPU seconds on a shared 2-core machine vary by a third between runs of the same code).

``BENCH_DEALER_INSTRUCTIONS=<directory>`` runs the benchmark's dealer under
``valgrind --tool=callgrind`` with instrumentation off until the timed window opens
(:func:`count`), and reports its instructions per append. Valgrind runs Python some 50 times
slower, so the dealer's throughput figures of such a run mean nothing; its instructions per
append do (the same code path per command, at a smaller batch only if the slower dealer
batches less: compare runs' ``mean_batch`` too).

>>> wrap(["python", "-m", "poker.dealer"], Path("/tmp/cg.out"))[:3]
['valgrind', '--tool=callgrind', '--instr-atstart=no']
>>> parse_total("events: Ir\\nsummary: 7\\ntotals: 12\\n")
12
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Final

ENV: Final = "BENCH_DEALER_INSTRUCTIONS"
#: Valgrind's start-up of the dealer (imports run 50 times slower) and its final dump.
SLOW_START_S: Final = 600.0

_TOTALS = re.compile(r"^totals: (\d+)$", re.MULTILINE)


def directory() -> Path | None:
    """Where the callgrind files go, or None unless the environment asks for a count."""
    value = os.environ.get(ENV)
    return Path(value) if value else None


def wrap(args: list[str], out: Path) -> list[str]:
    """``args`` run by callgrind, counting nothing until :func:`count` turns it on."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        *args,
    ]


def count(pid: int, on: bool) -> None:
    """Turn the counting of the callgrind process ``pid`` on or off."""
    subprocess.run(
        ["callgrind_control", f"--instr={'on' if on else 'off'}", str(pid)],
        check=True,
        capture_output=True,
        timeout=60,
    )


def parse_total(text: str) -> int:
    """The instructions a callgrind output file counted (all its parts)."""
    return sum(int(match) for match in _TOTALS.findall(text))


def total(out: Path) -> int:
    """The instructions counted in the callgrind output file ``out``."""
    return parse_total(out.read_text())
