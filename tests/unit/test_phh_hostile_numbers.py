"""A hand history is a file from anywhere: numbers no table can hold (a 5,000-digit stack,
``1e999999``, 10^20 chips, a player ``p`` followed by thousands of digits) are refused with a
sentence (PHHError, one JSON error line from ``phh replay``), never a ValueError out of the
parser, the int conversion or protobuf's int64 fields."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from poker.engine.phh import PHHError
from poker.engine.phh.cli import replay_files
from poker.engine.phh.model import MAX_PLAYED_AMOUNT
from poker.engine.phh.replay import parse_action

HUGE = "9" * 5_000  # past the 4,300 digits Python turns into an int


@pytest.mark.parametrize(
    "action",
    [
        f"p{HUGE} cc",
        f"p1 cbr {HUGE}",
        "p1 cbr 1e999999",
        f"# p1 artificial all-in for {HUGE}",
        f"p1 cbr {MAX_PLAYED_AMOUNT + 1}",
    ],
)
def test_an_action_with_a_number_no_table_holds_is_refused(action: str) -> None:
    with pytest.raises(PHHError):
        parse_action(1, action, players=2)


def _replayed(tmp_path: Path, stacks: str, **fields: str) -> dict[str, object]:
    given = {
        "antes": "[0, 0]",
        "blinds_or_straddles": "[1, 2]",
        "min_bet": "2",
        "starting_stacks": f"[{stacks}, 200]",
        **fields,
    }
    path = tmp_path / "hand.phh"
    path.write_text(
        'variant = "NT"\n'
        + "".join(f"{name} = {value}\n" for name, value in given.items())
        + 'actions = ["d dh p1 AsAh", "d dh p2 KsKh", "p2 f"]\n'
    )
    out = io.StringIO()
    replay_files([str(path)], out)
    (line,) = out.getvalue().splitlines()
    result: dict[str, object] = json.loads(line)
    return result


@pytest.mark.parametrize(
    ("stacks", "said"),
    [
        (HUGE, "too long to read"),
        ("1e999999", "more chips than a table holds"),
        (str(10**20), "more chips than a table holds"),
        # A fraction plays the hand in tenths: 10^15 chips are then 10^16 units.
        (f"{MAX_PLAYED_AMOUNT}.5", "more chips than a table holds"),
    ],
)
def test_a_file_with_a_stack_no_table_holds_is_one_error_line(
    tmp_path: Path, stacks: str, said: str
) -> None:
    result = _replayed(tmp_path, stacks)
    assert said in str(result["error"])
    assert result["finishing_stacks"] == []


def test_the_largest_stack_a_table_holds_still_plays(tmp_path: Path) -> None:
    result = _replayed(tmp_path, str(MAX_PLAYED_AMOUNT))
    assert "error" not in result, result


@pytest.mark.parametrize("field", ["antes", "blinds_or_straddles", "min_bet"])
@pytest.mark.parametrize("number", [str(10**20), "1e999999", HUGE])
def test_any_amount_field_with_a_number_no_table_holds_is_one_error_line(
    tmp_path: Path, field: str, number: str
) -> None:
    value = number if field == "min_bet" else f"[{number}, 2]"
    result = _replayed(tmp_path, "200", **{field: value})
    assert result["error"] and result["finishing_stacks"] == []
