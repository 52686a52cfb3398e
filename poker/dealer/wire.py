"""Every conversion of a Dealer request into the application's values.

Each field checked for its shape (ids, seats, amounts, the action, the cards) and turned into
the values :class:`~poker.dealer.tables.TableService` takes; a field of the wrong shape is
:class:`~poker.servicekit.errors.InvalidArgument` with a sentence naming it. (Every field's
length and range bound, :mod:`poker.dealer.bounds`, is checked by the servicer first.) The way
back, replies out, is :mod:`poker.dealer.replies`.

>>> from poker.engine.table import Action
>>> action_of(dpb.ACTION_KIND_RAISE) is Action.RAISE
True
>>> seat_address(dpb.StandUpRequest(table_id="t-1", command_id="c-1", seat=3))
SeatAddress(table_id='t-1', command_id='c-1', seat=3)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from poker.dealer.bounds import MAX_CHIPS, rake_problem
from poker.dealer.pages import ListFilter, ListRequest
from poker.dealer.pipeline import INTERNAL_PREFIX
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import Card, parse_cards
from poker.engine.fairness import seed_problem
from poker.engine.games import GAMES, ForcedBets
from poker.engine.table import Action, TableConfig, make_config
from poker.engine.table.config import config_from_wire as table_config_from_wire
from poker.engine.table.config import config_to_wire
from poker.servicekit.errors import InvalidArgument
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_HAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,140}")

#: The wire's action kinds -> the engine's actions (the one list: replies map them back).
ACTIONS: Final[Mapping[int, Action]] = {
    dpb.ACTION_KIND_FOLD: Action.FOLD,
    dpb.ACTION_KIND_CHECK: Action.CHECK,
    dpb.ACTION_KIND_CALL: Action.CALL,
    dpb.ACTION_KIND_BET: Action.BET,
    dpb.ACTION_KIND_RAISE: Action.RAISE,
    dpb.ACTION_KIND_BRING_IN: Action.BRING_IN,
    dpb.ACTION_KIND_COMPLETE: Action.COMPLETE,
}

# --- requests in ------------------------------------------------------------------------------


def table_id_of(value: str, field: str = "table_id") -> str:
    """A table id: 1-64 letters, digits, '-' or '_' (one NATS subject token), read from the
    request's ``field``."""
    if not _TABLE_ID.fullmatch(value):
        raise InvalidArgument(f"{field} must be 1-64 letters, digits, '-' or '_'.", field=field)
    return value


def command_id_of(value: str) -> str:
    """A client's command id: 1-64 letters, digits, '-', '_', '.' or ':'."""
    if not _COMMAND_ID.fullmatch(value) or value.startswith(INTERNAL_PREFIX):
        raise InvalidArgument(
            "command_id must be 1-64 letters, digits, '-', '_', '.' or ':'.", field="command_id"
        )
    return value


def hand_id_of(value: str) -> str:
    """A hand id as the dealer names them (``<table id>.<number>``), or refused."""
    if not _HAND_ID.fullmatch(value):
        raise InvalidArgument("hand_id is required.", field="hand_id")
    return value


def seat_of(value: int) -> int:
    """A seat number: 1 and up (the table refuses one past its last seat)."""
    if value < 1:
        raise InvalidArgument("seat must be a seat number (1 and up).", field="seat")
    return value


def chips_of(name: str, value: int, *, positive: bool) -> int:
    """An amount of chips in field ``name``: whole, not negative (``positive``: above zero)."""
    if value < 0 or (positive and value == 0) or value > MAX_CHIPS:
        raise InvalidArgument(
            f"{name} must be a {'positive' if positive else 'non-negative'} whole number of chips.",
            field=name,
        )
    return value


def action_of(kind: int) -> Action:
    """The engine's action for the wire's ``Action`` enum value."""
    action = ACTIONS.get(kind)
    if action is None:
        raise InvalidArgument(
            "action must be fold, check, call, bet, raise, bring-in or complete.", field="action"
        )
    return action


def seed_of(text: str) -> bytes:
    """A player's seed for a committed deck: 1 to 64 bytes written in hex."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        seed = b""
    problem = seed_problem(seed) if seed else "seed_hex must be 1 to 64 bytes in hex digits."
    if problem is not None:
        raise InvalidArgument(problem, field="seed_hex")
    return seed


def discards_of(text: str) -> tuple[Card, ...]:
    """The cards a Draw throws away (none: stand pat)."""
    try:
        return parse_cards(text)
    except ValueError as error:
        raise InvalidArgument(f"discards: {error}", field="discards") from None


@dataclass(frozen=True, slots=True)
class SeatAddress:
    """Which seat of which table a seat command is about, under which command id."""

    table_id: str
    command_id: str
    seat: int


@dataclass(frozen=True, slots=True)
class HandAddress:
    """Which hand of which table a command about the hand in progress is about."""

    table_id: str
    command_id: str
    hand_id: str


def seat_address(
    request: dpb.StandUpRequest | dpb.SitOutRequest | dpb.SitInRequest | dpb.CommitSeedRequest,
) -> SeatAddress:
    """The table, command id and seat of a seat command (StandUp, SitOut, SitIn, CommitSeed)."""
    return SeatAddress(
        table_id_of(request.table_id), command_id_of(request.command_id), seat_of(request.seat)
    )


def hand_address(
    request: dpb.ActRequest | dpb.DrawRequest | dpb.AgreeSplitRequest,
) -> HandAddress:
    """The table, command id and hand of a command about the hand in progress."""
    command_id = command_id_of(request.command_id)
    table_id = table_id_of(request.table_id)
    return HandAddress(table_id, command_id, hand_id_of(request.hand_id))


def new_table_id(request: dpb.CreateTableRequest, command_id: str) -> str:
    """The table a CreateTable names, or one derived from its command id, so that a retried
    CreateTable names the same table (and lands once)."""
    if request.table_id:
        return table_id_of(request.table_id)
    return f"t-{hashlib.sha256(command_id.encode()).hexdigest()[:10]}"


def table_of_hand(request: dpb.GetHandHistoryRequest) -> str:
    """The table of the hand a GetHandHistory asks for: named, or read off the hand id."""
    if request.table_id:
        return table_id_of(request.table_id)
    # The dealer names hands "<table id>.<number>".
    table_id, dot, number = request.hand_id.rpartition(".")
    if not dot or not (number.isascii() and number.isdigit()):
        raise InvalidArgument(
            "hand_id must be <table id>.<hand number> (e.g. t-1.3), or give table_id.",
            field="hand_id",
        )
    return table_id_of(table_id, field="hand_id")


def config_of(request: dpb.CreateTableRequest) -> TableConfig:
    """The table configuration a CreateTable request asks for: the room's defaults for the game,
    structure and stakes, then the request's overrides (its own fields, then ``settings``)."""
    if request.game not in GAMES:
        raise InvalidArgument(f"game must be one of {', '.join(GAMES)}.", field="game")
    try:
        structure = Structure(request.structure)
    except ValueError:
        raise InvalidArgument("structure must be a betting structure.", field="structure") from None
    wire = request.stakes  # every number within its bound (DEALER_BOUNDS, checked first)
    if not request.HasField("stakes"):
        raise InvalidArgument("stakes are required.", field="stakes")
    if GAMES[request.game].forced_bets is ForcedBets.ANTE_BRING_IN:
        if wire.ante <= 0 and wire.bring_in <= 0:
            raise InvalidArgument(
                f"{request.game} needs stakes with an ante or a bring-in.", field="stakes"
            )
    elif wire.big_blind <= 0:
        raise InvalidArgument(
            "stakes with a positive big blind are required.", field="stakes.big_blind"
        )
    stakes = Stakes(
        wire.small_blind,
        wire.big_blind,
        wire.ante,
        wire.small_bet,
        wire.big_bet,
        tuple(wire.spread_round_max),
        wire.bring_in,
    )
    config = make_config(request.game, structure, stakes, real_money=request.real_money)
    overrides: dict[str, Any] = {}
    if request.seat_count:
        overrides["seat_count"] = request.seat_count
    if request.min_buy_in:
        overrides["min_buy_in"] = request.min_buy_in
    if request.max_buy_in:
        overrides["max_buy_in"] = request.max_buy_in
    if request.pause_between_hands_ms:
        overrides["pause_between_hands_ms"] = request.pause_between_hands_ms
    if request.action_timer_ms:
        overrides["rules"] = replace(config.rules, action_timer_ms=request.action_timer_ms)
    config = replace(config, **overrides) if overrides else config
    return with_settings(config, request.settings) if request.HasField("settings") else config


#: TableConfig fields a CreateTable request names in its own fields, not in ``settings``.
_NOT_SETTINGS: Final = ("game", "structure", "real_money")


def with_settings(config: TableConfig, settings: pb.TableConfig) -> TableConfig:
    """``config`` with the table switches ``settings`` sets (RULES.md §11): every field set to a
    value other than its zero replaces the default; ``rules`` field by field, its ``rake`` whole.
    The game, structure, stakes and money belong to the request itself."""
    named = [name for name in _NOT_SETTINGS if getattr(settings, name)]
    named += ["stakes"] if settings.HasField("stakes") else []
    if named:
        raise InvalidArgument(
            f"settings may not set {', '.join(named)}: use the request's own fields.",
            field=f"settings.{named[0]}",
        )
    wire = config_to_wire(config)
    rake = settings.rules.rake if settings.rules.HasField("rake") else None
    problem = rake_problem(rake) if rake is not None else None
    if problem is not None:
        # The sentence starts with the field it is about ("settings.rules.rake.per ...").
        raise InvalidArgument(problem, field=problem.split(" ", 1)[0])
    wire.MergeFrom(settings)
    if rake is not None:
        wire.rules.rake.CopyFrom(rake)  # a schedule replaces the room's; caps are not appended
    try:
        return table_config_from_wire(wire)
    except ValueError as error:  # an enum value this build does not know
        raise InvalidArgument(f"settings: {error}", field="settings") from None


def list_request_of(request: dpb.ListTablesRequest) -> ListRequest:
    """ListTables' filters and page (their bounds and enum numbers checked already)."""
    money = request.money
    real_money = {dpb.MONEY_FILTER_REAL: True, dpb.MONEY_FILTER_PLAY: False}.get(money)
    filters = ListFilter(
        game=request.game,
        structure=int(request.structure),
        big_blind=request.big_blind,
        real_money=real_money,
        has_free_seats=request.has_free_seats,
    )
    return ListRequest(filters, request.page_size, request.page_token)


__all__ = [
    "ACTIONS",
    "HandAddress",
    "SeatAddress",
    "action_of",
    "chips_of",
    "command_id_of",
    "config_of",
    "discards_of",
    "hand_address",
    "hand_id_of",
    "new_table_id",
    "seat_address",
    "seat_of",
    "seed_of",
    "table_id_of",
    "table_of_hand",
    "with_settings",
]
