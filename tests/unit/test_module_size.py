"""No module of the dealer grows past ~400 lines: one that does is doing two jobs (issue #25:
``tables.py`` had grown to 982 lines, the command path and the hand-off in one class)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
DEALER = sorted((ROOT / "poker" / "dealer").glob("*.py"))


@pytest.mark.parametrize("module", DEALER, ids=lambda path: path.name)
def test_no_dealer_module_is_over_400_lines(module: Path) -> None:
    lines = len(module.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module.relative_to(ROOT)} has {lines} lines: split it by job"


def test_the_dealer_has_modules_to_measure() -> None:
    assert len(DEALER) > 10  # the glob found the package
