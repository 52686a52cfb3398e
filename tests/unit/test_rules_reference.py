"""The committed rules reference (docs/rules.md) is the engine's own: what
``python -m poker.engine rules --markdown`` writes from the definitions today."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from poker.engine.betting import BettingRules
from poker.engine.games import GAMES
from poker.engine.reference import rules_markdown
from poker.engine.table.config import TableConfig

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"


def test_the_committed_reference_is_current() -> None:
    assert RULES.read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is out of date: run "
        "`python -m poker.engine rules --markdown --output docs/rules.md`"
    )


def test_it_names_every_game_and_every_switch() -> None:
    text = rules_markdown()
    assert all(f"`{key}`" in text for key in GAMES)
    for kind in (TableConfig, BettingRules):
        for item in dataclasses.fields(kind):
            if item.init and item.name not in {"game", "structure", "stakes", "rules", "rake"}:
                assert f"| `{item.name}` |" in text, item.name


def test_the_command_line_prints_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "poker.engine", "rules", "--markdown"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == rules_markdown()
