"""Disconnection protection: the artificial all-in (RULES.md §6.5, decision A27).

The table decides whether the protection is open to a timed-out player (disconnected, fixed or
spread limit, real money, allowance left) and says so in :class:`TimeOut.protected
<poker.engine.hand.commands.TimeOut>`. The hand decides the rest: facing a bet with live chips in
the pot, he stays in the hand as if all-in for what he has put in so far; otherwise he folds. No
chip moves into the pot: his chips behind are *set aside* (out of play, so every rule that looks
at "chips behind" treats him as all-in, and the pots he can win stop at his contribution) and
return to him just before HandEnded. He receives his remaining cards, and in the draw games
stands pat in every draw without being asked (rule 4; see :mod:`poker.engine.hand.draws`).
"""

from __future__ import annotations

from poker.engine.hand.commands import TimeOut
from poker.engine.hand.events import Emitter
from poker.engine.hand.posts import dead_money, forced_chips
from poker.engine.hand.state import NOBODY, HandState
from poker.v1 import events_pb2 as pb


def live_chips(state: HandState, index: int, count_forced_bets: bool) -> int:
    """The player's live chips in the pot; dead blinds never count, forced bets by the switch."""
    paid = state.contributions[index]
    dead = dead_money(state.setup)
    if dead:
        paid -= dead[index]
    if not count_forced_bets:
        paid -= forced_chips(state.setup).live[index]
    return max(paid, 0)


def artificial_all_in(state: HandState, index: int, command: TimeOut) -> pb.ArtificialAllIn | None:
    """The event putting the timed-out player artificially all-in, or None when he must fold
    (no live chips in the pot). Only for a player who owes chips and is protected."""
    if not live_chips(state, index, command.count_forced_bets):
        return None
    dead = dead_money(state.setup)
    return pb.ArtificialAllIn(
        seat=state.setup.seats[index],
        contributed=state.contributions[index] - (dead[index] if dead else 0),
        set_aside=state.stacks[index],
        at=command.now,
    )


def return_set_aside(recorder: Emitter) -> None:
    """Give every artificially all-in player his chips behind back (before HandEnded)."""
    state = recorder.state
    for index, amount in enumerate(state.set_aside):
        if amount:
            recorder.emit(pb.StackReturned(seat=state.setup.seats[index], amount=amount))


def artificial_all_in_applied(state: HandState, event: pb.ArtificialAllIn) -> HandState:
    """Apply ArtificialAllIn: the stack goes aside, the player no longer acts."""
    index = state.setup.seats.index(event.seat)
    set_aside = list(state.set_aside or (0,) * len(state.stacks))
    set_aside[index] += event.set_aside
    stacks = list(state.stacks)
    stacks[index] -= event.set_aside
    return state.changed(stacks=tuple(stacks), set_aside=tuple(set_aside), to_act=NOBODY)


def stack_returned(state: HandState, event: pb.StackReturned) -> HandState:
    """Apply StackReturned: the set-aside chips are in front of the player again."""
    index = state.setup.seats.index(event.seat)
    set_aside = list(state.set_aside)
    set_aside[index] -= event.amount
    stacks = list(state.stacks)
    stacks[index] += event.amount
    return state.changed(stacks=tuple(stacks), set_aside=tuple(set_aside) if any(set_aside) else ())
