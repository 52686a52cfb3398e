"""Betting structures: the smallest and largest wager, full raises and the raise cap.

A structure is a small strategy object (RULES.md §4.3). It answers, for the current betting round:

* ``bounds``: the smallest and largest total a bet or raise may bring the player's round bet to
  (before the player's stack is taken into account);
* ``is_full``: whether a wager (usually a short all-in) counts as a full bet or raise, which
  reopens the betting and counts toward the cap (RULES.md §4.5);
* ``reopen_threshold``: by how much the bet level must have risen since a player last acted before
  he may raise again;
* ``capped``: whether the 1 bet + 3 raises cap applies (RULES.md §4.4).

Every amount is a *total for the round* ("raise to"), in currency units.

>>> facing_blinds = Round(level=2, full_level=2, min_increment=2, unit=0, raises=1)
>>> NO_LIMIT.bounds(facing_blinds, pot_total=3, owed=2, chip_unit=1)[0]
4
>>> POT_LIMIT.bounds(facing_blinds, pot_total=3, owed=2, chip_unit=1)
(4, 7)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final, NamedTuple

UNLIMITED: Final = 2**63 - 1
"""The upper bound of a no-limit wager before the stack is applied (the largest signed 64-bit
integer, ``sys.maxsize`` on a 64-bit CPython, written out: the engine does not import ``sys``)."""


class Structure(Enum):
    """The five betting structures (RULES.md §4.3); values match ``poker.v1.BettingStructure``."""

    FIXED_LIMIT = 1
    SPREAD_LIMIT = 2
    POT_LIMIT = 3
    HALF_POT_LIMIT = 4
    NO_LIMIT = 5


class HeadsUpUncap(Enum):
    """When the limit raise cap is lifted for two players (decision A11)."""

    ROUND_START = 1  # exactly two acting players when the round begins (the seed's rule)
    BEFORE_CAP = 2  # the action becomes heads-up before the cap is reached (Robert's Rules)
    NEVER = 3


class StudTieBreak(Enum):
    """Who acts first between equal showing hands in stud-type games (decision A4)."""

    POSITION = 1  # the first clockwise from the dealer position
    SUIT = 2  # the better suits, in the bring-in suit order


class PatRestrictionLift(Enum):
    """Which later draw lifts a time-out pat's betting restriction in 2-7 (decision A12)."""

    ANY_TIMELY_DRAW = 1  # any draw decision made in time, a voluntary pat included
    AT_LEAST_ONE_CARD = 2  # only a timely draw of at least one card


class PostDrawFirstActor(Enum):
    """Who acts first after the draw and shows first at the showdown (decision A15)."""

    LEFT_OF_BIG_BLIND = 1  # 32-Card Draw's rule as the seed writes it
    LEFT_OF_BUTTON = 2  # every other button game


class OddChipStud(Enum):
    """Which tied winner gets the odd chip in stud-type games (decision A5)."""

    HIGH_CARD_BY_SUIT = 1  # the highest card (low: the lowest) by rank, then suit (Robert's)
    NEAREST_TO_DEALER = 2  # the first clockwise from the dealer position (seed 000)
    FIRST_SHOWN = 3  # the first to show his hand (seed 000, Soko)


class OddChipCards(Enum):
    """Which of a tied winner's cards ``OddChipStud.HIGH_CARD_BY_SUIT`` looks at (A5)."""

    ALL_CARDS = 1  # every card he holds (Robert's)
    FIVE_CARD_HAND = 2  # only his cards in the five-card hand he wins with (seed 004)


class IncompleteRaiseRule(Enum):
    """Whether a short all-in reopens a fixed/spread-limit round (RULES.md §4.5)."""

    HALF_BET = 1
    FULL_BET = 2


@dataclass(frozen=True, slots=True)
class Stakes:
    """The table's amounts in currency units.

    ``spread_round_max`` holds the maximum bet or raise of each betting round (spread limit); build
    it from an "a-b-c" limit with :func:`spread_schedule`. Stud-type games have no blinds (both
    0): every player antes and ``bring_in`` is the forced opening bet (RULES.md §4.2.2-4.2.3).
    """

    small_blind: int
    big_blind: int
    ante: int = 0
    small_bet: int = 0
    big_bet: int = 0
    spread_round_max: tuple[int, ...] = ()
    bring_in: int = 0


DRAW_TIMER_MS: Final = 30_000
"""Draw games: the time a player has to discard by default (RULES.md §7.1, `draw_timer_s`)."""


@dataclass(frozen=True, slots=True)
class BettingRules:
    """Table switches for betting (RULES.md §11).

    The stud-type switches: ``open_pair_double_bet`` (None: the game's default, on in 7 Card Stud
    only, decision A6), ``stud_common_card_betting`` (a betting round after the 7th-street common
    card, A7), ``stud_board_tie_break`` (A4) and ``bring_in_suit_order`` (the four suit letters
    high to low, e.g. ``"shdc"``; empty: the game's order, A1), ``odd_chip_stud`` and
    ``odd_chip_cards`` (who of tied winners gets the odd chip, A5). Telesina's:
    ``telesina_high_card`` (``"card_by_card"`` or ``"ranks_then_suits"``, decision A19) and
    ``telesina_headsup_sf`` (``"exact"``, ``"any_low_sf_beats_royal"`` or ``"off"``, A18).
    ``burn_cards``: a card is burned before the flop, the turn and the river (decision A31;
    off; Hold'em and the Omaha games only). Draw games: ``draw_timer_ms``, the time a player
    has to discard (30 s, RULES.md §7.1);
    ``max_discard`` (0: the game's 5 or, in 32-Card Draw, 4, decision A13);
    ``pat_restriction_lift`` (A12); ``reshuffle_include_folded`` (folded hands join the
    reshuffled discards, A14); ``post_draw_first_actor`` and ``split_pot_function`` (None: the
    game's default, 32-Card Draw's rules, A15 and A17).
    """

    chip_unit: int = 1
    max_raises: int = 3
    # Spread limit's own cap (RULES.md §11 ``spread_max_raises``, A10); None: ``max_raises``.
    spread_max_raises: int | None = None
    heads_up_uncap: HeadsUpUncap = HeadsUpUncap.ROUND_START
    incomplete_raise_rule: IncompleteRaiseRule = IncompleteRaiseRule.HALF_BET
    spread_round_ceiling: bool = False
    action_timer_ms: int = 30_000
    open_pair_double_bet: bool | None = None
    stud_common_card_betting: bool = False
    stud_board_tie_break: StudTieBreak = StudTieBreak.POSITION
    bring_in_suit_order: str = ""
    odd_chip_stud: OddChipStud = OddChipStud.HIGH_CARD_BY_SUIT
    odd_chip_cards: OddChipCards = OddChipCards.ALL_CARDS
    telesina_high_card: str = "card_by_card"
    telesina_headsup_sf: str = "exact"
    draw_timer_ms: int = DRAW_TIMER_MS
    burn_cards: bool = False
    max_discard: int = 0
    pat_restriction_lift: PatRestrictionLift = PatRestrictionLift.ANY_TIMELY_DRAW
    reshuffle_include_folded: bool = True
    post_draw_first_actor: PostDrawFirstActor | None = None
    split_pot_function: bool | None = None


class Round(NamedTuple):
    """The betting facts of the current round.

    ``level`` is the amount every player must reach to stay in; ``full_level`` the level set by the
    last full bet or raise (the big blind pre-flop); ``min_increment`` the largest full increment
    so far (pot and no limit); ``unit`` the fixed-limit bet or the spread-limit round maximum;
    ``raises`` counts full bets and raises, the big blind included; ``aggressor`` is the index of
    the last player who bet or raised (-1: nobody).
    """

    level: int = 0
    full_level: int = 0
    min_increment: int = 0
    unit: int = 0
    raises: int = 0
    uncapped: bool = False
    started: bool = False
    aggressor: int = -1


class BettingStructure:
    """Base strategy: no-limit style minimum raise, no maximum, no cap."""

    __slots__ = ("structure",)
    capped: bool = False

    def __init__(self, structure: Structure) -> None:
        self.structure = structure

    def bounds(self, round_: Round, pot_total: int, owed: int, chip_unit: int) -> tuple[int, int]:
        """Smallest and largest bet/raise total; a bet is a raise from level 0."""
        return round_.level + round_.min_increment, UNLIMITED

    def is_full(self, round_: Round, amount: int, half_bet: bool) -> bool:
        """Whether a wager to ``amount`` is a full bet or raise (RULES.md §4.5)."""
        return amount - round_.level >= round_.min_increment

    def reopen_threshold(self, round_: Round, half_bet: bool) -> int:
        """How far the level must rise past a player's last action to let him raise again."""
        return round_.min_increment

    def __repr__(self) -> str:
        return f"<{self.structure.name}>"


class _PotLimit(BettingStructure):
    """Raise by at most the pot after calling (RULES.md §4.3.3); ``divisor`` 2 is half pot."""

    __slots__ = ("divisor",)

    def __init__(self, structure: Structure, divisor: int) -> None:
        super().__init__(structure)
        self.divisor = divisor

    def bounds(self, round_: Round, pot_total: int, owed: int, chip_unit: int) -> tuple[int, int]:
        lowest = round_.level + round_.min_increment
        raise_by = (pot_total + owed) // self.divisor
        raise_by -= raise_by % chip_unit  # half pot rounds down to the chip unit (A33)
        # The minimum bet (the big blind) stays allowed even when the pot is smaller.
        return lowest, max(lowest, round_.level + raise_by)


class _FixedLimit(BettingStructure):
    """Every bet and raise is exactly one unit of the round (RULES.md §4.3.1)."""

    __slots__ = ()
    capped = True

    def bounds(self, round_: Round, pot_total: int, owed: int, chip_unit: int) -> tuple[int, int]:
        target = round_.full_level + round_.unit
        return target, target

    def is_full(self, round_: Round, amount: int, half_bet: bool) -> bool:
        added = amount - round_.full_level
        return 2 * added >= round_.unit if half_bet else added >= round_.unit

    def reopen_threshold(self, round_: Round, half_bet: bool) -> int:
        return (round_.unit + 1) // 2 if half_bet else round_.unit


class _SpreadLimit(BettingStructure):
    """Any increment from the largest full one up to the round maximum (decision A10)."""

    __slots__ = ()
    capped = True

    def bounds(self, round_: Round, pot_total: int, owed: int, chip_unit: int) -> tuple[int, int]:
        lowest = round_.level + round_.min_increment
        return lowest, max(lowest, round_.level + round_.unit)

    def is_full(self, round_: Round, amount: int, half_bet: bool) -> bool:
        added = amount - round_.level
        if half_bet:
            return 2 * added >= round_.min_increment
        return added >= round_.min_increment

    def reopen_threshold(self, round_: Round, half_bet: bool) -> int:
        return (round_.min_increment + 1) // 2 if half_bet else round_.min_increment


FIXED_LIMIT: Final = _FixedLimit(Structure.FIXED_LIMIT)
SPREAD_LIMIT: Final = _SpreadLimit(Structure.SPREAD_LIMIT)
POT_LIMIT: Final = _PotLimit(Structure.POT_LIMIT, 1)
HALF_POT_LIMIT: Final = _PotLimit(Structure.HALF_POT_LIMIT, 2)
NO_LIMIT: Final = BettingStructure(Structure.NO_LIMIT)

STRUCTURES: Final[dict[Structure, BettingStructure]] = {
    strategy.structure: strategy
    for strategy in (FIXED_LIMIT, SPREAD_LIMIT, POT_LIMIT, HALF_POT_LIMIT, NO_LIMIT)
}


def spread_schedule(low: int, middle: int, high: int, rounds: int) -> tuple[int, ...]:
    """The per-round maxima of an "a-b-c" spread limit (decision A10).

    >>> spread_schedule(1, 2, 3, 4)
    (1, 1, 2, 3)
    >>> spread_schedule(1, 2, 3, 5), spread_schedule(1, 2, 3, 2)
    ((1, 1, 2, 2, 3), (1, 3))
    """
    if rounds == 2:
        return (low, high)
    if rounds == 4:
        return (low, low, middle, high)
    if rounds == 5:
        return (low, low, middle, middle, high)
    raise ValueError(f"A spread limit has no default schedule for {rounds} betting rounds.")


# Decision A9: the room's small blinds for its fixed-limit stakes, keyed by (small bet, big bet)
# in euro cents. Not a formula: no single rounding rule gives all five.
_FIXED_LIMIT_SMALL_BLINDS: Final = {(25, 50): 10, (100, 200): 50, (200, 400): 100, (300, 600): 100}
_FIXED_LIMIT_SMALL_BLINDS[(500, 1000)] = 200


def fixed_limit_stakes(
    small_bet: int, big_bet: int, small_blind: int | None = None, chip_unit: int = 1, ante: int = 0
) -> Stakes:
    """Fixed-limit stakes with the room's defaults: big blind = small bet (A9).

    Without ``small_blind`` the room's table for its stakes applies (amounts in cents), else half
    the big blind rounded down to the chip unit.

    >>> fixed_limit_stakes(500, 1000).small_blind, fixed_limit_stakes(5, 10).small_blind
    (200, 2)
    """
    if small_blind is None:
        small_blind = _FIXED_LIMIT_SMALL_BLINDS.get((small_bet, big_bet), 0)
        if not small_blind:
            small_blind = small_bet // 2 // chip_unit * chip_unit
    return Stakes(small_blind, small_bet, ante=ante, small_bet=small_bet, big_bet=big_bet)


def stud_stakes(
    small_bet: int, big_bet: int, *, ante: int, bring_in: int | None = None, chip_unit: int = 1
) -> Stakes:
    """Fixed-limit stud stakes: no blinds, everyone antes, the bring-in opens (decision A2).

    Without ``bring_in`` the room's default applies: twice the ante (seed 000).

    >>> stud_stakes(10, 20, ante=2)
    Stakes(small_blind=0, big_blind=0, ante=2, small_bet=10, big_bet=20, spread_round_max=(), \
bring_in=4)
    """
    if bring_in is None:
        bring_in = 2 * ante // chip_unit * chip_unit
    return Stakes(0, 0, ante=ante, small_bet=small_bet, big_bet=big_bet, bring_in=bring_in)
