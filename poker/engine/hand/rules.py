"""The checks every command on a running hand shares: the hand is running, the seat is dealt in,
it is the player's turn; and a time-out's own. Each raises a
:class:`~poker.engine.hand.errors.HandRuleError` with a sentence and changes nothing. The checks
of each rule area live with it (``setup.verify_start``, ``betting.verify_act``,
``draws.verify_draw``, ...).
"""

from __future__ import annotations

from poker.engine.hand.errors import (
    HandNotRunning,
    NotYourTurn,
    TimeNotUp,
    UnknownSeat,
)
from poker.engine.hand.state import (
    NOBODY,
    HandState,
)


def verify_hand_running(state: HandState | None) -> HandState:
    """The hand must have started and not ended."""
    if state is None:
        raise HandNotRunning("No hand is being played at this table.")
    if state.ended:
        raise HandNotRunning("This hand is over; wait for the next one.")
    return state


def verify_seat_known(state: HandState, seat: int) -> int:
    """The seat must be dealt in; returns its index."""
    if type(seat) is not int or seat not in state.setup.seats:
        raise UnknownSeat(f"Seat {seat} is not playing this hand.")
    return state.setup.seats.index(seat)


def verify_turn(state: HandState, index: int) -> None:
    """It must be this player's turn."""
    if state.to_act != index:
        seat = state.setup.seats[index]
        if state.to_act == NOBODY:
            raise NotYourTurn(f"Seat {seat} cannot act now: it is nobody's turn.")
        raise NotYourTurn(
            f"It is not seat {seat}'s turn; seat {state.setup.seats[state.to_act]} is to act."
        )


def verify_time_out(state: HandState | None, seat: int, now: int) -> HandState:
    """A time-out needs the player's turn and his deadline passed."""
    running = verify_hand_running(state)
    index = verify_seat_known(running, seat)
    verify_turn(running, index)
    if now < running.deadline:
        raise TimeNotUp(f"Seat {seat} still has time to act.")
    return running
