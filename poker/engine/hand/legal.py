"""What the player to act may do: ``legal_actions(state)``.

Built from :func:`poker.engine.hand.limits.betting_limits`, the same limits ``decide`` verifies
against, so everything listed here is accepted and nothing else is.
"""

from __future__ import annotations

from typing import NamedTuple

from poker.engine.hand.commands import Action
from poker.engine.hand.core import BRING_IN, CALL
from poker.engine.hand.limits import betting_limits
from poker.engine.hand.state import DRAWING, NOBODY, HandState


class LegalAction(NamedTuple):
    """One action open to the player to act, with its amounts (see :class:`Action`).

    FOLD and CHECK: 0 and 0. CALL and BRING_IN: the chips it puts in (min = max). BET, RAISE and
    COMPLETE: the smallest and largest total the player's bet in this round may become (fixed
    limit: one of the two; they differ only on a 7 Card Stud open pair, RULES.md §4.6).
    """

    action: Action
    min_amount: int
    max_amount: int


def _legal(action: Action, min_amount: int, max_amount: int) -> LegalAction:
    """A LegalAction, built on every turn: tuple.__new__ skips NamedTuple's generated __new__
    (keyword handling), a third of the cost of ``legal_actions``'s values."""
    return _new_legal(LegalAction, (action, min_amount, max_amount))


_new_legal = tuple.__new__
_FOLD = LegalAction(Action.FOLD, 0, 0)
_CHECK = LegalAction(Action.CHECK, 0, 0)


def legal_actions(state: HandState | None) -> tuple[LegalAction, ...]:
    """The actions open to the player to act (``state.seat_to_act``); empty when nobody is.

    Folding is always allowed on one's turn, even when checking is free; not before the
    bring-in, which opens a stud game's first round: then BRING_IN and the wager instead of it.
    Draw games: nothing while the player draws (:func:`poker.engine.hand.draws.draw_option` says
    what he may throw away); asked to split the pot (:func:`poker.engine.hand.draws.split_offer`), a
    player with chips may also act, which refuses the offer.
    """
    if state is None or state.to_act == NOBODY:
        return ()
    if state.phase and (state.phase == DRAWING or not state.stacks[state.to_act]):
        # A draw (draw_option), or the split offer to an all-in player (split_offer). A player
        # with chips asked to split may bet instead, which refuses the offer (decision A17).
        return ()
    _, owed, call, wager, min_to, max_to, bring_in = betting_limits(state)
    if bring_in:
        forced = _legal(BRING_IN, bring_in, bring_in)
        if wager is None:
            return (forced,)
        return (forced, _legal(wager, min_to, max_to))
    passive = _legal(CALL, call, call) if owed else _CHECK
    if wager is None:
        return (_FOLD, passive)
    return (_FOLD, passive, _legal(wager, min_to, max_to))
