"""Hand names, one style for every ranking (private to the package).

A name gives the category and then everything the ranking compares inside it, in the order it
compares them, so that a player can read from two names why one hand beat the other: the ranks
of the made hand, then the kickers, then (in the 32-card games where suits break ties) the suit
that decided. Every ranking names its strengths through :func:`hand_name` and the helpers below.

>>> hand_name("full_house", (13, 5))
'Full house, kings over fives'
>>> hand_name("two_pair", (12, 9, 13))
'Two pair, queens and nines, king kicker'
>>> hand_name("pair", (11, 14, 9, 4))
'One pair, jacks, ace-nine-four kickers'
>>> hand_name("straight", (10,), low_rank=7)  # A-7-8-9-T of the 32-card deck
'Straight, ten high (ace low)'
>>> hand_name("flush", (14, 12, 11, 9, 7), suit="hearts")
'Flush of hearts, ace-queen-jack-nine-seven'
>>> hand_name("pair", (13, 12, 11, 9), card=(13, "hearts"))
'One pair, kings, queen-jack-nine kickers (king of hearts)'
>>> low_name((8, 6, 4, 2, 1)), deuce_seven_name((7, 5, 4, 3, 2))
('8-6-4-2-A low', '7-5-4-3-2 (seven low)')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from poker.engine.cards import RANK_CHARS, RANK_NAMES, SUIT_CHARS, SUIT_NAMES, TWO

__all__ = [
    "STANDARD_KINDS",
    "VECTOR_LENGTHS",
    "Kind",
    "cards_name",
    "deuce_seven_name",
    "hand_name",
    "low_name",
    "straight_name",
    "suit_chars",
    "suit_names",
]

Kind = Literal[
    "royal_flush",
    "straight_flush",
    "quads",
    "full_house",
    "flush",
    "straight",
    "trips",
    "two_pair",
    "four_flush",
    "four_straight",
    "pair",
    "high",
]
"""A category, by what it is called here; each ranking orders the ones it has its own way."""

STANDARD_KINDS: Final[tuple[Kind, ...]] = (
    "high",
    "pair",
    "two_pair",
    "trips",
    "straight",
    "flush",
    "full_house",
    "quads",
    "straight_flush",
)
"""The categories of RULES.md §3.1, lowest first (a royal flush is an ace-high straight flush)."""

_PARTS: Final[dict[Kind, tuple[str, int, int]]] = {
    # kind: (title, ranks that make the hand, kickers); the vector is the ranks, then the kickers
    "royal_flush": ("Royal flush", 0, 0),
    "straight_flush": ("Straight flush", 1, 0),  # top card
    "quads": ("Four of a kind", 1, 1),
    "full_house": ("Full house", 2, 0),  # trips, pair
    "flush": ("Flush", 5, 0),
    "straight": ("Straight", 1, 0),  # top card
    "trips": ("Three of a kind", 1, 2),
    "two_pair": ("Two pair", 2, 1),  # high pair, low pair
    "four_flush": ("Four-flush", 4, 1),  # the four suited ranks, the odd card
    "four_straight": ("Four-straight", 1, 1),  # top of the run, the odd card
    "pair": ("One pair", 1, 3),
    "high": ("High card", 5, 0),
}
VECTOR_LENGTHS: Final = {kind: made + kickers for kind, (_, made, kickers) in _PARTS.items()}
"""The length of each kind's tie-break vector of ranks (RULES.md §3.1, §3.4), as named here."""

_RUNS: Final[frozenset[Kind]] = frozenset({"straight_flush", "straight", "four_straight"})
_GROUPS: Final[frozenset[Kind]] = frozenset({"quads", "trips", "pair"})
_PLURALS: Final = tuple("sixes" if name == "six" else name + "s" for name in RANK_NAMES)


def _rank_name(rank: int) -> str:
    """``"ace"`` for 14, ``"deuce"`` for 2."""
    return RANK_NAMES[rank - TWO]


def _rank_plural(rank: int) -> str:
    """``"aces"``, ``"sixes"``."""
    return _PLURALS[rank - TWO]


def _sequence_name(ranks: Sequence[int]) -> str:
    """Ranks joined by hyphens, e.g. ``"ace-king-nine-six"``."""
    return "-".join(RANK_NAMES[rank - TWO] for rank in ranks)


def _kickers_name(ranks: Sequence[int]) -> str:
    """``"king kicker"``, ``"jack-seven kickers"``."""
    return _sequence_name(ranks) + (" kicker" if len(ranks) == 1 else " kickers")


def straight_name(top: int, ace_low: bool = False) -> str:
    """``"king high"``; ``"ten high (ace low)"`` where the note is wanted."""
    return f"{RANK_NAMES[top - TWO]} high" + (" (ace low)" if ace_low else "")


def hand_name(
    kind: Kind,
    values: Sequence[int],
    *,
    low_rank: int = TWO,
    suit: str = "",
    card: tuple[int, str] | None = None,
) -> str:
    """Name a hand of ``kind`` from its tie-break vector of ranks (see :data:`VECTOR_LENGTHS`):
    ``"<title>, <the ranks that make it>, <kickers>"``, e.g. ``"Three of a kind, queens,
    jack-seven kickers"``.

    ``low_rank`` is the deck's lowest rank: in the 32-card deck (``SEVEN``) the ace-low straight
    A-7-8-9-T reads ``"ten high (ace low)"``; the 52-card wheel is the familiar ``"five high"``.
    Where suits break ties, ``suit`` names the suit of a flush-type hand (``"Flush of hearts,
    ..."``; with no ranks, ``"Flush of hearts"``), and ``card`` the (rank, suit name) of the card
    whose suit decided any other hand, added in parentheses: ``"... (king of hearts)"``.
    """
    title, made, _ = _PARTS[kind]
    name = f"{title} of {suit}" if suit else title
    if values:
        name += ", " + _made_name(kind, values[:made])
    if values[made:]:
        name += ", " + _kickers_name(values[made:])
    notes = ["ace low"] if kind in _RUNS and _ace_low(values[0], low_rank) else []
    if card is not None:
        notes.append(f"{_rank_name(card[0])} of {card[1]}")
    return f"{name} ({'; '.join(notes)})" if notes else name


def _made_name(kind: Kind, ranks: Sequence[int]) -> str:
    """The ranks that make the hand: ``"nine high"``, ``"kings over fives"``, ``"jacks"``..."""
    if kind in _RUNS:
        return straight_name(ranks[0])
    if kind in _GROUPS:
        return _rank_plural(ranks[0])
    if kind == "full_house":
        return f"{_rank_plural(ranks[0])} over {_rank_plural(ranks[1])}"
    if kind == "two_pair":
        return f"{_rank_plural(ranks[0])} and {_rank_plural(ranks[1])}"
    return _sequence_name(ranks)  # flush, four-flush, high card


def _ace_low(top: int, low_rank: int) -> bool:
    """Whether a straight topping at ``top`` is the 32-card deck's A-7-8-9-T (noted by name)."""
    return low_rank != TWO and top == low_rank + 3


def _rank_chars(ranks: Sequence[int]) -> str:
    """Ranks as ``K-Q-J-T-8``; the ace is ``A`` whether it counts 14 or 1."""
    return "-".join("A" if rank == 1 else RANK_CHARS[rank - TWO] for rank in ranks)


def low_name(ranks: Sequence[int]) -> str:
    """An ace-to-five low, highest card first (ace = 1), e.g. ``"8-6-4-2-A low"``."""
    return f"{_rank_chars(ranks)} low"


def deuce_seven_name(ranks: Sequence[int]) -> str:
    """A deuce-to-seven hand without a pair, straight or flush: ``"7-5-4-3-2 (seven low)"``."""
    return f"{_rank_chars(ranks)} ({_rank_name(ranks[0])} low)"


def suit_names(suit_values: Sequence[int]) -> tuple[str, ...]:
    """The suit names (``"hearts"``) by suit value, from a game's value of each card suit."""
    return tuple(SUIT_NAMES[suit_values.index(value)] for value in range(4))


def suit_chars(suit_values: Sequence[int]) -> str:
    """The suit letters (``"h"``) by suit value, from a game's value of each card suit."""
    return "".join(SUIT_CHARS[suit_values.index(value)] for value in range(4))


def cards_name(cards: Sequence[tuple[int, str]]) -> str:
    """``"[Kh Kc 9d]"`` from (rank, suit letter) pairs."""
    return "[" + " ".join(RANK_CHARS[rank - TWO] + suit for rank, suit in cards) + "]"
