"""``python -m poker.engine phh replay FILE ...``: replay PHH files through our engine, one JSON
line per hand.

Each line holds ``file``, ``finishing_stacks`` (PHH player order, in the file's unit: integers
when whole, else decimals such as ``247.16``; empty when the hand cannot be played), ``error`` (a
sentence) when the hand cannot be played under our rules, ``hand`` when the file names it or
holds several hands, and ``matches_file`` when the file records its own finishing stacks.

When they differ (``matches_file`` false) the line also holds ``recorded_finishing_stacks`` (the
file's), ``mismatch`` (a sentence naming each player who differs, with both values) and
``mismatch_kind``: ``"odd_chip"`` when the file only splits odd chips into fractions our rules
give whole to one winner (the Pluribus logs' halves), else ``"stacks"``. A hand that matches
prints the same line as before these fields existed.

The exit code is 0 when every file could be read (whatever its hands gave), 1 when one could not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from poker.engine.phh.model import HandHistory, PHHError, parse_phh_all
from poker.engine.phh.replay import replay_phh
from poker.engine.phh.units import json_amount


def replay_files(paths: Sequence[str], out: TextIO) -> int:
    """Replay every hand of every file in ``paths``, writing one JSON object per line."""
    unread = False
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            unread = True
            _write(out, {"file": path, "finishing_stacks": [], "error": _unreadable(error)})
            continue
        try:
            histories = parse_phh_all(text)
        except PHHError as error:
            _write(out, {"file": path, "finishing_stacks": [], "error": str(error)})
            continue
        for number, history in enumerate(histories, start=1):
            _write(out, _record(path, history, number if len(histories) > 1 else None))
    return 1 if unread else 0


def _record(path: str, history: HandHistory, number: int | None) -> dict[str, Any]:
    result = replay_phh(history)
    record: dict[str, Any] = {"file": path}
    if history.hand is not None or number is not None:
        record["hand"] = history.hand if history.hand is not None else number
    record["finishing_stacks"] = [json_amount(stack) for stack in result.finishing_stacks or ()]
    if result.error is not None:
        record["error"] = result.error
    elif history.finishing_stacks is not None:
        record["matches_file"] = result.mismatch is None
        if result.mismatch is not None:
            record["recorded_finishing_stacks"] = [
                json_amount(stack) for stack in history.finishing_stacks
            ]
            record["mismatch"] = result.mismatch.sentence
            record["mismatch_kind"] = result.mismatch.kind
    return record


def _unreadable(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "The file cannot be read: it is not UTF-8 text."
    return f"The file cannot be read: {error.strerror or error}."


def _write(out: TextIO, record: dict[str, Any]) -> None:
    out.write(json.dumps(record) + "\n")
