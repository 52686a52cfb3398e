"""Building blocks shared by the variant rankings: Soko, Americana, Telesina and 32-card Draw.

Strength layout
---------------
Every strength is ``category << 48 | payload``. The payload is a vector of small numbers (ranks
2..14, suit values 0..3, flags 0..1), one per 4-bit nibble, the first element in the most
significant nibble and the last in the lowest one. Within one category every vector has the same
length, so comparing the ints compares (category, vector) lexicographically, and :func:`unpack`
reads the vector back for the names.

Table lookups
-------------
The evaluators add one precomputed weight per card (see :func:`card_weights`): the low bits count
the cards of each rank (3 bits per rank), the bits above count the cards of each suit. The rank
field alone decides every category but the flushes, so each module maps it through a small dict
built at import from every multiset of ranks (784 for five cards of the 32-card deck, 6,175 for
the 52-card deck), and reads the suit field only to spot a flush (or Soko's four-flush).

>>> pack(3, (14, 13)) == 3 << 48 | 0xED
True
>>> unpack(pack(3, (14, 13)), 2)
(14, 13)
>>> straights(7)[0], straights(7)[-1]
((10, 9, 8, 7, 14), (14, 13, 12, 11, 10))
>>> read_ranks((9, 9, 13, 12, 12), straights(2))
('two_pair', (12, 9, 13))
>>> sequence_name((14, 13, 9, 6))
'ace-king-nine-six'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations_with_replacement
from typing import Final

from engine.cards import ACE, RANK_CHARS, RANK_NAMES, TWO

CATEGORY_SHIFT: Final = 48
"""Bit position of the category; the payload's (at most 12) nibbles sit below it."""

_PLURALS: Final = (
    "deuces",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)


# --- strength vectors ---------------------------------------------------------------------------


def pack(category: int, values: Sequence[int]) -> int:
    """The strength of ``category`` with tie-break vector ``values`` (each 0..15)."""
    payload = 0
    for value in values:
        payload = payload << 4 | value
    return category << CATEGORY_SHIFT | payload


def category_of(strength: int) -> int:
    """The category number of a strength."""
    return strength >> CATEGORY_SHIFT


def unpack(strength: int, length: int) -> tuple[int, ...]:
    """The last ``length`` nibbles of the payload, most significant first."""
    return tuple(strength >> (4 * (length - 1 - index)) & 15 for index in range(length))


# --- ranks ----------------------------------------------------------------------------------------


def straights(low_rank: int) -> tuple[tuple[int, ...], ...]:
    """Every straight of a deck whose lowest rank is ``low_rank``, lowest first.

    Each straight lists its ranks from the top card down; in the ace-low straight the ace comes
    last (A-2-3-4-5 is ``(5, 4, 3, 2, 14)``, A-7-8-9-T is ``(10, 9, 8, 7, 14)``), so the first
    element is always the top card.
    """
    ace_low = (low_rank + 3, low_rank + 2, low_rank + 1, low_rank, ACE)
    others = tuple(tuple(range(top, top - 5, -1)) for top in range(low_rank + 4, ACE + 1))
    return (ace_low, *others)


def best_straight(
    rank_set: frozenset[int] | set[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[int, ...] | None:
    """The highest straight whose ranks all appear in ``rank_set``, or None."""
    if len(rank_set) < 5:
        return None
    for straight in reversed(deck_straights):
        if rank_set.issuperset(straight):
            return straight
    return None


def four_run_top(ranks: Sequence[int], low_rank: int) -> int | None:
    """The top card of the highest run of four consecutive ranks, ace high or low, or None.

    Soko's four-straight: J-Q-K-A tops at the ace, A-2-3-4 at the four; no wrap-around.

    >>> four_run_top((5, 6, 7, 8, 8), 2), four_run_top((14, 2, 3, 4, 13), 2)
    (8, 4)
    >>> four_run_top((14, 13, 12, 11, 2), 2), four_run_top((14, 13, 12, 10, 2), 2)
    (14, None)
    """
    present = 0
    for rank in ranks:
        present |= 1 << rank
    if present >> ACE & 1:
        present |= 1 << (low_rank - 1)  # the ace also plays below the lowest rank
    for top in range(ACE, low_rank + 1, -1):
        run = 0b1111 << (top - 3)
        if present & run == run:
            return top
    return None


def rank_multisets(ranks: Sequence[int], size: int) -> Iterator[tuple[int, ...]]:
    """Every multiset of ``size`` ranks drawn from ``ranks`` with at most four of a rank.

    Each comes sorted from the highest rank down.
    """
    for combo in combinations_with_replacement(sorted(ranks, reverse=True), size):
        # Sorted, so five of a rank would show as equal ends of a five-card window.
        if all(combo[start] != combo[start + 4] for start in range(size - 4)):
            yield combo


def read_ranks(
    ranks: Sequence[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[str, tuple[int, ...]]:
    """The best category that five or more ``ranks`` make without looking at suits.

    Returns the kind (``quads``, ``full_house``, ``straight``, ``trips``, ``two_pair``, ``pair``
    or ``high``) and the standard tie-break vector of RULES.md §3.1 for the best five of them:
    quads (quad, kicker); full house (trips, pair); straight (top); trips (trips, 2 kickers);
    two pair (high pair, low pair, kicker); pair (pair, 3 kickers); high card (5 ranks). The order
    of the kinds is the usual one (a variant that ranks a flush above a full house still ranks
    every one of these the usual way among themselves).
    """
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    distinct = sorted(counts, reverse=True)
    top_count = max(counts.values())
    # The ranks holding the most cards first, higher ranks first among equal counts.
    grouped = sorted(distinct, key=counts.__getitem__, reverse=True)
    top_rank = grouped[0]
    others = [rank for rank in distinct if rank != top_rank]
    if top_count == 4:
        return "quads", (top_rank, others[0])
    pairs = [rank for rank in distinct if counts[rank] >= 2]
    if top_count == 3 and len(pairs) >= 2:
        return "full_house", (top_rank, next(rank for rank in pairs if rank != top_rank))
    straight = best_straight(frozenset(distinct), deck_straights)
    if straight is not None:
        return "straight", (straight[0],)
    if top_count == 3:
        return "trips", (top_rank, *others[:2])
    if len(pairs) >= 2:
        high, low = pairs[:2]
        return "two_pair", (high, low, next(rank for rank in distinct if rank not in (high, low)))
    if top_count == 2:
        return "pair", (top_rank, *others[:3])
    return "high", tuple(distinct[:5])


def read_flush(
    ranks: Sequence[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[str, tuple[int, ...]]:
    """Read five or more suited cards of these distinct ranks: the best flush-type hand.

    Returns ``("royal_flush", ())``, ``("straight_flush", (top,))`` or ``("flush", five ranks)``.
    """
    straight = best_straight(frozenset(ranks), deck_straights)
    if straight is None:
        return "flush", tuple(sorted(ranks, reverse=True)[:5])
    if straight[0] == ACE:
        return "royal_flush", ()
    return "straight_flush", (straight[0],)


# --- card weights ---------------------------------------------------------------------------------


def card_weights(low_rank: int) -> tuple[list[int], int]:
    """Per-card weights whose sum over a hand counts its ranks (low bits) and suits (high bits).

    Returns the weights, indexed by card, and the bit position of the suit field; the rank field
    is everything below it. Cards below ``low_rank`` (outside a 32-card deck) weigh nothing:
    the rankings check the deck before they evaluate.
    """
    suit_shift = 3 * (ACE - low_rank + 1)
    weights = [0] * 52
    for index in range(52):
        rank, suit = index // 4 + TWO, index % 4
        if rank >= low_rank:
            weights[index] = rank_weight(rank, low_rank) | 1 << (suit_shift + 3 * suit)
    return weights, suit_shift


def rank_weight(rank: int, low_rank: int) -> int:
    """The weight of one card of ``rank`` in the rank field."""
    return 1 << 3 * (rank - low_rank)


def rank_key(ranks: Sequence[int], low_rank: int) -> int:
    """The rank field of a hand with these ranks."""
    return sum(rank_weight(rank, low_rank) for rank in ranks)


def suit_counts(suit_field: int) -> tuple[int, int, int, int]:
    """How many cards of each suit (s, h, d, c) a suit field counts."""
    return (suit_field & 7, suit_field >> 3 & 7, suit_field >> 6 & 7, suit_field >> 9 & 7)


SUIT_FIELDS: Final = range(1 << 12)
"""Every value of the 12-bit suit field (3 bits per suit), to build per-field lookup lists."""


# --- names ----------------------------------------------------------------------------------------


def rank_name(rank: int) -> str:
    """``"ace"`` for 14, ``"deuce"`` for 2."""
    return RANK_NAMES[rank - TWO]


def rank_plural(rank: int) -> str:
    """``"aces"``, ``"sixes"``."""
    return _PLURALS[rank - TWO]


def sequence_name(ranks: Sequence[int]) -> str:
    """Ranks joined by hyphens, e.g. ``"ace-king-nine-six"``."""
    return "-".join(rank_name(rank) for rank in ranks)


def card_code(rank: int, suit_char: str) -> str:
    """The short code of a card, e.g. ``"Ah"``."""
    return RANK_CHARS[rank - TWO] + suit_char


def straight_name(top: int, low_rank: int, length: int = 5) -> str:
    """``"ten high (ace low)"`` for A-7-8-9-T in a 32-card deck, else e.g. ``"king high"``.

    ``length`` is the number of cards in the run: 4 for Soko's four-straight (A-2-3-4 is
    ``"four high (ace low)"``).
    """
    ace_low = top == low_rank + length - 2
    return f"{rank_name(top)} high" + (" (ace low)" if ace_low else "")


def kickers_name(ranks: Sequence[int]) -> str:
    """``"king kicker"``, ``"jack-seven kickers"``."""
    return sequence_name(ranks) + (" kicker" if len(ranks) == 1 else " kickers")


def describe_common(kind: str, values: Sequence[int], low_rank: int) -> str:
    """Name a rank-only reading of :func:`read_ranks` (no suits), e.g. ``"Pair of aces, ..."``."""
    if kind == "quads":
        return f"Four of a kind, {rank_plural(values[0])}, {kickers_name(values[1:])}"
    if kind == "full_house":
        return f"Full house, {rank_plural(values[0])} over {rank_plural(values[1])}"
    if kind == "straight":
        return f"Straight, {straight_name(values[0], low_rank)}"
    if kind == "trips":
        return f"Three of a kind, {rank_plural(values[0])}, {kickers_name(values[1:])}"
    if kind == "two_pair":
        high, low, kicker = values
        return f"Two pair, {rank_plural(high)} and {rank_plural(low)}, {kickers_name((kicker,))}"
    if kind == "pair":
        return f"Pair of {rank_plural(values[0])}, {kickers_name(values[1:])}"
    if kind == "high":
        return f"High card, {sequence_name(values)}"
    raise ValueError(f"{kind!r} is not a rank-only hand kind.")
