"""The PHH hand-history model: read it from TOML text and write it back.

A PHH file is a TOML document (https://phh.readthedocs.io). The fields that describe how the hand
is played (variant, forced bets, stakes, stacks, actions) are held as typed attributes of
:class:`HandHistory`; every other field (the optional ones such as ``players`` or ``time``, and
the user-defined ones, whose names begin with ``_``) is kept as read in ``fields``.

Amounts are numbers as PHH allows them: whole amounts are read as ``int``, amounts with a fraction
(``0.25``, the ``10187.5`` of a split pot) as exact :class:`~decimal.Decimal` (:data:`Amount`).
Our engine counts integer minor units; :mod:`poker.engine.phh.units` turns a hand with fractions
into one in whole units before it is played. ``inf`` (an unknown stack) and non-numbers are refused
with a sentence.

>>> history = parse_phh('''
... variant = "NT"
... antes = [0, 0]
... blinds_or_straddles = [1, 2]
... min_bet = 2
... starting_stacks = [200, 200]
... actions = ["d dh p1 AsKs", "d dh p2 7h2c", "p2 f"]
... ''')
>>> history.variant, history.starting_stacks, history.actions[-1]
('NT', (200, 200), 'p2 f')
>>> parse_phh(dump_phh(history)) == history
True
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

Amount = int | Decimal
"""An amount as the file writes it: ``int`` when whole, else an exact ``Decimal``."""


class PHHError(ValueError):
    """A PHH text that cannot be read; ``str(error)`` is one sentence saying why."""


@dataclass(frozen=True, slots=True)
class HandHistory:
    """One hand in the PHH format.

    Per-player tuples (``antes``, ``blinds_or_straddles``, ``starting_stacks``, ``seats``,
    ``finishing_stacks``) are in PHH player order: ``p1`` first, the player left of the button
    (the big blind when heads-up), ``pN`` last, the button.
    """

    variant: str
    antes: tuple[Amount, ...]
    starting_stacks: tuple[Amount, ...]
    actions: tuple[str, ...]
    blinds_or_straddles: tuple[Amount, ...] | None = None
    bring_in: Amount | None = None
    small_bet: Amount | None = None
    big_bet: Amount | None = None
    min_bet: Amount | None = None
    seats: tuple[int, ...] | None = None
    hand: str | int | None = None
    finishing_stacks: tuple[Amount, ...] | None = None
    fields: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Every other field, optional or user-defined (``_name``), as read."""

    @property
    def player_count(self) -> int:
        """How many players the hand was dealt to."""
        return len(self.starting_stacks)


_AMOUNT_FIELDS: Final = ("bring_in", "small_bet", "big_bet", "min_bet")
_AMOUNT_LIST_FIELDS: Final = ("antes", "blinds_or_straddles", "starting_stacks", "finishing_stacks")
_KNOWN_FIELDS: Final = frozenset(
    {"variant", "actions", "seats", "hand", *_AMOUNT_FIELDS, *_AMOUNT_LIST_FIELDS}
)
_FIELD_ORDER: Final = (
    "variant",
    "antes",
    "blinds_or_straddles",
    "bring_in",
    "small_bet",
    "big_bet",
    "min_bet",
    "starting_stacks",
    "actions",
    "hand",
    "seats",
    "finishing_stacks",
)


# --- reading ------------------------------------------------------------------------------------


def parse_phh(text: str) -> HandHistory:
    """Read one hand from PHH text; :class:`PHHError` with a sentence when it is not valid PHH."""
    return history_from_table(_load_toml(text))


def parse_phh_all(text: str) -> list[HandHistory]:
    """Read a PHH file holding one hand, or several hands as ``[1]``, ``[2]``, ... tables
    (the ``.phhs`` form written by PokerKit)."""
    table = _load_toml(text)
    if "variant" in table:
        return [history_from_table(table)]
    hands = [value for value in table.values() if isinstance(value, dict)]
    if not hands:
        raise PHHError("The file holds no hand: there is no variant field and no hand table.")
    return [history_from_table(hand) for hand in hands]


def _load_toml(text: str) -> dict[str, Any]:
    try:
        # Decimal keeps 2.50 exact, so that whole amounts written as floats are still read.
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as error:
        raise PHHError(f"The file is not valid TOML: {error}.") from None
    except ValueError:  # an integer of more digits than Python converts
        raise PHHError("The file holds a number too long to read (over 4,300 digits).") from None


def history_from_table(table: Mapping[str, Any]) -> HandHistory:
    """A :class:`HandHistory` from an already parsed TOML table."""
    for name in ("variant", "antes", "starting_stacks", "actions"):
        if name not in table:
            raise PHHError(f"The required field {name} is missing.")
    variant = table["variant"]
    if not isinstance(variant, str):
        raise PHHError('The variant must be a string such as "NT".')
    stacks = _amounts(table["starting_stacks"], "starting_stacks")
    if not stacks:
        raise PHHError("The starting stacks are empty: a hand needs players.")
    return HandHistory(
        variant=variant,
        antes=_amounts(table["antes"], "antes"),
        starting_stacks=stacks,
        actions=_strings(table["actions"], "actions"),
        blinds_or_straddles=_optional_amounts(table, "blinds_or_straddles"),
        bring_in=_optional_amount(table, "bring_in"),
        small_bet=_optional_amount(table, "small_bet"),
        big_bet=_optional_amount(table, "big_bet"),
        min_bet=_optional_amount(table, "min_bet"),
        seats=_optional_ints(table, "seats"),
        hand=_hand_name(table.get("hand")),
        finishing_stacks=_optional_amounts(table, "finishing_stacks"),
        fields={name: value for name, value in table.items() if name not in _KNOWN_FIELDS},
    )


#: The largest amount a hand is played with, in the units it is played in (its amounts times
#: its scale): ten seats of it still sum inside the events' int64 fields.
MAX_PLAYED_AMOUNT: Final = 10**15


def verify_played_amount(value: Amount, name: str) -> None:
    """Raise PHHError for an amount no table can hold (above :data:`MAX_PLAYED_AMOUNT` either
    way): checked before it becomes an integer (``1e999999`` would have a million digits)."""
    if not -MAX_PLAYED_AMOUNT <= value <= MAX_PLAYED_AMOUNT:
        raise PHHError(
            f"The field {name} holds {value}: more chips than a table holds "
            f"(at most {MAX_PLAYED_AMOUNT:,} in the units the hand is played in)."
        )


def file_amount(value: object, name: str) -> Amount:
    """``value`` as an :data:`Amount`: ``int`` when whole, else the exact ``Decimal``; PHHError
    for unknown amounts (``inf``, ``nan``), amounts no table holds and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PHHError(f"The field {name} must hold numbers, not {value!r}.")
    if isinstance(value, Decimal) and not value.is_finite():
        raise PHHError(f"The field {name} holds an unknown amount ({value}).")
    verify_played_amount(value, name)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def whole_amount(value: object, name: str) -> int:
    """``value`` as whole chips; PHHError for fractions, unknown (``inf``) and non-numbers."""
    amount = file_amount(value, name)
    if isinstance(amount, Decimal):
        raise PHHError(f"The field {name} holds {amount}; amounts must be whole chips.")
    return amount


def _amounts(value: object, name: str) -> tuple[Amount, ...]:
    if not isinstance(value, list):
        raise PHHError(f"The field {name} must be an array of amounts.")
    return tuple(file_amount(item, name) for item in value)


def _optional_amounts(table: Mapping[str, Any], name: str) -> tuple[Amount, ...] | None:
    return _amounts(table[name], name) if name in table else None


def _optional_amount(table: Mapping[str, Any], name: str) -> Amount | None:
    return file_amount(table[name], name) if name in table else None


def _optional_ints(table: Mapping[str, Any], name: str) -> tuple[int, ...] | None:
    if name not in table:
        return None
    value = table[name]
    if not isinstance(value, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        raise PHHError(f"The field {name} must be an array of integers.")
    return tuple(value)


def _strings(value: object, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PHHError(f"The field {name} must be an array of strings.")
    return tuple(value)


def _hand_name(value: object) -> str | int | None:
    if value is None or (isinstance(value, str | int) and not isinstance(value, bool)):
        return value
    raise PHHError("The field hand must be a string or an integer.")


# --- writing ------------------------------------------------------------------------------------


def dump_phh(history: HandHistory, comment: str = "") -> str:
    """The PHH (TOML) text of ``history``; ``comment`` becomes leading ``#`` lines."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    for name in _FIELD_ORDER:
        value = getattr(history, name)
        if value is None:
            continue
        if name == "actions":
            lines.append(_array_lines(name, value))
        else:
            lines.append(f"{name} = {toml_value(value)}")
    lines.extend(f"{_toml_key(key)} = {toml_value(value)}" for key, value in history.fields.items())
    return "\n".join(lines) + "\n"


def _array_lines(name: str, values: Sequence[object]) -> str:
    """A multi-line array, one item per line: readable action lists."""
    if not values:
        return f"{name} = []"
    items = "".join(f"  {toml_value(value)},\n" for value in values)
    return f"{name} = [\n{items}]"


def toml_value(value: object) -> str:
    """The TOML text of a string, integer, boolean, decimal, time, array or table.

    >>> toml_value(["p1 cbr 6", 3, True, {"per": 20}])
    '["p1 cbr 6", 3, true, {per = 20}]'
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal | float):
        return _toml_number(value)
    if isinstance(value, str):
        return _toml_string(value)
    isoformat = getattr(value, "isoformat", None)
    if type(value).__module__ == "datetime" and callable(isoformat):
        # A TOML date or time as tomllib reads it, recognised by its module's name: the engine
        # imports no clock module (tests/unit/test_import_contracts.py).
        return str(isoformat())
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        pairs = (f"{_toml_key(str(key))} = {toml_value(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise TypeError(f"{value!r} has no TOML form.")


def _toml_number(value: Decimal | float) -> str:
    number = float(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    text = str(value)
    # TOML floats need a fraction or an exponent; "2" alone would read back as an integer.
    return text if any(mark in text for mark in ".eE") else text + ".0"


_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_ESCAPES["\r"] = "\\r"


def _toml_string(text: str) -> str:
    """A TOML basic string, escaped."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    """A bare key when it may be one, else a quoted key."""
    bare = key and all(char.isascii() and (char.isalnum() or char in "_-") for char in key)
    return key if bare else _toml_string(key)
