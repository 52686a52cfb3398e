"""The engine's speed tricks, in one place: what ``bench hand`` shows is worth its cost.

Everything else in the hand changes a state by named fields (:meth:`HandState.changed`, checked
by mypy); the functions here build the few values made on (nearly) every event faster than that.
"""

from __future__ import annotations

from poker.engine.hand.state import HandState


def paid_in(
    state: HandState, index: int, amount: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Stacks, bets and contributions after the player puts ``amount`` more into his bet."""
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return tuple(stacks), tuple(bets), tuple(contributions)
