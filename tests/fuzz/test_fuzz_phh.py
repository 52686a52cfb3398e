"""Hostile PHH files: whatever a file holds, the import answers with a sentence.

``python -m poker.engine phh replay`` reads files from anywhere (a public corpus, an operator's
export, an attacker's upload). Every hand either replays or gets an ``error`` sentence on its line;
a file that cannot be parsed gets one line with its error. No exception escapes, whatever the
text: mutated copies of the fixtures (a value replaced by a hostile one, a line dropped, doubled
or cut short) and arbitrary text both.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.engine.phh import parse_phh_all, replay_phh
from poker.engine.phh.cli import replay_files
from poker.engine.phh.model import PHHError

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "phh").glob("*.phh*"))
TEXTS = [path.read_text(encoding="utf-8") for path in FIXTURES]

#: Values an attacker would put where a number, a list or an action string belongs.
HOSTILE_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(
        [
            "nan",
            "inf",
            "-inf",
            "1e400",
            "0.0000000001",
            "-0",
            "1.5e-300",
            '""',
            "[]",
            "[[]]",
            "{}",
            "true",
            '"p1 cbr 99999999999999999999"',
            '"d dh p9 AsKs"',
            '"p1 sm AsAs"',
            '"p0 f"',
            '"d db ????????????????"',
            "[1, 2]",
            "[-1, -2, -3]",
            '["x"]',
            "1979-05-27T07:32:00Z",
            '"\\u0000"',
            "[0.5, 0.25, 0.125, 0.0625]",
            # Numbers no table holds: past int64 (a stack), past Python's 4,300-digit int
            # conversion, a Decimal of a million digits, a player number of thousands.
            "[99999999999999999999, 200]",
            "9" * 5_000,
            "1e999999",
            f'"p{"1" * 5_000} cc"',
            f'"# p1 artificial all-in for {"9" * 5_000}"',
        ]
    ),
    st.lists(st.integers(min_value=-(2**64), max_value=2**64), max_size=12).map(str),
    st.lists(
        st.sampled_from(["p1 f", "p2 cc", "p1 cbr 10", "d db AhKh", "d dh p1 ????", "p3 sm"]),
        max_size=12,
    ).map(json.dumps),
)


def assert_answered(text: str) -> None:
    """The contract: a parse error is a PHHError; each parsed hand replays or names its error."""
    try:
        histories = parse_phh_all(text)
    except PHHError as error:
        assert str(error)
        return
    for history in histories:
        result = replay_phh(history)
        assert result.ok or (result.error and result.finishing_stacks is None)


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(TEXTS)).splitlines()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if not lines:
            break
        index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        line = lines[index]
        kind = draw(st.sampled_from(["value", "drop", "double", "cut"]))
        if kind == "value" and "=" in line:
            lines[index] = f"{line.split('=', 1)[0]}= {draw(HOSTILE_VALUES)}"
        elif kind == "value":  # an action line inside the array
            lines[index] = f"  {draw(HOSTILE_VALUES)},"
        elif kind == "drop":
            del lines[index]
        elif kind == "double":
            lines.insert(index, line)
        else:
            lines[index] = line[: draw(st.integers(min_value=0, max_value=len(line)))]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_fixtures())
def test_a_mutated_file_is_replayed_or_refused_with_a_sentence(text: str) -> None:
    assert_answered(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_is_refused_with_a_sentence(text: str) -> None:
    assert_answered(text)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutated_fixtures())
def test_the_command_writes_one_json_line_per_hand_for_any_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hostile.phh"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    assert replay_files([str(path)], out) == 0
    lines = out.getvalue().splitlines()
    assert lines
    for line in lines:
        record = json.loads(line)
        assert record["file"] == str(path)
        assert "error" in record or record["finishing_stacks"]
