"""Hand rankings of the room's 13 games (RULES.md §3): one entry point, :func:`rank_hand`.

Every ranking turns a player's cards into a :class:`HandValue`: values of one ranking are totally
ordered (greater is better, equal means a split) and each has a readable name.

>>> from poker.engine.cards import parse_cards
>>> value = rank_hand("high", parse_cards("Kh Kd 5c 5s Kc 2d 3h"))
>>> value.name
'Full house, kings over fives'
>>> rank_hand("high", parse_cards("As Ad")) < value
Traceback (most recent call last):
...
ValueError: The high ranking needs 5 to 7 cards in all; 2 were given.
>>> rank_hand("low8", parse_cards("Kc Qd 9h 9s 2c")) is None
True

The rankings: ``high``, ``omaha-high``, ``low8``, ``omaha-low8``, ``deuce-seven``, ``soko``,
``americana``, ``telesina``, ``telesina-ranks-then-suits`` (RULES.md §3.6, decision A19) and
``draw32``. Each lives in a module, which exposes its :class:`Ranking` objects in a dict
``RANKINGS`` by name; modules load on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from poker.engine.cards import DECK_52, Card, verify_distinct, verify_in_deck

__all__ = ["RANKING_NAMES", "HandValue", "Ranking", "get_ranking", "load_all_rankings", "rank_hand"]

Evaluate = Callable[[Sequence[Card], Sequence[Card]], int | None]
"""``Ranking.evaluate``: the strength of checked hole and board cards, or None."""


@dataclass(frozen=True, slots=True)
class Ranking:
    """How one ranking reads cards: its deck, the card counts it accepts, its evaluator and namer.

    ``evaluate(hole, board)`` gets cards already checked (distinct, in the deck, right counts) and
    returns the strength as an ``int`` (greater is better) or ``None`` when no hand qualifies (a
    low without five different cards of 8 or lower). ``describe(strength)`` names a strength.
    """

    name: str
    evaluate: Evaluate
    describe: Callable[[int], str]
    hole_sizes: frozenset[int]
    board_sizes: frozenset[int]
    total_sizes: frozenset[int]
    deck: tuple[Card, ...] = DECK_52
    deck_name: str = "52-card"
    _deck_set: frozenset[Card] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: membership checks run on every rank_hand call.
        object.__setattr__(self, "_deck_set", frozenset(self.deck))

    @classmethod
    def of_five_cards(
        cls, name: str, evaluate: Evaluate, describe: Callable[[int], str], deck: tuple[Card, ...]
    ) -> Ranking:
        """A ranking of exactly five hole cards and no board (the draw games, Soko, Americana)."""
        five = frozenset({5})
        return cls(name, evaluate, describe, five, frozenset({0}), five, deck, f"{len(deck)}-card")

    @classmethod
    def of_best_five(cls, name: str, evaluate: Evaluate, describe: Callable[[int], str]) -> Ranking:
        """A ranking of the best five of 5 to 7 cards, split any way between hole and board."""
        return cls(
            name, evaluate, describe, frozenset(range(8)), frozenset(range(6)), frozenset({5, 6, 7})
        )

    def verify_cards(self, hole: Sequence[Card], board: Sequence[Card]) -> None:
        """Raise ValueError with a sentence if these cards cannot be ranked here."""
        total = len(hole) + len(board)
        if total not in self.total_sizes:
            raise ValueError(
                f"The {self.name} ranking needs {_describe_sizes(self.total_sizes)} cards in all; "
                f"{total} were given."
            )
        if len(hole) not in self.hole_sizes:
            raise ValueError(
                f"The {self.name} ranking needs {_describe_sizes(self.hole_sizes)} hole cards; "
                f"{len(hole)} were given."
            )
        if len(board) not in self.board_sizes:
            raise ValueError(
                f"The {self.name} ranking needs {_describe_sizes(self.board_sizes)} board cards; "
                f"{len(board)} were given."
            )
        cards = [*hole, *board]
        for card in cards:
            if not isinstance(card, Card):
                raise ValueError(f"{card!r} is not a card.")
        verify_distinct(cards)
        if not self._deck_set.issuperset(cards):
            verify_in_deck(cards, self.deck, self.deck_name)


def _describe_sizes(sizes: frozenset[int]) -> str:
    ordered = sorted(sizes)
    if len(ordered) == 1:
        return str(ordered[0])
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]} to {ordered[-1]}"
    return ", ".join(map(str, ordered[:-1])) + f" or {ordered[-1]}"


class HandValue:
    """The value of a hand under one ranking: ordered (greater is better), named.

    Values of different rankings do not compare: that would be a bug in the caller.
    """

    __slots__ = ("ranking", "strength")

    def __init__(self, ranking: str, strength: int) -> None:
        self.ranking: Final = ranking
        self.strength: Final = strength

    @property
    def name(self) -> str:
        """A readable name, e.g. ``"Full house, kings over fives"`` or ``"8-6-4-2-A low"``."""
        return get_ranking(self.ranking).describe(self.strength)

    def _other(self, other: object) -> int:
        if not isinstance(other, HandValue):
            raise TypeError(f"cannot compare a hand value with {type(other).__name__}")
        if other.ranking != self.ranking:
            raise TypeError(f"cannot compare a {self.ranking} value with a {other.ranking} value")
        return other.strength

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.ranking == other.ranking and self.strength == other.strength

    def __hash__(self) -> int:
        return hash((self.ranking, self.strength))

    def __lt__(self, other: HandValue) -> bool:
        return self.strength < self._other(other)

    def __le__(self, other: HandValue) -> bool:
        return self.strength <= self._other(other)

    def __gt__(self, other: HandValue) -> bool:
        return self.strength > self._other(other)

    def __ge__(self, other: HandValue) -> bool:
        return self.strength >= self._other(other)

    def __repr__(self) -> str:
        return f"HandValue({self.ranking!r}, {self.name!r})"


_MODULES: Final = {
    "high": "poker.engine.evaluation.high",
    "omaha-high": "poker.engine.evaluation.omaha",
    "low8": "poker.engine.evaluation.low8",
    "omaha-low8": "poker.engine.evaluation.omaha",
    "deuce-seven": "poker.engine.evaluation.deuce_seven",
    "soko": "poker.engine.evaluation.soko",
    "americana": "poker.engine.evaluation.americana",
    "telesina": "poker.engine.evaluation.telesina",
    "telesina-ranks-then-suits": "poker.engine.evaluation.telesina",
    "draw32": "poker.engine.evaluation.draw32",
}

RANKING_NAMES: Final = tuple(_MODULES)
"""Every ranking :func:`rank_hand` knows."""

_LOADED: dict[str, Ranking] = {}


def get_ranking(name: str) -> Ranking:
    """The :class:`Ranking` called ``name``; ValueError for an unknown name."""
    ranking = _LOADED.get(name)
    if ranking is None:
        module_name = _MODULES.get(name)
        if module_name is None:
            known = ", ".join(RANKING_NAMES)
            raise ValueError(f"{name!r} is not a hand ranking; the rankings are {known}.")
        module = importlib.import_module(module_name)
        ranking = module.RANKINGS[name]
        _LOADED[name] = ranking
    return ranking


def load_all_rankings() -> tuple[Ranking, ...]:
    """Load every ranking now (each builds its lookup tables when first loaded, some in a few
    hundred milliseconds). A server calls this before it serves, so that the first showdown of
    a ranking does not stall every other table while the tables are built.

    >>> [ranking.name for ranking in load_all_rankings()] == list(RANKING_NAMES)
    True
    """
    return tuple(get_ranking(name) for name in RANKING_NAMES)


def rank_hand(ranking: str, hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue | None:
    """The value of the best hand ``hole`` and ``board`` make under ``ranking``.

    Returns ``None`` only for a low ranking when no five-card selection qualifies. Wrong card
    counts, repeated cards or cards outside the game's deck raise ValueError with a sentence.
    """
    rules = get_ranking(ranking)
    rules.verify_cards(hole, board)
    strength = rules.evaluate(hole, board)
    return None if strength is None else HandValue(ranking, strength)
