"""Every conversion between the Dealer's protobuf messages and the application's values.

Requests in: each field checked for its shape (ids, seats, amounts, the action, the cards) and
turned into the values :class:`~poker.dealer.tables.TableService` takes; a field of the wrong
shape is :class:`~poker.servicekit.errors.InvalidArgument` with a sentence naming it. (Every field's
length and range bound, :mod:`poker.dealer.bounds`, is checked by the servicer first.)

Replies out: a command's :class:`~poker.dealer.tables.CommandResult`, the table as one viewer
sees it (what he may see is :mod:`poker.dealer.redaction`'s rule), a table's line in the list
and a finished hand in PHH.

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
from typing import Any, Final, TypeVar

from google.rpc import status_pb2

from poker.dealer.bounds import MAX_CHIPS, rake_problem
from poker.dealer.quarantine import Quarantined
from poker.dealer.redaction import sees_hole_cards
from poker.dealer.tables import INTERNAL_PREFIX, CommandResult
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import Card, parse_cards
from poker.engine.fairness import seed_problem
from poker.engine.games import GAMES, ForcedBets
from poker.engine.hand.codec import cards_to_wire
from poker.engine.hand.codec import config_to_wire as hand_config_to_wire
from poker.engine.hand.state import HandState
from poker.engine.table import (
    Action,
    SeatStatus,
    TableConfig,
    TableState,
    draw_option,
    legal_actions,
    make_config,
    seat_views,
    split_offer,
)
from poker.engine.table.config import config_from_wire as table_config_from_wire
from poker.engine.table.config import config_to_wire
from poker.servicekit.errors import InvalidArgument, RuleViolation, Unavailable
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_HAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,140}")

_ACTIONS: Final[Mapping[int, Action]] = {
    dpb.ACTION_KIND_FOLD: Action.FOLD,
    dpb.ACTION_KIND_CHECK: Action.CHECK,
    dpb.ACTION_KIND_CALL: Action.CALL,
    dpb.ACTION_KIND_BET: Action.BET,
    dpb.ACTION_KIND_RAISE: Action.RAISE,
    dpb.ACTION_KIND_BRING_IN: Action.BRING_IN,
    dpb.ACTION_KIND_COMPLETE: Action.COMPLETE,
}
#: The engine's action names -> the wire enum (the way back of :data:`_ACTIONS`).
ACTION_KINDS: Final = {
    "fold": dpb.ACTION_KIND_FOLD,
    "check": dpb.ACTION_KIND_CHECK,
    "call": dpb.ACTION_KIND_CALL,
    "bet": dpb.ACTION_KIND_BET,
    "raise": dpb.ACTION_KIND_RAISE,
    "bring_in": dpb.ACTION_KIND_BRING_IN,
    "complete": dpb.ACTION_KIND_COMPLETE,
}

_SEAT_STATES: Final = {
    SeatStatus.IN_HAND: dpb.SEAT_STATE_IN_HAND,
    SeatStatus.PLAYING: dpb.SEAT_STATE_PLAYING,
    SeatStatus.WAITING: dpb.SEAT_STATE_WAITING,
    SeatStatus.SITTING_OUT: dpb.SEAT_STATE_SITTING_OUT,
    SeatStatus.LEAVING: dpb.SEAT_STATE_LEAVING,
    SeatStatus.BUSTED: dpb.SEAT_STATE_BUSTED,
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
    action = _ACTIONS.get(kind)
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


# --- replies out ------------------------------------------------------------------------------


#: The responses of the commands: one message per RPC, all of the same shape (dealer.proto).
CommandResponse = TypeVar(
    "CommandResponse",
    dpb.CreateTableResponse,
    dpb.CloseTableResponse,
    dpb.SitDownResponse,
    dpb.TopUpResponse,
    dpb.StandUpResponse,
    dpb.SitOutResponse,
    dpb.SitInResponse,
    dpb.ActResponse,
    dpb.DrawResponse,
    dpb.AgreeSplitResponse,
    dpb.CommitSeedResponse,
    dpb.PlayResponse,
)


def command_reply(
    result: CommandResult,
    views: ViewCache,
    viewer: str | None,
    response: type[CommandResponse],
) -> CommandResponse:
    """The ``response`` to a command: what it did, and the table as ``viewer`` now sees it."""
    reply = command_reply_without_table(result, response)
    if result.state is not None:
        reply.table.CopyFrom(views.view(result.table_id, result.state, viewer))
    return reply


def command_reply_without_table(
    result: CommandResult, response: type[CommandResponse]
) -> CommandResponse:
    """The ``response`` to a command whose caller asked for no view: what it did only."""
    return response(
        table_id=result.table_id,
        command_id=result.command_id,
        version=result.version,
        events=result.events,
    )


def refused_reply(command: Any, status: status_pb2.Status) -> dpb.PlayResponse:
    """The response to a Play command that failed (``command`` None: none could be read): the
    status the unary call would end with (its number and details, and the whole
    ``google.rpc.Status`` with its ErrorInfo and BadRequest), and no table."""
    reply = dpb.PlayResponse(code=status.code, message=status.message, status=status)
    if command is not None:
        reply.table_id = command.table_id[:64]
        reply.command_id = command.command_id[:64]
    return reply


def table_summary(
    table_id: str, state: TableState | None, quarantine: Quarantined | None = None
) -> dpb.TableSummary:
    """A table's line in ListTables (a quarantined one's: as last read, marked)."""
    if quarantine is not None:
        summary = dpb.TableSummary(
            table_id=table_id,
            quarantined=True,
            quarantine_reason=f"the record at position {quarantine.position} of its log was"
            f" refused ({quarantine.cause})",
        )
        if state is not None:
            summary.MergeFrom(table_summary(table_id, state))
        return summary
    assert state is not None  # a table that is not quarantined was read
    game, structure, stakes, _ = hand_config_to_wire(state.config.hand)
    return dpb.TableSummary(
        table_id=table_id,
        game=game,
        structure=pb.BettingStructure.ValueType(structure),
        stakes=stakes,
        seat_count=state.config.seat_count,
        players=len(state.occupied()),
        hand_running=state.hand_running,
        closed=state.closed,
    )


def hand_history(
    hand_id: str, table_id: str, events: list[pb.TableEvent]
) -> dpb.GetHandHistoryResponse:
    """A finished hand's events (already redacted for the caller) as its PHH history."""
    return dpb.GetHandHistoryResponse(
        hand_id=hand_id, table_id=table_id, phh=_phh(events), events=events
    )


def _phh(events: list[pb.TableEvent]) -> str:
    try:
        from poker.engine.phh import export_hand
    except ImportError:  # pragma: no cover - the PHH exporter ships with the engine
        raise Unavailable("Hand histories are not available in this build.") from None
    try:
        return export_hand(events)
    except ValueError as error:
        raise RuleViolation(str(error)) from error


# --- the table as one viewer sees it ------------------------------------------------------------


class ViewCache:
    """Table views by table, state and viewer: a view is built once per table version and
    viewer, however many GetTable calls (and command replies) ask for it. Views are shared:
    callers must not modify them."""

    def __init__(self) -> None:
        self._tables: dict[str, tuple[TableState, dict[str | None, dpb.TableView]]] = {}

    def view(self, table_id: str, state: TableState, viewer: str | None) -> dpb.TableView:
        """``table_view(table_id, state, viewer)``, cached."""
        entry = self._tables.get(table_id)
        if entry is None or entry[0] is not state:
            entry = self._tables[table_id] = (state, {})
        views = entry[1]
        view = views.get(viewer)
        if view is None:
            view = views[viewer] = table_view(table_id, state, viewer)
        return view


_CONFIG_WIRES: dict[int, tuple[TableConfig, pb.TableConfig]] = {}
_CONFIG_WIRES_MAX = 4096


def _config_wire(config: TableConfig) -> pb.TableConfig:
    """``config_to_wire(config)``, converted once per config object (a table keeps its config
    object from one state to the next; the entry holds the object, so its id stays its own)."""
    entry = _CONFIG_WIRES.get(id(config))
    if entry is not None and entry[0] is config:
        return entry[1]
    if len(_CONFIG_WIRES) >= _CONFIG_WIRES_MAX:
        _CONFIG_WIRES.clear()
    wire = config_to_wire(config)
    _CONFIG_WIRES[id(config)] = (config, wire)
    return wire


def table_view(table_id: str, state: TableState, viewer: str | None) -> dpb.TableView:
    """The state of the table for ``viewer`` (a player id; None for spectators and operators)."""
    your_seat = state.seat_of(viewer) if viewer is not None else None
    view = dpb.TableView(
        table_id=table_id,
        version=state.version,
        config=_config_wire(state.config),
        closed=state.closed,
        your_seat=your_seat or 0,
        hands_started=state.hands_started,
    )
    if state.next_hand_at:
        view.next_hand_at.FromMilliseconds(state.next_hand_at)
    hand = state.hand
    for seat in seat_views(state):
        entry = view.seats.add(
            seat=seat.seat,
            player_id=seat.player_id,
            stack=seat.stack,
            state=_SEAT_STATES[seat.status],
            owes_small_blind=seat.owes_small_blind,
            owes_big_blind=seat.owes_big_blind,
        )
        if hand is not None and seat.seat in hand.setup.seats:
            _fill_hand_seat(entry, hand, seat.seat, mine=seat.seat == your_seat)
    if hand is not None:
        _fill_hand(view.hand, state, hand)
    return view


def _fill_hand_seat(entry: dpb.SeatView, hand: HandState, seat: int, *, mine: bool) -> None:
    index = hand.setup.index_of(seat)
    entry.up_cards = cards_to_wire(hand.up[index])
    if not hand.ended:
        entry.bet = hand.bets[index]
        entry.folded = hand.folded[index]
    if sees_hole_cards(hand, index, mine=mine):
        entry.cards = cards_to_wire(hand.hole[index])


def _fill_hand(view: dpb.HandView, state: TableState, hand: HandState) -> None:
    view.hand_id = hand.setup.hand_id
    view.button = hand.setup.button_seat  # a dead button sits on a seat not dealt in
    view.street = hand.street
    view.board = cards_to_wire(hand.board)
    view.pot = 0 if hand.ended else hand.pot
    to_act = hand.seat_to_act
    if hand.ended or to_act is None:
        return
    view.seat_to_act = to_act
    view.deadline.FromMilliseconds(hand.deadline)
    for option in legal_actions(state, to_act):
        view.legal_actions.add(
            action=ACTION_KINDS[option.action.value],
            min_amount=option.min_amount,
            max_amount=option.max_amount,
        )
    _fill_draw_turn(view, state, to_act)


def _fill_draw_turn(view: dpb.HandView, state: TableState, to_act: int) -> None:
    """What a draw game asks of the seat to act besides betting: a draw, or the split offer
    (both queries answer None at once in the other games)."""
    draw = draw_option(state, to_act)
    view.turn = pb.TURN_KIND_BET
    if draw is not None:
        view.turn = pb.TURN_KIND_DRAW
        view.draw.max_discard = draw.max_discard
        return
    offer = split_offer(state, to_act)
    if offer is not None:
        view.turn = pb.TURN_KIND_SPLIT_OFFER
        view.split_offer.pots.extend(offer.pots)
        view.split_offer.amounts.extend(offer.amounts)
        view.split_offer.may_bet = offer.may_bet
