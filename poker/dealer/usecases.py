"""The table's use cases, each as a :class:`~poker.dealer.pipeline.UseCase` value: what the
command needs (the builder of the engine command from the table as it is now and the clock,
the digest of its payload, the wallet hold it brings), nothing of how it runs
(:mod:`poker.dealer.pipeline` runs them all the same way).

The digest names the command's payload, so that the same command id with another payload is
refused (:func:`~poker.tablelog.command_ids.payload_digest`); the dealer's own timed steps have
none: their ids name the step and the table version it was decided on, so two dealers deciding
the same step append it once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from poker.dealer.clock import Wake
from poker.dealer.errors import NoSeatAtTable, StaleHand
from poker.dealer.pipeline import INTERNAL_PREFIX, Hold, UseCase
from poker.engine.cards import Card, format_cards
from poker.engine.fairness import SERVER_SEED_BYTES
from poker.engine.games import get_game
from poker.engine.table import (
    Act,
    Action,
    AgreeSplit,
    CloseTable,
    Command,
    CommitSeed,
    CreateTable,
    Draw,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TableConfig,
    TableState,
    TimeOut,
    TopUp,
)
from poker.engine.table.config import config_to_wire
from poker.tablelog import command_ids

_random = secrets.SystemRandom()

# --- tables -------------------------------------------------------------------------------------


def create_table(table_id: str, command_id: str, config: TableConfig) -> UseCase:
    """Open table ``table_id`` with ``config``."""
    wire = config_to_wire(config).SerializeToString(deterministic=True)
    return UseCase(
        table_id,
        command_id,
        lambda state, now: CreateTable(config, now, server_seed=new_server_seed()),
        command_ids.payload_digest("create_table", table_id, wire),
        creating=True,
    )


def close_table(table_id: str, command_id: str, reason: str) -> UseCase:
    """Void any hand in progress, cash everyone out, close (RULES.md §6.6, A37)."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: CloseTable(now, reason),
        command_ids.payload_digest("close_table", table_id, reason),
    )


# --- seats --------------------------------------------------------------------------------------


def sit_down(
    table_id: str, command_id: str, player_id: str, seat: int, amount: int, *, post_big_blind: bool
) -> UseCase:
    """Seat ``player_id`` with a buy-in the wallet holds first (hold id = the command id)."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: SitDown(seat, player_id, amount, command_id, now, post_big_blind),
        command_ids.sit_down_digest(table_id, player_id, seat, amount, post_big_blind),
        Hold(player_id, amount),
    )


def top_up(table_id: str, command_id: str, player_id: str, seat: int, amount: int) -> UseCase:
    """Add chips, held by the wallet first, to the player's stack between hands."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: TopUp(seat, player_id, amount, command_id, now),
        command_ids.top_up_digest(table_id, player_id, seat, amount),
        Hold(player_id, amount),
    )


def stand_up(table_id: str, command_id: str, player_id: str, seat: int) -> UseCase:
    """Leave the table now, or when the hand he is dealt into ends."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: StandUp(seat, player_id, now),
        command_ids.payload_digest("stand_up", table_id, player_id, seat),
    )


def sit_out(table_id: str, command_id: str, player_id: str, seat: int) -> UseCase:
    """Stop being dealt in; the seat is kept."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: SitOut(seat, player_id, now),
        command_ids.payload_digest("sit_out", table_id, player_id, seat),
    )


def sit_in(table_id: str, command_id: str, player_id: str, seat: int, post_blinds: bool) -> UseCase:
    """Be dealt in again."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: SitIn(seat, player_id, now, post_blinds),
        command_ids.payload_digest("sit_in", table_id, player_id, seat, post_blinds),
    )


def commit_seed(table_id: str, command_id: str, player_id: str, seat: int, seed: bytes) -> UseCase:
    """The player's seed for the next hand he is dealt into (provably fair decks)."""
    return UseCase(
        table_id,
        command_id,
        lambda state, now: CommitSeed(seat, player_id, seed, now),
        command_ids.payload_digest("commit_seed", table_id, player_id, seat, seed.hex()),
    )


# --- the hand -----------------------------------------------------------------------------------


def act(
    table_id: str, command_id: str, player_id: str, *, hand_id: str, action: Action, amount: int
) -> UseCase:
    """``player_id`` acts in hand ``hand_id`` (which must be the one in progress)."""

    def build(state: TableState | None, now: int) -> Command:
        return Act(_seat_in_hand(state, player_id, hand_id), player_id, action, amount, now)

    digest = command_ids.payload_digest("act", table_id, player_id, hand_id, action.value, amount)
    return UseCase(table_id, command_id, build, digest)


def draw(
    table_id: str, command_id: str, player_id: str, hand_id: str, discards: tuple[Card, ...]
) -> UseCase:
    """Draw games: ``player_id`` throws away ``discards`` (none: he stands pat). The command
    carries a fresh shuffle of the deck, used only if the stub must be rebuilt from the
    discards (RULES.md §7.3): the engine draws no random numbers of its own. A hand dealt
    from a committed deck derives its reshuffle from its seeds instead (no shuffle sent)."""

    def build(state: TableState | None, now: int) -> Command:
        seat = _seat_in_hand(state, player_id, hand_id)
        assert state is not None and state.hand is not None
        committed = bool(state.hand.setup.server_seed)
        return Draw(seat, player_id, discards, now, () if committed else shuffled_deck(state))

    # The cards thrown away as a set: their order does not change the command.
    thrown = format_cards(sorted(discards, key=str))
    digest = command_ids.payload_digest("draw", table_id, player_id, hand_id, thrown)
    return UseCase(table_id, command_id, build, digest)


def agree_split(
    table_id: str, command_id: str, player_id: str, hand_id: str, agree: bool
) -> UseCase:
    """32-Card Draw: ``player_id`` answers the split offer."""

    def build(state: TableState | None, now: int) -> Command:
        return AgreeSplit(_seat_in_hand(state, player_id, hand_id), player_id, agree, now)

    digest = command_ids.payload_digest("agree_split", table_id, player_id, hand_id, agree)
    return UseCase(table_id, command_id, build, digest)


# --- timed steps --------------------------------------------------------------------------------


def timed_step(
    table_id: str,
    wake: Wake,
    *,
    is_present: Callable[[str, str], bool],
    deals_on: Callable[[str], bool],
) -> UseCase:
    """A deadline or the end of a pause: the time-out (``is_present(table_id, player)``: the
    disconnection protection's trigger) or the next hand (unless ``deals_on(table_id)`` says
    the table is being handed off). Decided on the table version the timer was armed at: a
    table that moved on since has re-armed it (nothing to do)."""

    def build(state: TableState | None, now: int) -> Command | None:
        if state is None or state.version != wake.version:
            return None  # something happened since: that command re-armed the timer
        if wake.kind == "timeout":
            seat = state.seat(wake.seat)
            player = seat.player_id if seat is not None else ""
            return TimeOut(wake.seat, now, disconnected=not is_present(table_id, player))
        if not deals_on(table_id):
            return None  # draining: the next hand is the successor's to deal
        hand_id = f"{table_id}.{state.hands_started + 1}"
        # Provably fair decks: the hand is dealt from the seed committed before it (a fresh
        # one only for a table that has none), and commits to a fresh one for the next hand;
        # the engine derives the deck from it and the players' seeds.
        return StartNextHand(
            hand_id, (), now, server_seed=new_server_seed(), next_server_seed=new_server_seed()
        )

    return UseCase(table_id, f"{INTERNAL_PREFIX}{wake.kind}-v{wake.version}", build)


# --- helpers ------------------------------------------------------------------------------------


def _seat_in_hand(state: TableState | None, player_id: str, hand_id: str) -> int:
    """The seat of ``player_id``, who means hand ``hand_id``: it must be the hand in progress."""
    assert state is not None
    seat = state.seat_of(player_id)
    if seat is None:
        raise NoSeatAtTable("You have no seat at this table.")
    if state.hand is None or state.hand.setup.hand_id != hand_id:
        raise StaleHand(f"Hand {hand_id} is not the hand in progress.")
    return seat


def new_server_seed() -> bytes:
    """A fresh server seed for one hand, from the operating system's randomness."""
    return secrets.token_bytes(SERVER_SEED_BYTES)


def shuffled_deck(state: TableState) -> tuple[Card, ...]:
    """The table game's deck, shuffled by the operating system's randomness."""
    deck = get_game(state.config.game).deck
    return tuple(_random.sample(deck, len(deck)))


__all__ = [
    "act",
    "agree_split",
    "close_table",
    "commit_seed",
    "create_table",
    "draw",
    "new_server_seed",
    "shuffled_deck",
    "sit_down",
    "sit_in",
    "sit_out",
    "stand_up",
    "timed_step",
    "top_up",
]
