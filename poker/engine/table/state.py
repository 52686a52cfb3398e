"""The state of a table: an immutable value, replaced (never mutated) by every event.

Seats are numbered 1 .. ``config.seat_count``; ``seats[n - 1]`` is seat ``n``. A seat's
``stack`` is the player's stack between hands; while a hand runs, the live stacks of the players
dealt in are the hand's (:func:`live_stack`), and the seat stacks take the hand's final stacks
when it ends or is voided.
"""

from __future__ import annotations

from typing import NamedTuple

from poker.engine.hand.state import HandState
from poker.engine.table.config import TableConfig


class Seat(NamedTuple):
    """One seated player.

    ``new``: not dealt in since sitting down (owes a big blind to enter, RULES.md §6.2);
    ``missed_small`` / ``missed_big``: blinds that passed him while he sat out (§6.3);
    ``post_blinds``: his choice to post what he owes at once rather than wait for the big blind;
    ``leaving``: he stood up during a hand he is dealt into and is cashed out when it ends;
    ``hands_sat_out``: hands dealt at the table in a row while he sat out (reset when he sits
    in), for ``TableConfig.sit_out_max_hands``;
    ``seed``: his seed for the next hand he is dealt into (provably fair decks, b"": none).
    """

    player_id: str
    stack: int
    sitting_out: bool = False
    new: bool = True
    missed_small: bool = False
    missed_big: bool = False
    post_blinds: bool = False
    leaving: bool = False
    hands_sat_out: int = 0
    seed: bytes = b""

    @property
    def owes(self) -> bool:
        """Whether he must post (or wait for the big blind) before he is dealt in again."""
        return self.new or self.missed_small or self.missed_big


class TableState(NamedTuple):
    """One moment of a table. Compare states with ``==`` (replay equals the live path).

    ``button``, ``small_blind``, ``big_blind``: seats of the last hand's positions (0 = none
    yet). ``next_seed``: the secret server seed committed for the next hand (provably fair
    decks; b"": none). ``protection_uses``: (player id, unix ms) of every artificial all-in of
    the last 24 hours. ``departures``: (player id, stack, unix ms) of recent cash-outs, for the
    re-join rule.
    """

    config: TableConfig
    seats: tuple[Seat | None, ...]
    button: int = 0
    small_blind: int = 0
    big_blind: int = 0
    hand: HandState | None = None
    hands_started: int = 0
    next_hand_at: int = 0
    protection_uses: tuple[tuple[str, int], ...] = ()
    departures: tuple[tuple[str, int, int], ...] = ()
    closed: bool = False
    version: int = 0
    next_seed: bytes = b""

    @property
    def hand_running(self) -> bool:
        """Whether a hand is being played now."""
        return self.hand is not None and not self.hand.ended

    def seat(self, number: int) -> Seat | None:
        """The player in seat ``number`` (None when empty or not a seat)."""
        if type(number) is not int or not 1 <= number <= len(self.seats):
            return None
        return self.seats[number - 1]

    def occupied(self) -> tuple[int, ...]:
        """The numbers of the occupied seats, ascending."""
        return tuple(number for number, seat in enumerate(self.seats, 1) if seat is not None)

    def seat_of(self, player_id: str) -> int | None:
        """The seat number ``player_id`` holds, or None."""
        for number, seat in enumerate(self.seats, 1):
            if seat is not None and seat.player_id == player_id:
                return number
        return None

    def in_hand(self, number: int) -> bool:
        """Whether seat ``number`` is dealt into the running hand."""
        return self.hand_running and number in self.hand.setup.seats  # type: ignore[union-attr]

    def with_seat(self, number: int, seat: Seat | None) -> TableState:
        """This state with seat ``number`` replaced."""
        seats = list(self.seats)
        seats[number - 1] = seat
        return self._replace(seats=tuple(seats))


def live_stack(state: TableState, number: int) -> int:
    """The chips in front of the player in seat ``number`` now (his hand stack while he is
    dealt into the running hand, chips set aside by an artificial all-in included)."""
    seat = state.seat(number)
    if seat is None:
        return 0
    hand = state.hand
    if hand is not None and not hand.ended and number in hand.setup.seats:
        index = hand.setup.index_of(number)
        return hand.stacks[index] + (hand.set_aside[index] if hand.set_aside else 0)
    return seat.stack


def chips_on_table(state: TableState) -> int:
    """Every chip at the table: the stacks and whatever the running hand holds in its pots."""
    total = sum(live_stack(state, number) for number in state.occupied())
    hand = state.hand
    if hand is not None and not hand.ended:
        total += hand.pot
    return total
