"""What the player to act may do: ``legal_actions(state)``.

Built from :func:`engine.hand.rules.betting_limits`, the same limits ``decide`` verifies against,
so everything listed here is accepted and nothing else is.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.hand.commands import Action
from engine.hand.rules import betting_limits
from engine.hand.state import NOBODY, HandState


class LegalAction(NamedTuple):
    """One action open to the player to act, with its amounts (see :class:`Action`).

    FOLD and CHECK: 0 and 0. CALL: the chips the call puts in (min = max). BET and RAISE: the
    smallest and largest total the player's bet in this round may become.
    """

    action: Action
    min_amount: int
    max_amount: int


_FOLD = LegalAction(Action.FOLD, 0, 0)
_CHECK = LegalAction(Action.CHECK, 0, 0)


def legal_actions(state: HandState | None) -> tuple[LegalAction, ...]:
    """The actions open to the player to act (``state.seat_to_act``); empty when nobody is.

    Folding is always allowed on one's turn, even when checking is free.
    """
    if state is None or state.to_act == NOBODY:
        return ()
    limits = betting_limits(state)
    passive = _CHECK if not limits.owed else LegalAction(Action.CALL, limits.call, limits.call)
    if limits.wager is None:
        return (_FOLD, passive)
    return (_FOLD, passive, LegalAction(limits.wager, limits.min_to, limits.max_to))
