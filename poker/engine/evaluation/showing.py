"""Who brings in and who acts first in the stud-type games (RULES.md §3.8, §3.9, §4.2.3).

The games: ``seven-card-stud``, ``seven-card-stud-hi-lo``, ``soko``, ``americana``, ``telesina``.
Seats are ints numbered clockwise (from 0 or from 1: only their order around the table matters).

**Bring-in** (:func:`bring_in_seat`, first betting round): 7 Card Stud and Stud Hi/Lo the lowest
door card, ace high, so a deuce is the lowest card [decision A32]; Soko, Americana and Telesina the
highest. Equal ranks are broken by suit: ♠ > ♥ > ♦ > ♣ (so in 7 Card Stud the club brings in), in
Telesina ♥ > ♦ > ♣ > ♠ [decision A1].

>>> from poker.engine.cards import parse_card as c
>>> bring_in_seat("seven-card-stud", {1: c("2c"), 2: c("2d"), 3: c("Ks")})
1
>>> bring_in_seat("telesina", {4: c("As"), 5: c("Ah")})
5

**First to act** (:func:`first_to_act`, later rounds; the same order decides who shows first at
the showdown when nobody bet the last round, §5.4): the best showing hand.

* 7 Card Stud, Stud Hi/Lo (the high hand acts first) and Americana [decision A21]: the upcards'
  pairs count — four of a kind > full house (only five cards: four upcards and the common card) >
  three of a kind > two pair > one pair > high card, compared as in §3.1; straights and flushes do
  not count.
* Soko: the Soko ranking on up to four cards [decision A24]: four of a kind > three of a kind >
  two pair > four-flush (four upcards of one suit) > four-straight (four consecutive ranks, ace
  high or low) > one pair > high card.
* Telesina: the Telesina ranking with its suit tie-breaks [decision A21]; on the last round the
  vela counts (four upcards + the vela = a full five-card Telesina hand). The heads-up
  straight-flush rule decides pots, not the order of play, so it does not apply here.

Equal showing hands: the player first clockwise from the dealer position acts [decision A4]
(``tie_break="suit"`` selects the alternative of ``stud_board_tie_break``: the cards' suits in the
bring-in order decide first, from the most significant card down). Telesina hands never tie.

>>> from poker.engine.cards import parse_cards as cs
>>> first_to_act("seven-card-stud", {6: cs("Ad Kc"), 2: cs("Ah Kd")}, dealer_seat=4, seat_count=8)
6
>>> first_to_act("seven-card-stud", {1: cs("9c 9d"), 2: cs("Ah Kd")}, dealer_seat=0, seat_count=8)
1
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final, Literal

from poker.engine.cards import DECK_32, DECK_52, Card, format_cards, verify_distinct, verify_in_deck
from poker.engine.evaluation._variants import four_run_top
from poker.engine.evaluation.telesina import RANKINGS as TELESINA_RANKINGS
from poker.engine.evaluation.telesina import SUIT_VALUES as TELESINA_SUIT_VALUES

__all__ = ["SHOWING_GAMES", "TieBreak", "bring_in_seat", "first_to_act"]

TieBreak = Literal["position", "suit"]
"""The table parameter ``stud_board_tie_break`` [decision A4]; ``position`` is the default."""

ShowingKey = tuple[int, ...]

_BRIDGE_ORDER: Final = "shdc"  # ♠ > ♥ > ♦ > ♣, high to low
_TELESINA_ORDER: Final = "hdcs"  # ♥ > ♦ > ♣ > ♠


@dataclass(frozen=True, slots=True)
class _Game:
    """What the showing order of one game needs."""

    title: str
    deck: tuple[Card, ...]
    deck_name: str
    lowest_brings_in: bool
    suit_order: str  # high to low, in the letters s h d c
    key: Callable[[Sequence[Card]], ShowingKey]
    common_card: str  # what the one card shared by every player is called; "" if there is none


# --- showing hands ---------------------------------------------------------------------------

_HIGH, _PAIR, _TWO_PAIR, _TRIPS, _FULL_HOUSE, _QUADS = range(6)


def _grouped_ranks(cards: Sequence[Card]) -> list[tuple[int, int]]:
    """(count, rank) of each rank held, the biggest groups first, higher ranks first."""
    counts: dict[int, int] = {}
    for card in cards:
        counts[card.rank] = counts.get(card.rank, 0) + 1
    return sorted(((count, rank) for rank, count in counts.items()), reverse=True)


def _pairs_category(counts: Sequence[int]) -> int:
    """The category that groups of these sizes (biggest first) make, pairs only."""
    if counts[0] == 4:
        return _QUADS
    if counts[0] == 3:
        return _FULL_HOUSE if len(counts) > 1 and counts[1] >= 2 else _TRIPS
    if counts[0] == 2:
        return _TWO_PAIR if len(counts) > 1 and counts[1] == 2 else _PAIR
    return _HIGH


def _stud_key(cards: Sequence[Card]) -> ShowingKey:
    """7 Card Stud, Stud Hi/Lo, Americana: pairs, trips, quads; then the ranks as in §3.1."""
    groups = _grouped_ranks(cards)
    return (_pairs_category([count for count, _ in groups]), *(rank for _, rank in groups))


# Soko's categories on up to four cards, low to high.
_SOKO_HIGH, _SOKO_PAIR, _SOKO_FOUR_STRAIGHT, _SOKO_FOUR_FLUSH = range(4)
_SOKO_TWO_PAIR, _SOKO_TRIPS, _SOKO_QUADS = range(4, 7)
_SOKO_OF_PAIRS: Final = {
    _HIGH: _SOKO_HIGH,
    _PAIR: _SOKO_PAIR,
    _TWO_PAIR: _SOKO_TWO_PAIR,
    _TRIPS: _SOKO_TRIPS,
    _QUADS: _SOKO_QUADS,
}


def _soko_key(cards: Sequence[Card]) -> ShowingKey:
    """Soko: the Soko ranking on up to four upcards; a four-flush and a four-straight count."""
    groups = _grouped_ranks(cards)
    ranks = tuple(rank for _, rank in groups)
    category = _SOKO_OF_PAIRS[_pairs_category([count for count, _ in groups])]
    if category > _SOKO_FOUR_FLUSH:
        return (category, *ranks)
    if len(cards) == 4 and len({card.suit for card in cards}) == 1:
        return (_SOKO_FOUR_FLUSH, *ranks)
    run_top = four_run_top(ranks, 2) if len(ranks) == 4 else None
    if run_top is not None:
        return (_SOKO_FOUR_STRAIGHT, run_top)
    return (category, *ranks)


_TELESINA_FULL_HAND: Final = 5


def _telesina_key(cards: Sequence[Card], *, ranks_then_suits: bool = False) -> ShowingKey:
    """Telesina: the full ranking on five cards (upcards + vela), else pairs with suit ties;
    high cards card by card, or (``ranks_then_suits``, the table's ``telesina_high_card``
    switch) all ranks before any suit [decision A19]."""
    if len(cards) == _TELESINA_FULL_HAND:
        name = "telesina-ranks-then-suits" if ranks_then_suits else "telesina"
        strength = TELESINA_RANKINGS[name].evaluate(cards, ())
        if strength is None:  # a high ranking always has a hand; only low rankings return None
            raise AssertionError("the Telesina ranking returned no hand")
        return (strength,)
    groups = _grouped_ranks(cards)
    category = _pairs_category([count for count, _ in groups])
    suits: dict[int, list[int]] = {}
    for card in sorted(cards, key=lambda card: TELESINA_SUIT_VALUES[card.suit], reverse=True):
        suits.setdefault(card.rank, []).append(TELESINA_SUIT_VALUES[card.suit])
    ranks = [rank for _, rank in groups]
    if category == _HIGH:
        if ranks_then_suits:
            return (category, *ranks, *(suits[rank][0] for rank in ranks))
        # Card by card, rank then suit, as in the high-card rule [decision A19].
        return (category, *(value for _, rank in groups for value in (rank, suits[rank][0])))
    singles = [rank for count, rank in groups if count == 1]
    grouped = [rank for count, rank in groups if count > 1]
    # All ranks first; then the kickers' suits from the highest kicker; then the grouped cards'
    # suits from the highest group, each player's higher-suited card first [decision A19].
    return (
        category,
        *ranks,
        *(suits[rank][0] for rank in singles),
        *(suit for rank in grouped for suit in suits[rank]),
    )


_COMMON: Final = "the common card"
_GAMES: Final = {
    "seven-card-stud": _Game(
        "7 Card Stud", DECK_52, "52-card", True, _BRIDGE_ORDER, _stud_key, _COMMON
    ),
    "seven-card-stud-hi-lo": _Game(
        "7 Card Stud Hi/Lo", DECK_52, "52-card", True, _BRIDGE_ORDER, _stud_key, _COMMON
    ),
    "soko": _Game("Soko", DECK_52, "52-card", False, _BRIDGE_ORDER, _soko_key, ""),
    "americana": _Game("Americana", DECK_32, "32-card", False, _BRIDGE_ORDER, _stud_key, ""),
    "telesina": _Game(
        "Telesina", DECK_32, "32-card", False, _TELESINA_ORDER, _telesina_key, "the vela"
    ),
}

SHOWING_GAMES: Final = tuple(_GAMES)
"""The games whose bring-in and first actor this module decides."""

_MAX_UPCARDS: Final = 4


# --- public functions ----------------------------------------------------------------------------


def bring_in_seat(
    game: str, door_cards: Mapping[int, Card], *, suit_order: str | None = None
) -> int:
    """The seat that must bring in, from each player's door card (his one upcard) by seat.

    ``suit_order`` overrides the game's suit order for equal ranks (the table parameter
    ``bring_in_suit_order``), written high to low in the letters ``s h d c``, e.g. ``"shdc"``.

    >>> from poker.engine.cards import parse_card as c
    >>> bring_in_seat("seven-card-stud", {1: c("Ac"), 2: c("2d")})  # the ace is high
    2
    >>> bring_in_seat("soko", {1: c("Ah"), 2: c("As"), 3: c("Kd")})
    2
    >>> bring_in_seat("americana", {1: c("Kd"), 2: c("Kc")})
    1
    >>> bring_in_seat("soko", {1: c("Ah"), 2: c("As")}, suit_order="hsdc")
    1
    """
    rules = _rules(game)
    order = rules.suit_order if suit_order is None else _checked_suit_order(suit_order)
    if not door_cards:
        raise ValueError("The bring-in needs at least one player's door card.")
    _check_cards(rules, list(door_cards.values()))
    # Higher is better: the rank first, then the suit's place in the order (first = best).
    ranked = {seat: (card.rank, -order.index(card.suit_char)) for seat, card in door_cards.items()}
    pick = min if rules.lowest_brings_in else max
    return pick(ranked, key=ranked.__getitem__)


def first_to_act(
    game: str,
    upcards: Mapping[int, Sequence[Card]],
    dealer_seat: int,
    seat_count: int,
    *,
    common: Sequence[Card] = (),
    tie_break: TieBreak = "position",
    telesina_high_card: str = "card_by_card",
) -> int:
    """The seat of the best showing hand, who acts first on a round after the bring-in round.

    ``upcards`` maps each seat still in the hand to his face-up cards (1 to 4, the same number
    for everyone). ``common`` is what every player shares: Telesina's vela on the last round, or
    the 7 Card Stud common card when it replaces the seventh cards. Ties go to the player first
    clockwise from ``dealer_seat`` [decision A4], or, with ``tie_break="suit"``, to the better
    suits first. Telesina's high cards compare as the table's ``telesina_high_card`` says
    (``card_by_card`` or ``ranks_then_suits``, decision A19).

    >>> from poker.engine.cards import parse_cards as cs
    >>> # Soko: a four-flush on the board beats a pair.
    >>> first_to_act("soko", {1: cs("Ah 9h 6h 2h"), 2: cs("Ks Kd Qc 3d")}, 0, 8)
    1
    >>> # Telesina, last round: the vela completes seat 2's straight.
    >>> boards = {1: cs("Ah Ad Kc Qs"), 2: cs("Ks Qh Jh Td")}
    >>> first_to_act("telesina", boards, 0, 6)
    1
    >>> first_to_act("telesina", boards, 0, 6, common=cs("9c"))
    2
    >>> # Telesina high cards: the ace of hearts first card by card, the king second by ranks.
    >>> highs = {1: cs("Ad Kh"), 2: cs("Ah Qd")}
    >>> first_to_act("telesina", highs, 0, 6), first_to_act(
    ...     "telesina", highs, 0, 6, telesina_high_card="ranks_then_suits")
    (2, 1)
    """
    rules = _rules(game)
    if tie_break not in ("position", "suit"):
        raise ValueError(f"{tie_break!r} is not a tie-break: use 'position' or 'suit'.")
    _check_seats(upcards, dealer_seat, seat_count)
    _check_showing(rules, upcards, common)
    key = rules.key
    if game == "telesina" and telesina_high_card == "ranks_then_suits":
        key = partial(_telesina_key, ranks_then_suits=True)
    keys = {seat: key([*cards, *common]) for seat, cards in upcards.items()}
    best = max(keys.values())
    tied = [seat for seat, key in keys.items() if key == best]
    if tie_break == "suit" and len(tied) > 1:
        suits = {seat: _suit_key(rules, [*upcards[seat], *common]) for seat in tied}
        best_suits = max(suits.values())
        tied = [seat for seat in tied if suits[seat] == best_suits]
    return min(tied, key=lambda seat: (seat - dealer_seat - 1) % seat_count)


# --- checks and helpers ------------------------------------------------------------------------


def _rules(game: str) -> _Game:
    rules = _GAMES.get(game)
    if rules is None:
        known = ", ".join(SHOWING_GAMES)
        raise ValueError(f"{game!r} is not a stud-type game; the stud-type games are {known}.")
    return rules


def _checked_suit_order(suit_order: str) -> str:
    if sorted(suit_order) != sorted(_BRIDGE_ORDER):
        raise ValueError(
            f"{suit_order!r} is not a suit order: write the four suits s, h, d, c once each, "
            "highest first."
        )
    return suit_order


def _check_cards(rules: _Game, cards: Sequence[Card]) -> None:
    for card in cards:
        if not isinstance(card, Card):
            raise ValueError(f"{card!r} is not a card.")
    verify_distinct(cards)
    verify_in_deck(cards, rules.deck, rules.deck_name)


def _check_seats(upcards: Mapping[int, Sequence[Card]], dealer_seat: int, seat_count: int) -> None:
    if seat_count < 2:
        raise ValueError(f"A table has at least two seats; {seat_count} were given.")
    for seat in (dealer_seat, *upcards):
        if not 0 <= seat <= seat_count:
            raise ValueError(f"Seat {seat} is not on a table of {seat_count} seats.")
    if len({seat % seat_count for seat in upcards}) != len(upcards):
        raise ValueError("Two players are given the same seat.")


def _check_showing(
    rules: _Game, upcards: Mapping[int, Sequence[Card]], common: Sequence[Card]
) -> None:
    if not upcards:
        raise ValueError("The first actor needs at least one player's upcards.")
    sizes = {len(cards) for cards in upcards.values()}
    if len(sizes) != 1:
        raise ValueError("Every player shows the same number of upcards on a betting round.")
    size = sizes.pop()
    if not 1 <= size <= _MAX_UPCARDS:
        raise ValueError(f"A player shows 1 to {_MAX_UPCARDS} upcards; {size} were given.")
    if common and not rules.common_card:
        raise ValueError(f"{rules.title} has no common card; {format_cards(common)} given.")
    if len(common) > 1:
        raise ValueError(
            f"{rules.title} has one common card ({rules.common_card}); "
            f"{format_cards(common)} given."
        )
    _check_cards(rules, [*(card for cards in upcards.values() for card in cards), *common])


def _suit_key(rules: _Game, cards: Sequence[Card]) -> ShowingKey:
    """The suits of the cards (best = first in the game's order), most significant card first:
    bigger groups first, then higher ranks, then better suits."""
    counts: dict[int, int] = {}
    for card in cards:
        counts[card.rank] = counts.get(card.rank, 0) + 1
    suit_value = {suit: 3 - place for place, suit in enumerate(rules.suit_order)}
    ordered = sorted(
        cards,
        key=lambda card: (counts[card.rank], card.rank, suit_value[card.suit_char]),
        reverse=True,
    )
    return tuple(suit_value[card.suit_char] for card in ordered)
