"""The Telesina ranking (RULES.md §3.6): the best five of a player's five cards and the vela.

Deck A K Q J T 9 8 7; suit order hearts > diamonds > clubs > spades. Categories from the highest:
straight flush, four of a kind, **flush**, **full house**, straight, three of a kind, two pair,
one pair, high card. The comparisons inside a category follow the seed and [decision A19]:

* straight flush: top card (A-7-8-9-T is the lowest, ten high), then the suit;
* flush: the suit only (two players never hold flushes of one suit);
* four of a kind, full house, three of a kind: ranks only (they cannot tie between players);
* straight: top card, then the suits of its cards from the top down (the suit of the top card
  decides unless both players use the vela as top card, then the next card's suit, and so on);
* two pair: high pair, low pair, kicker by rank; then the suits of the high pair's cards (each
  player's higher-suited card first), of the low pair's cards, of the kicker;
* one pair: pair, then the three kickers by rank; then the kickers' suits from the highest kicker
  down, then the pair's suits;
* high card: card by card from the highest, rank then suit (A♥ Q♦ beats A♦ K♣).

The table parameter ``telesina_high_card`` [decision A19] picks the ranking: ``card_by_card``
(the default) is ``telesina`` above; ``ranks_then_suits`` is ``telesina-ranks-then-suits``, the
same ranking except for high card: the five ranks first, highest to lowest, and only when all five
are equal the suits card by card (A♦ K♣ beats A♥ Q♦). Every other strength is the same int in
both rankings.

Comparing the suits card by card skips a shared vela by itself: it is the same card on both sides.

**The heads-up straight-flush rule** (seed; [decision A18]): when exactly two players contest a
pot, T♠-9♠-8♠-7♠-A♠ beats A♥-K♥-Q♥-J♥-T♥. That makes the order non-transitive, so it is not part
of the strength: the showdown code must call :func:`compare_telesina` (or
:func:`telesina_pot_winners`) with the number of players contesting the pot. Because a player
chooses any five of six cards, one who holds six suited cards in sequence (say A♠ 7♠ 8♠ 9♠ T♠ and
the vela J♠) is valued as his higher straight flush *and marked as also holding the next lower one*
(the last element of the straight-flush vector; the mark never decides between two players, as no
two players can hold straight flushes of the same top card and suit). The heads-up comparison lets
each player use either straight flush.

>>> from poker.engine.cards import parse_cards
>>> from poker.engine.evaluation import rank_hand
>>> low = rank_hand("telesina", parse_cards("Ts 9s 8s 7s As"))
>>> royal = rank_hand("telesina", parse_cards("Ah Kh Qh Jh Th"))
>>> low.name, royal.name, low < royal
('Straight flush of spades, ten high (ace low)', 'Straight flush of hearts, ace high', True)
>>> compare_telesina(low, royal, contestants=2), compare_telesina(low, royal, contestants=3)
(1, -1)
>>> rank_hand("telesina", parse_cards("Kh Kc Qh Qc 8s"), parse_cards("9d")).name
'Two pair, kings and queens, nine kicker [Kh Kc Qh Qc 9d]'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from poker.engine.cards import ACE, DECK_32, SEVEN, Card
from poker.engine.evaluation import HandValue, Ranking
from poker.engine.evaluation._names import (
    cards_name,
    hand_name,
    straight_name,
    suit_chars,
    suit_names,
)
from poker.engine.evaluation._variants import (
    FLUSH_OVER_FULL_HOUSE,
    SUIT_FIELDS,
    Categories,
    by_rank_key,
    card_weights,
    category_of,
    pack,
    read_ranks,
    straights,
    suit_counts,
    unpack,
)

__all__ = [
    "RANKINGS",
    "SUIT_VALUES",
    "HeadsUpRule",
    "HighCardRule",
    "compare_telesina",
    "ranking_for",
    "telesina_pot_winners",
]

SUIT_VALUES: Final = (0, 3, 2, 1)
"""The Telesina value of each card suit (s, h, d, c): hearts 3 > diamonds 2 > clubs 1 > spades 0."""
_SUIT_NAMES: Final = suit_names(SUIT_VALUES)
_SUIT_CHARS: Final = suit_chars(SUIT_VALUES)

HeadsUpRule = Literal["exact", "any_low_sf_beats_royal", "off"]
"""The table parameter ``telesina_headsup_sf`` [decision A18]: ``exact`` (default) — only
T♠-9♠-8♠-7♠-A♠ beats only A♥-K♥-Q♥-J♥-T♥; ``any_low_sf_beats_royal`` — any A-7-8-9-T straight
flush beats any A-K-Q-J-T straight flush; ``off`` — no special rule."""

HighCardRule = Literal["card_by_card", "ranks_then_suits"]
"""The table parameter ``telesina_high_card`` [decision A19]: ``card_by_card`` (default) — each
card by rank, then suit, from the highest; ``ranks_then_suits`` — the five ranks, then the suits."""

_RANKING_NAMES: Final[dict[HighCardRule, str]] = {
    "card_by_card": "telesina",
    "ranks_then_suits": "telesina-ranks-then-suits",
}


def ranking_for(high_card: HighCardRule = "card_by_card") -> str:
    """The name of the Telesina ranking for the table parameter ``telesina_high_card``.

    >>> ranking_for(), ranking_for("ranks_then_suits")
    ('telesina', 'telesina-ranks-then-suits')
    """
    return _RANKING_NAMES[high_card]


_LOW: Final = SEVEN
_CATEGORIES: Final = Categories(
    FLUSH_OVER_FULL_HOUSE[:-1],  # no royal flush: an ace-high straight flush is one of them
    _LOW,
    # Ranks first, then suit values, as the module's comparison rules say.
    lengths={
        "high": 10,  # the (rank, suit) of each card from the highest
        "pair": 9,  # pair, three kickers; the kickers' suits; the pair's two suits
        "two_pair": 8,  # high pair, low pair, kicker; the suits of the 2 + 2 + 1 cards
        "trips": 3,
        "straight": 6,  # top card; the suits from the top card down
        "full_house": 2,
        "flush": 1,  # the suit only
        "quads": 2,
        "straight_flush": 3,  # top card, suit, 1 if the next lower one is held too
    },
)
FLUSH: Final = _CATEGORIES.number["flush"]
HIGH: Final = _CATEGORIES.number["high"]
STRAIGHT_FLUSH: Final = _CATEGORIES.number["straight_flush"]

_STRAIGHTS: Final = straights(_LOW)
_STRAIGHT_BY_TOP: Final = {straight[0]: straight for straight in _STRAIGHTS}
_LOWEST_TOP: Final = _STRAIGHTS[0][0]  # the ten of A-7-8-9-T
_WEIGHTS, _SUIT_SHIFT, _RANK_MASK = card_weights(_LOW)
_RANK_WEIGHTS: Final = [weight & _RANK_MASK for weight in _WEIGHTS]
# One byte per card, rank << 4 | suit value: sorting these sorts cards by rank, then by suit.
_RANK_SUIT: Final = [(index // 4 + 2) << 4 | SUIT_VALUES[index % 4] for index in range(52)]

# --- plans: what the ranks of five or six cards make when they hold no flush ---------------------

_FIXED, _PLAN_STRAIGHT, _PLAN_TWO_PAIR, _PLAN_PAIR, _PLAN_HIGH = range(5)
Plan = tuple[int, int, tuple[int, ...]]
"""(what to do, the strength before the suits are filled in, the ranks the suits come from)."""


def _plan(ranks: tuple[int, ...]) -> Plan:
    """How to value five or six cards of these ranks that hold no flush."""
    kind, vector = read_ranks(ranks, _STRAIGHTS)
    if kind in ("quads", "full_house", "trips"):
        return _FIXED, _CATEGORIES.strength(kind, vector), ()
    base = _CATEGORIES.strength(kind, (*vector, 0, 0, 0, 0, 0))
    if kind == "straight":
        return _PLAN_STRAIGHT, base, _STRAIGHT_BY_TOP[vector[0]]
    if kind == "two_pair":
        return _PLAN_TWO_PAIR, base, vector
    if kind == "pair":
        return _PLAN_PAIR, base, vector[:1]
    return _PLAN_HIGH, _CATEGORIES.strength(kind, ()), ()


_PLANS: Final = by_rank_key(_LOW, (5, 6), _plan, distinct=False)


def _straight_flush_entry(ranks: tuple[int, ...]) -> tuple[int, int] | None:
    """For five or six suited ranks: (top of the best straight flush, 1 if the next lower one is
    there too, else 0), or None without a straight flush."""
    held = [straight for straight in _STRAIGHTS if set(straight) <= set(ranks)]
    if not held:
        return None
    return held[-1][0], int(len(held) == 2)


_STRAIGHT_FLUSHES: Final = {
    key: entry
    for key, entry in by_rank_key(_LOW, (5, 6), _straight_flush_entry, distinct=True).items()
    if entry is not None
}


def _flush_suit(field: int) -> int:
    """The card suit (0..3) holding five or more of the cards, or -1."""
    counts = suit_counts(field)
    return next((suit for suit, count in enumerate(counts) if count >= 5), -1)


_FLUSH_SUITS: Final = [_flush_suit(field) for field in SUIT_FIELDS]

# --- evaluation ------------------------------------------------------------------------------


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of the best five of five hole cards and at most one vela (checked)."""
    cards = (*hole, *board)
    total = 0
    for card in cards:
        total += _WEIGHTS[card]
    flush_suit = _FLUSH_SUITS[total >> _SUIT_SHIFT]
    if flush_suit >= 0:
        # Five suited cards out of six leave no room for four of a kind: a straight flush or a
        # flush is the best hand.
        return _flush_strength(cards, flush_suit)
    action, base, ranks = _PLANS[total & _RANK_MASK]
    if action == _FIXED:
        return base
    ordered = sorted([_RANK_SUIT[card] for card in cards], reverse=True)
    if action == _PLAN_HIGH:
        return base + (
            ordered[0] << 32 | ordered[1] << 24 | ordered[2] << 16 | ordered[3] << 8 | ordered[4]
        )
    if action == _PLAN_PAIR:
        return base + _pair_suits(ordered, ranks[0])
    if action == _PLAN_TWO_PAIR:
        return base + _two_pair_suits(ordered, ranks)
    return base + _straight_suits(ordered, ranks)


def _evaluate_ranks_then_suits(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength under ``telesina_high_card = ranks_then_suits``: a high card's vector is
    reordered from (rank, suit) card by card to the five ranks, then the five suits; the best five
    cards are the same (six cards without a pair drop the lowest rank either way)."""
    strength = _evaluate(hole, board)
    if category_of(strength) != HIGH:
        return strength
    values = unpack(strength, 10)
    return pack(HIGH, (*values[::2], *values[1::2]))


def _flush_strength(cards: tuple[Card, ...], flush_suit: int) -> int:
    suited = 0
    for card in cards:
        if card & 3 == flush_suit:
            suited += _RANK_WEIGHTS[card]
    suit_value = SUIT_VALUES[flush_suit]
    entry = _STRAIGHT_FLUSHES.get(suited)
    if entry is None:
        return pack(FLUSH, (suit_value,))
    top, also_lower = entry
    return pack(STRAIGHT_FLUSH, (top, suit_value, also_lower))


def _pair_suits(ordered: list[int], pair: int) -> int:
    """The suit nibbles of a pair: the three highest kickers' suits, then the pair's suits."""
    pair_suits = kicker_suits = kickers = 0
    for card in ordered:
        if card >> 4 == pair:
            pair_suits = pair_suits << 4 | card & 15
        elif kickers < 3:
            kicker_suits = kicker_suits << 4 | card & 15
            kickers += 1
    return kicker_suits << 8 | pair_suits


def _two_pair_suits(ordered: list[int], ranks: tuple[int, ...]) -> int:
    """The suit nibbles of two pair: high pair's, low pair's, then the best kicker's suit."""
    high, low, kicker = ranks
    high_suits = low_suits = 0
    kicker_suit = -1
    for card in ordered:
        rank = card >> 4
        if rank == high:
            high_suits = high_suits << 4 | card & 15
        elif rank == low:
            low_suits = low_suits << 4 | card & 15
        elif rank == kicker and kicker_suit < 0:
            kicker_suit = card & 15  # the first card of the rank is its highest suit
    return high_suits << 12 | low_suits << 4 | kicker_suit


def _straight_suits(ordered: list[int], straight: tuple[int, ...]) -> int:
    """The suit nibbles of a straight, from the top card down, each rank's highest suit."""
    best: dict[int, int] = {}
    for card in ordered:
        best.setdefault(card >> 4, card & 15)
    suits = 0
    for rank in straight:
        suits = suits << 4 | best[rank]
    return suits


# --- names -----------------------------------------------------------------------------------


def _cards(pairs: Sequence[tuple[int, int]]) -> str:
    """``[Kh Kc 9d]`` from (rank, suit value) pairs."""
    return cards_name([(rank, _SUIT_CHARS[suit]) for rank, suit in pairs])


def _describe(strength: int) -> str:
    """Name a Telesina strength; where several suits take part, the five cards follow in
    brackets, e.g. ``"Two pair, kings and queens, nine kicker [Kh Kc Qh Qc 9d]"``."""
    kind, values = _CATEGORIES.read(strength)
    if kind == "straight_flush":
        top, suit, also_lower = values
        name = hand_name(kind, (top,), low_rank=_LOW, suit=_SUIT_NAMES[suit])
        if also_lower:
            name += f"; also {straight_name(top - 1, top - 1 == _LOWEST_TOP)}"
        return name
    if kind == "flush":  # only the suit counts
        return hand_name(kind, (), suit=_SUIT_NAMES[values[0]])
    if kind == "straight":
        held = list(zip(_STRAIGHT_BY_TOP[values[0]], values[1:], strict=True))
        ranks = values[:1]
    elif kind == "two_pair":
        high, low, kicker, *suits = values
        held = list(zip((high, high, low, low, kicker), suits, strict=True))
        ranks = values[:3]
    elif kind == "pair":
        pair, *rest = values
        kickers, kicker_suits, pair_suits = rest[:3], rest[3:6], rest[6:]
        held = [(pair, suit) for suit in pair_suits] + list(zip(kickers, kicker_suits, strict=True))
        ranks = values[:4]
    elif kind == "high":
        held = list(zip(values[::2], values[1::2], strict=True))
        ranks = values[::2]
    else:  # four of a kind, full house, three of a kind: no suits
        return hand_name(kind, values, low_rank=_LOW)
    return f"{hand_name(kind, ranks, low_rank=_LOW)} {_cards(held)}"


def _describe_ranks_then_suits(strength: int) -> str:
    """Name a strength of ``telesina-ranks-then-suits``, like :func:`_describe`."""
    if category_of(strength) != HIGH:
        return _describe(strength)
    values = unpack(strength, 10)
    held = list(zip(values[:5], values[5:], strict=True))
    return f"{hand_name('high', values[:5], low_rank=_LOW)} {_cards(held)}"


# --- the heads-up straight-flush rule ----------------------------------------------------------


def compare_telesina(
    first: HandValue, second: HandValue, *, contestants: int, rule: HeadsUpRule = "exact"
) -> int:
    """Compare two Telesina values for one pot: 1 if ``first`` wins, -1 if ``second``, 0 a split.

    ``contestants`` is the number of players still contesting that pot at the showdown (not
    folded and eligible for it). With exactly two, the heads-up straight-flush rule applies
    (``rule``, the table parameter ``telesina_headsup_sf``, [decision A18]); with more, this is
    the plain order of the strengths. A player who holds two straight flushes may use either.

    >>> from poker.engine.cards import parse_cards
    >>> from poker.engine.evaluation import rank_hand
    >>> royal = rank_hand("telesina", parse_cards("Ah Kh Qh Jh Th"), parse_cards("9h"))
    >>> low = rank_hand("telesina", parse_cards("Ts 9s 8s 7s As"), parse_cards("9h"))
    >>> royal.name
    'Straight flush of hearts, ace high; also king high'
    >>> compare_telesina(royal, low, contestants=2)  # the K-high straight flush beats the low one
    1
    """
    _verify_rankings((first, second), "compare_telesina")
    if contestants < 2:
        raise ValueError(f"A pot needs two contestants to compare hands; {contestants} given.")
    if contestants > 2 or rule == "off":
        return _sign(first.strength - second.strength)
    first_choices, second_choices = _choices(first.strength), _choices(second.strength)
    if any(all(_beats(mine, theirs, rule) for theirs in second_choices) for mine in first_choices):
        return 1
    if any(all(_beats(mine, theirs, rule) for theirs in first_choices) for mine in second_choices):
        return -1
    return 0


def telesina_pot_winners(values: Sequence[HandValue], *, rule: HeadsUpRule = "exact") -> list[int]:
    """The indexes of the winners of one pot among the values of the players contesting it.

    With two contestants the heads-up straight-flush rule applies (:func:`compare_telesina`);
    equal best values share the pot. All values must come from one Telesina ranking.

    >>> from poker.engine.cards import parse_cards
    >>> from poker.engine.evaluation import rank_hand
    >>> hands = ["Ts 9s 8s 7s As", "Ah Kh Qh Jh Th", "Kd Qd Jd Td 9d"]
    >>> values = [rank_hand("telesina", parse_cards(hand)) for hand in hands]
    >>> telesina_pot_winners(values), telesina_pot_winners(values[:2])
    ([1], [0])
    """
    if not values:
        raise ValueError("A pot needs at least one contestant.")
    _verify_rankings(values, "telesina_pot_winners")
    if len(values) == 2:
        outcome = compare_telesina(values[0], values[1], contestants=2, rule=rule)
        return [0] if outcome > 0 else [1] if outcome < 0 else [0, 1]
    best = max(value.strength for value in values)
    return [index for index, value in enumerate(values) if value.strength == best]


def _verify_rankings(values: Sequence[HandValue], caller: str) -> None:
    """ValueError unless every value comes from the same Telesina ranking."""
    for value in values:
        if value.ranking not in RANKINGS:
            raise ValueError(f"{caller} compares telesina values, not {value.ranking}.")
    rankings = sorted({value.ranking for value in values})
    if len(rankings) > 1:
        raise ValueError(f"{caller} compares values of one ranking, not {' and '.join(rankings)}.")


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def _choices(strength: int) -> tuple[int, ...]:
    """The strengths a player may show: with two straight flushes, the lower one as well."""
    if category_of(strength) != STRAIGHT_FLUSH:
        return (strength,)
    top, suit, also_lower = unpack(strength, 3)
    if not also_lower:
        return (strength,)
    return strength, pack(STRAIGHT_FLUSH, (top - 1, suit, 0))


def _beats(mine: int, theirs: int, rule: HeadsUpRule) -> bool:
    """Whether ``mine`` beats ``theirs`` heads-up under ``rule``."""
    if _low_beats_royal(mine, theirs, rule):
        return True
    if _low_beats_royal(theirs, mine, rule):
        return False
    return mine > theirs


def _low_beats_royal(low: int, royal: int, rule: HeadsUpRule) -> bool:
    """Whether the special rule makes straight flush ``low`` beat straight flush ``royal``."""
    if category_of(low) != STRAIGHT_FLUSH or category_of(royal) != STRAIGHT_FLUSH:
        return False
    low_top, low_suit, _ = unpack(low, 3)
    royal_top, royal_suit, _ = unpack(royal, 3)
    if low_top != _LOWEST_TOP or royal_top != ACE:
        return False
    if rule == "any_low_sf_beats_royal":
        return True
    return rule == "exact" and low_suit == SUIT_VALUES[0] and royal_suit == SUIT_VALUES[1]


RANKINGS: Final = {
    name: Ranking(
        name=name,
        evaluate=evaluate,
        describe=describe,
        hole_sizes=frozenset({5}),
        board_sizes=frozenset({0, 1}),
        total_sizes=frozenset({5, 6}),
        deck=DECK_32,
        deck_name="32-card",
    )
    for name, evaluate, describe in (
        ("telesina", _evaluate, _describe),
        ("telesina-ranks-then-suits", _evaluate_ranks_then_suits, _describe_ranks_then_suits),
    )
}
