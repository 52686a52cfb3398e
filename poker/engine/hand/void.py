"""Cancelling an unfinished hand (RULES.md §6.6, decision A37).

Every player gets back exactly what he put into the hand (antes, blinds, dead blinds, bets) and
any chips an artificial all-in set aside; no rake. The dealer service voids the running hand when
it recovers a table after a failure. Money inside an unfinished hand never reached the ledger,
so the refunds restore every starting stack.
"""

from __future__ import annotations

from poker.engine.hand.commands import VoidHand
from poker.engine.hand.events import HandEvent
from poker.engine.hand.rules import verify_hand_running
from poker.engine.hand.state import NOBODY, HandState
from poker.v1 import events_pb2 as pb


def void_hand(state: HandState | None, command: VoidHand) -> tuple[HandState, list[HandEvent]]:
    """HandVoided for the running hand and the state after it."""
    running = verify_hand_running(state)
    setup = running.setup
    event = pb.HandVoided(reason=command.reason)
    set_aside = running.set_aside or (0,) * len(running.stacks)
    for index, seat in enumerate(setup.seats):
        paid = running.contributions[index]
        if paid:
            event.refunds.add(seat=seat, amount=paid)
        stack = running.stacks[index] + paid + set_aside[index]
        event.results.add(seat=seat, net=stack - setup.starting_stacks[index], stack=stack)
    return hand_voided(running, event), [event]


def hand_voided(state: HandState, event: pb.HandVoided) -> HandState:
    """Apply HandVoided: the refunds are back in the stacks, the pot is empty, the hand over."""
    count = len(state.stacks)
    zeros = (0,) * count
    return state.changed(
        stacks=tuple(result.stack for result in event.results),
        bets=zeros,
        contributions=zeros,
        set_aside=(),
        to_act=NOBODY,
        ended=True,
    )
