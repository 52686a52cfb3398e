"""Amounts with fractions, and comparing a replay with the result the file records.

PHH writes amounts as numbers, fractions allowed: the hand histories of online cash games are in
dollars and cents (``blinds_or_straddles = [0.50, 1, 0]``, ``starting_stacks = [247.16, ...]``).
Our engine counts integer minor units, so a hand is played in the finest decimal unit its
*playing* amounts are written in: with ``k`` the most decimal places of any starting stack, ante,
blind, bring-in, bet size or ``cbr`` amount, each is multiplied by ``10**k`` (:func:`hand_scale`:
100 for ``0.50`` or ``247.16``, the cents of the room), played, and the finishing stacks are
divided back (:func:`file_units`). That is a change of unit only: the hand is dealt and bet
exactly as recorded. A decimal unit rather than the least common denominator of the fractions
(50 for 0.50 and 247.16) because the written decimals are the room's currency: a tied pot of
$0.75 is split into 38 and 37 cents, as the room splits it, not into 50 and 25.

The recorded result (``finishing_stacks``) never sets the unit: it is what the file says
happened, and the replay is checked against it (:func:`compare_stacks`). The Pluribus logs split
a tied pot with an odd chip into halves (two winners of 825 finishing with 412.5 each); our rules
give the odd chip whole to one winner (decision A5), 413 and 412. Such a hand is replayed and its
difference reported as an ``odd_chip`` mismatch with both values, apart from the ``stacks``
mismatches (any other difference).

>>> hand_scale_of((Decimal("0.50"), 1, Decimal("247.16")), ())
100
>>> file_units((24716, 50), 100)
(Decimal('247.16'), Decimal('0.5'))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Final, NamedTuple

from poker.engine.phh.model import Amount, HandHistory, PHHError, verify_played_amount

MAX_DECIMALS: Final = 6
"""The finest unit a hand may use: a millionth of the file's unit (PHH corpora use cents)."""

_SCALED_USER_FIELDS: Final = ("_chip_unit", "_extra_posts", "_rake", "_spread_limits")


class Mismatch(NamedTuple):
    """How a replay's finishing stacks differ from the file's: ``kind`` is ``"odd_chip"`` (the
    file splits odd chips into fractions our whole-chip rule does not make) or ``"stacks"``
    (anything else); ``sentence`` names every player who differs, with both values."""

    kind: str
    sentence: str


def hand_scale(history: HandHistory) -> int:
    """How many of our minor units make one unit of the file: 1 when every playing amount is
    whole, else ``10**k`` for the most decimal places ``k`` any of them is written with.
    PHHError when the unit would be finer than :data:`MAX_DECIMALS` places, or when our
    extensions' amount fields (whole chips by definition) would have to be scaled."""
    amounts = [
        *history.starting_stacks,
        *history.antes,
        *(history.blinds_or_straddles or ()),
        *(
            amount
            for amount in (history.bring_in, history.small_bet, history.big_bet, history.min_bet)
            if amount is not None
        ),
    ]
    scale = hand_scale_of(amounts, history.actions)
    if scale > 1:
        used = [name for name in _SCALED_USER_FIELDS if name in history.fields]
        if used:
            raise PHHError(
                f"This hand's amounts have fractions, so it is played in units of 1/{scale}; "
                f"our extension fields ({', '.join(used)}) hold whole chips and cannot be "
                "combined with it."
            )
    return scale


def hand_scale_of(amounts: Iterable[Amount], actions: Iterable[str]) -> int:
    """``10**k`` for the most decimal places ``k`` of ``amounts`` and of the ``cbr`` amounts in
    ``actions`` that have a fraction (a notation that is not PHH is left for the action parser
    to refuse)."""
    places = 0
    for amount in [*amounts, *_bet_amounts(actions)]:
        if isinstance(amount, Decimal) and amount != amount.to_integral_value():
            places = max(places, _decimal_places(amount))
    return int(10**places)  # int.__pow__ types as Any for a non-literal exponent


def _decimal_places(amount: Decimal) -> int:
    exponent = amount.as_tuple().exponent
    places = -exponent if isinstance(exponent, int) else 0
    if places > MAX_DECIMALS:
        raise PHHError(f"The amount {amount} is finer than a millionth; we cannot play it.")
    return places


def _bet_amounts(actions: Iterable[str]) -> Iterable[Decimal]:
    for text in actions:
        words = text.partition("#")[0].split()
        if len(words) == 3 and words[1] == "cbr":
            try:
                amount = Decimal(words[2])
            except InvalidOperation:
                continue
            if amount.is_finite():
                yield amount


def scaled_history(history: HandHistory, scale: int) -> HandHistory:
    """``history`` with its playing amounts (not the action strings, which the action parser
    scales, nor the record) in units of ``1/scale``: whole numbers."""
    if scale == 1:
        return history

    def played(amount: Amount, name: str) -> int:
        value = amount * scale
        verify_played_amount(value, name)  # each field's own bound holds the unscaled value
        return int(value)

    def times(amounts: Sequence[Amount] | None, name: str) -> tuple[int, ...] | None:
        return None if amounts is None else tuple(played(amount, name) for amount in amounts)

    def one(amount: Amount | None, name: str) -> int | None:
        return None if amount is None else played(amount, name)

    return replace(
        history,
        antes=times(history.antes, "antes") or (),
        starting_stacks=times(history.starting_stacks, "starting_stacks") or (),
        blinds_or_straddles=times(history.blinds_or_straddles, "blinds_or_straddles"),
        bring_in=one(history.bring_in, "bring_in"),
        small_bet=one(history.small_bet, "small_bet"),
        big_bet=one(history.big_bet, "big_bet"),
        min_bet=one(history.min_bet, "min_bet"),
    )


def file_units(stacks: Sequence[int], scale: int) -> tuple[Amount, ...]:
    """Amounts of our minor units back in the file's unit: ``int`` when whole, else exact."""
    if scale == 1:
        return tuple(stacks)
    # The scale is a power of ten: the quotient is an exact decimal.
    return tuple(
        stack // scale if stack % scale == 0 else Decimal(stack) / scale for stack in stacks
    )


def compare_stacks(
    ours: Sequence[Amount], recorded: Sequence[Amount], scale: int = 1
) -> Mismatch | None:
    """None when the replay's finishing stacks are the file's, else how they differ (both in
    the file's unit; ``scale`` is how many of our units make one of the file's).

    >>> compare_stacks((10188, 10187), (Decimal("10187.5"), Decimal("10187.5"))).kind
    'odd_chip'
    >>> print(compare_stacks((100, 50), (90, 60)).sentence)
    p1 finishes with 100 under our rules and 90 in the file; p2 with 50 and 60.
    """
    if len(ours) != len(recorded):
        return Mismatch(
            "stacks",
            f"The file records {len(recorded)} finishing stacks for {len(ours)} players.",
        )
    differing = [
        (player, mine, theirs)
        for player, (mine, theirs) in enumerate(zip(ours, recorded, strict=True), start=1)
        if mine != theirs
    ]
    if not differing:
        return None
    parts = [
        f"p{player} finishes with {_text(mine)} under our rules and {_text(theirs)} in the file"
        if position == 0
        else f"p{player} with {_text(mine)} and {_text(theirs)}"
        for position, (player, mine, theirs) in enumerate(differing)
    ]
    sentence = "; ".join(parts) + "."
    if _odd_chips_only(ours, recorded, scale):
        sentence += (
            " The file splits odd chips into fractions; our rules give each odd chip whole to "
            "one winner (decision A5)."
        )
        return Mismatch("odd_chip", sentence)
    return Mismatch("stacks", sentence)


def _odd_chips_only(ours: Sequence[Amount], recorded: Sequence[Amount], scale: int) -> bool:
    """Whether the record holds fractions of our unit and differs from us by less than one unit
    in total and by at most one unit per player: an odd chip divided instead of given whole."""
    unit = Decimal(1) / scale
    fractional = any((Decimal(amount) * scale) % 1 for amount in recorded)
    pairs = zip(ours, recorded, strict=True)
    differences = [Decimal(theirs) - Decimal(mine) for mine, theirs in pairs]
    return (
        fractional
        and abs(sum(differences, Decimal(0))) < unit
        and all(abs(difference) <= unit for difference in differences)
    )


def json_amount(amount: Amount) -> int | float:
    """An amount for a JSON document: whole amounts stay integers."""
    return amount if isinstance(amount, int) else float(amount)


def _text(amount: Amount) -> str:
    return str(amount) if isinstance(amount, int) else format(amount, "f")
