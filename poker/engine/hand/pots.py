"""Main and side pots, splitting and odd chips (RULES.md §5.2, §5.5, §5.6).

Players are indexes in seat order, as in the hand state.

>>> build_pots((10, 30, 30, 30), in_hand=(True,) * 4, all_in=(True, True, False, False))
(Pot(amount=40, eligible=(0, 1, 2, 3)), Pot(amount=60, eligible=(1, 2, 3)))
>>> split_evenly(101, winners=(2, 6), first=5, player_count=9, chip_unit=1)
((6, 51), (2, 50))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Pot(NamedTuple):
    """A pot and the players who can win it."""

    amount: int
    eligible: tuple[int, ...]


def build_pots(
    contributions: Sequence[int], in_hand: Sequence[bool], all_in: Sequence[bool]
) -> tuple[Pot, ...]:
    """The main pot then the side pots, built from what every player put in (RULES.md §5.2).

    The levels are the contributions of all-in players still in the hand plus the largest
    contribution of those still in the hand with chips behind. Folded players' chips stay in the
    pots; folded players are never eligible. Uncalled bets must be returned first.
    """
    contenders = [index for index, playing in enumerate(in_hand) if playing]
    levels = {contributions[index] for index in contenders if all_in[index]}
    covering = [contributions[index] for index in contenders if not all_in[index]]
    if covering:
        levels.add(max(covering))
    pots: list[Pot] = []
    previous = 0
    for level in sorted(levels):
        amount = sum([min(paid, level) - min(paid, previous) for paid in contributions])
        eligible = tuple([index for index in contenders if contributions[index] >= level])
        if amount:
            pots.append(Pot(amount, eligible))
        previous = level
    leftover = sum(contributions) - sum([pot.amount for pot in pots])
    if leftover and pots:
        # Chips above every contender's level (never after uncalled bets are returned) stay in play.
        pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
    return tuple(pots)


def split_evenly(
    amount: int, winners: Sequence[int], first: int, player_count: int, chip_unit: int
) -> tuple[tuple[int, int], ...]:
    """Divide ``amount`` among ``winners`` in whole chips (RULES.md §5.6, decision A5).

    Each remaining chip goes to one winner, clockwise beginning at index ``first`` (the first seat
    left of the button), nobody getting more than one. Returns ``(index, share)`` pairs in that
    clockwise order.
    """
    if len(winners) == 1:
        return ((winners[0], amount),)  # what the general case gives one winner, minus its work
    return split_in_order(
        amount, sorted(winners, key=lambda index: (index - first) % player_count), chip_unit
    )


def split_in_order(
    amount: int, ordered: Sequence[int], chip_unit: int
) -> tuple[tuple[int, int], ...]:
    """Divide ``amount`` among ``ordered`` in whole chips, the remaining chips one each to the
    first of ``ordered`` (stud games order the tied players by their cards, decision A5).

    >>> split_in_order(101, (4, 1), chip_unit=1)
    ((4, 51), (1, 50))
    """
    chips, residue = divmod(amount, chip_unit)
    share, odd = divmod(chips, len(ordered))
    shares = []
    for position, index in enumerate(ordered):
        paid = (share + (1 if position < odd else 0)) * chip_unit
        if position == 0:
            paid += residue  # less than one chip: only when the amount is not whole chips
        shares.append((index, paid))
    return tuple(shares)


def split_high_low(amount: int, chip_unit: int) -> tuple[int, int]:
    """The high and low halves of a hi/lo pot; the odd chip goes high (decision A5).

    >>> split_high_low(101, 1), split_high_low(203, 1), split_high_low(100, 5)
    ((51, 50), (102, 101), (50, 50))
    """
    low = amount // chip_unit // 2 * chip_unit
    return amount - low, low


def build_pots_with_dead(
    contributions: Sequence[int],
    dead: Sequence[int],
    in_hand: Sequence[bool],
    all_in: Sequence[bool],
) -> tuple[Pot, ...]:
    """:func:`build_pots` when some chips are dead blinds (decision A8): the levels come from
    the live chips only, and the dead chips go to the main pot.

    >>> build_pots_with_dead((3, 10), (1, 0), in_hand=(True, True), all_in=(True, False))
    (Pot(amount=5, eligible=(0, 1)), Pot(amount=8, eligible=(1,)))
    """
    live = [paid - gone for paid, gone in zip(contributions, dead, strict=True)]
    pots = list(build_pots(live, in_hand, all_in))
    extra = sum(dead)
    if pots:
        pots[0] = Pot(pots[0].amount + extra, pots[0].eligible)
    elif extra:
        pots.append(Pot(extra, tuple(index for index, playing in enumerate(in_hand) if playing)))
    return tuple(pots)
