"""Choices drawn by Hypothesis one at a time, so that a failing property test shrinks.

A property test that draws only a seed and then plays with ``random.Random(seed)`` cannot
shrink: Hypothesis sees one integer, and a smaller seed is just another random game. Here every
decision (how many players, which stacks, the deck's order, each action among the legal ones the
engine offers at that point) is its own Hypothesis draw, made through :class:`Choices` from
a composite strategy's ``draw`` (or ``st.data()``). Each draw shrinks towards its simplest value:
the first option, the lowest number, ``False`` for a rare event, the deck in its printed order,
the empty selection, so a failure reduces to a few players and a few actions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Chooser(Protocol):
    """What a random play needs to decide: one of some options, or whether a rare event
    happens. :class:`Choices` (Hypothesis) and :class:`RandomChooser` (a seeded ``Random``)
    both provide it, so helpers shared with seeded unit tests take either."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        ...

    def chance(self, probability: float) -> bool:
        """``True`` about ``probability`` of the time."""
        ...


@lru_cache(maxsize=4096)
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    # Strategies are built once: building one costs more than drawing from it.
    return st.integers(low, high)


@lru_cache(maxsize=4096)
def _permutations(items: tuple[Any, ...]) -> st.SearchStrategy[list[Any]]:
    return st.permutations(items)


@st.composite
def _part(draw: st.DrawFn, make: Callable[[Choices], T]) -> T:
    return make(Choices(draw))


class Choices:
    """Every decision of one example, drawn by Hypothesis (see the module's docstring).

    Give it a composite strategy's ``draw`` (a quarter of the cost of ``st.data()``'s, which
    keeps a printable record of every draw) or ``data.draw``.
    """

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def value(self, strategy: st.SearchStrategy[T]) -> T:
        """A value of ``strategy`` (build it once: building a strategy costs more than a draw).
        A list strategy shrinks best: Hypothesis deletes its elements one by one."""
        return self._draw(strategy)

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``, by an index into them; shrinks towards the first."""
        if len(options) == 1:
            return options[0]
        return options[self._draw(_integers(0, len(options) - 1))]

    def number(self, low: int, high: int) -> int:
        """An integer from ``low`` to ``high`` inclusive; shrinks towards ``low``."""
        return low if low == high else self._draw(_integers(low, high))

    def chance(self, probability: float) -> bool:
        """``True`` in about ``probability`` of the draws; shrinks towards ``False``, so a rare
        event (a time-out, a void) stays in a shrunk example only when the failure needs it."""
        return self._draw(_integers(0, 99)) >= 100 - round(probability * 100)

    def part(self, make: Callable[[Choices], T]) -> T:
        """``make``'s result, its draws grouped as one part of the example, which the shrinker
        deletes (or simplifies) as a unit: one step of a sequence, say."""
        return self._draw(_part(make))

    def repeat(self, most: int, more: float, step: Callable[[Choices], object]) -> int:
        """Call ``step`` up to ``most`` times, each call a :meth:`part` opened by a drawn "one
        more" (``True`` about ``more`` of the time; shrinks towards stopping), as
        ``st.lists`` draws its elements: the shrinker deletes whole steps from the middle and
        ends the sequence early. Returns how many steps were made."""

        def one_more(choices: Choices) -> bool:
            if not choices.chance(more):
                return False
            step(choices)
            return True

        for made in range(most):
            if not self.part(one_more):
                return made
        return most

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        """One of ``options``, each ``(option, weight)`` drawn in proportion to its weight
        (integer weights); shrinks towards the first option, so put the simplest first."""
        pick = self.number(0, sum(weight for _, weight in options) - 1)
        for option, weight in options:
            if pick < weight:
                return option
            pick -= weight
        raise AssertionError("unreachable: pick is below the total weight")

    def order(self, items: Sequence[T]) -> tuple[T, ...]:
        """``items`` in a drawn order (a shuffled deck); shrinks towards the given order."""
        return tuple(self._draw(_permutations(tuple(items))))

    def subset(self, items: Sequence[T], low: int, high: int) -> tuple[T, ...]:
        """From ``low`` to ``high`` distinct items of ``items``, in drawn order; shrinks
        towards the fewest, earliest ones."""
        left = list(items)
        return tuple(left.pop(self.number(0, len(left) - 1)) for _ in range(self.number(low, high)))


class RandomChooser:
    """A :class:`Chooser` over a seeded ``random.Random`` (for seeded, non-shrinking tests)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``, as ``rng.choice``."""
        return self._rng.choice(options)

    def chance(self, probability: float) -> bool:
        """``rng.random() < probability``, the seeded tests' historical draw."""
        return self._rng.random() < probability
