"""From the dealer's events to ledger commands: a pure function of a small view of the table.

One JetStream message of the table stream is one :class:`~poker.v1.events_pb2.TableEventBatch`
(every event of one dealer command). :func:`map_batch` turns it into the ledger commands it
implies, in order, and folds it into a :class:`TableView`:

====================  ===============================================================
dealer event          ledger command
====================  ===============================================================
PlayerSeated          PostHold (the seat's hold, the buy-in reaches the escrow)
ChipsAdded            PostHold (the top-up's hold)
HandEnded             SettleHand (each dealt-in player's net result, the rake)
PlayerCashedOut       CashOut, leaving the table (stand-up, bust, table close)
TableClosed           CloseTableRefund (any escrow left back to cash, stranded holds voided)
anything else         nothing: money inside an unfinished hand never reaches the ledger,
                      and a voided hand gives every chip back, so the stacks are unchanged
====================  ===============================================================

**Positions.** Each command's :class:`~poker.wallet.ledger.SourceEvent` position is the table
event's ``version`` (1, 2, 3, ... per table), not the message's stream sequence: one message can
hold several money events (a hand that ends, a busted player cashed out, the table closed), and
the ledger's exactly-once cursor is "last applied position" per table, so each command needs its
own, increasing position. The versions are exactly that, and the consumer appends all of one
message's ledger events as one journal record, so a message is applied whole or not at all.

**The view** keeps what the events alone do not say: who sits in which seat (HandEnded names
seats) and the game (for the rake report); and, for the audit, each player's stack at the last
hand boundary, which is exactly what his escrow must hold once the ledger applied the same
events (stacks only change at the events that move money, and at a void that restores them).

>>> from poker.v1 import events_pb2 as pb
>>> batch = pb.TableEventBatch(command_id="c1", events=[pb.TableEvent(
...     table_id="t1", version=2, occurred_at=5,
...     player_seated=pb.PlayerSeated(seat=1, player_id="ann", amount=100, hold_id="h1"))])
>>> view, commands = map_batch(TableView("t1", position=3, version=1), batch, position=7, now=9)
>>> [type(c).__name__ for c in commands], dict(view.stacks), view.last_money_version
(['PostHold'], {'ann': 100}, 2)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from poker.tablelog.seals import started_turn_ms
from poker.v1 import events_pb2 as pb
from poker.wallet.ledger import (
    CashOut,
    CloseTableRefund,
    Command,
    PostHold,
    SettleHand,
    SourceEvent,
)

#: Bodies that move money (the ledger's positions are the versions of these events only).
MONEY_BODIES = frozenset(
    {"player_seated", "chips_added", "hand_ended", "player_cashed_out", "table_closed"}
)


_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")


def ledger_hand_id(hand_id: str) -> str:
    """The dealer's hand id (``<table>.<n>``) as a ledger id: the ledger's ids are letters,
    digits, ``-`` and ``_`` only, so ``.`` (and any other character) becomes ``_``. A label only:
    the transaction's source (table, position) is the exact reference.

    >>> ledger_hand_id("t-1.12")
    't-1_12'
    """
    return _NOT_ID.sub("_", hand_id)[:128]


class MappingError(Exception):
    """The batch does not fit the view (a seat nobody sits in, a version out of order): like a
    command the ledger refuses, it stops the table's consumption."""


@dataclass(frozen=True, slots=True)
class TableView:
    """What the wallet knows of a table's log up to stream position ``position``."""

    table_id: str
    position: int = 0  # stream sequence of the last message folded (0: none)
    version: int = 0  # version of the last event folded
    game: str = ""
    seats: Mapping[int, str] = field(default_factory=dict)  # seat -> player
    stacks: Mapping[str, int] = field(default_factory=dict)  # player -> stack at the boundary
    last_money_version: int = 0
    closed: bool = False
    #: When the last event folded happened (unix ms; 0: none): the wallet-close rule's input.
    last_at: int = 0
    #: The longest turn of the hand running (ms; None: no hand runs), from its HandStarted: the
    #: wallet-close rule's input (:func:`poker.tablelog.seals.close_limit_ms`).
    running_turn_ms: int | None = None


def money_versions(batch: pb.TableEventBatch) -> list[int]:
    """The versions of the money-moving events of ``batch``, in order."""
    return [e.version for e in batch.events if e.WhichOneof("body") in MONEY_BODIES]


@dataclass(slots=True)
class _Fold:
    """The mutable scratch of one :func:`map_batch` call (the result is frozen again)."""

    view: TableView
    seats: dict[int, str]
    stacks: dict[str, int]
    now: int
    game: str
    commands: list[Command] = field(default_factory=list)

    def source(self, event: pb.TableEvent) -> SourceEvent:
        return SourceEvent(self.view.table_id, event.version, event.occurred_at)


def map_batch(
    view: TableView, batch: pb.TableEventBatch, *, position: int, now: int
) -> tuple[TableView, list[Command]]:
    """The ledger commands of ``batch`` (stored at stream ``position``) and the view after it.

    ``now`` is the wallet's clock (unix ms). Raises :class:`MappingError` if the batch cannot
    follow ``view``.
    """
    if position <= view.position:
        raise MappingError(f"message {position} does not follow message {view.position}.")
    fold = _Fold(view, dict(view.seats), dict(view.stacks), now, view.game)
    version, closed, last_money = view.version, view.closed, view.last_money_version
    running_turn = view.running_turn_ms
    for event in batch.events:
        if event.version != version + 1:
            raise MappingError(
                f"event {event.version} of table {view.table_id} cannot follow event {version}."
            )
        version = event.version
        body = event.WhichOneof("body")
        if body == "table_created":
            fold.game = event.table_created.config.game
        elif body == "hand_started":
            fold.game = event.hand_started.game
            running_turn = started_turn_ms(event.hand_started)
        elif body in ("hand_ended", "hand_voided"):
            running_turn = None
        elif body == "table_closed":
            closed = True
            running_turn = None
        handler = _HANDLERS.get(body or "")
        if handler is not None:
            handler(fold, event, getattr(event, body or ""))
        if body in MONEY_BODIES:
            last_money = version
    last_at = batch.events[-1].occurred_at if batch.events else view.last_at
    after = TableView(
        view.table_id,
        position,
        version,
        fold.game,
        fold.seats,
        fold.stacks,
        last_money,
        closed,
        last_at,
        running_turn,
    )
    return after, fold.commands


def _seated(fold: _Fold, event: pb.TableEvent, body: pb.PlayerSeated) -> None:
    fold.seats[body.seat] = body.player_id
    fold.stacks[body.player_id] = body.amount
    fold.commands.append(
        PostHold(fold.source(event), body.hold_id, body.player_id, fold.now, amount=body.amount)
    )


def _chips_added(fold: _Fold, event: pb.TableEvent, body: pb.ChipsAdded) -> None:
    fold.stacks[body.player_id] = fold.stacks.get(body.player_id, 0) + body.amount
    fold.commands.append(
        PostHold(fold.source(event), body.hold_id, body.player_id, fold.now, amount=body.amount)
    )


def _player_at(fold: _Fold, seat: int) -> str:
    player = fold.seats.get(seat)
    if player is None:
        raise MappingError(f"nobody sits in seat {seat} of table {fold.view.table_id}.")
    return player


def _hand_ended(fold: _Fold, event: pb.TableEvent, body: pb.HandEnded) -> None:
    net: dict[str, int] = {}
    for result in body.results:
        player = _player_at(fold, result.seat)
        net[player] = result.net
        fold.stacks[player] = result.stack
    fold.commands.append(
        SettleHand(
            fold.source(event),
            hand_id=ledger_hand_id(event.hand_id),
            game=fold.game,
            net=net,
            rake=body.rake,
            now=fold.now,
        )
    )


def _hand_voided(fold: _Fold, event: pb.TableEvent, body: pb.HandVoided) -> None:
    # No ledger effect: the hand never reached the ledger. The stacks after it are the stacks
    # before it (every chip back to whoever put it in); keep the dealer's word for the audit.
    for result in body.results:
        fold.stacks[_player_at(fold, result.seat)] = result.stack


def _cashed_out(fold: _Fold, event: pb.TableEvent, body: pb.PlayerCashedOut) -> None:
    fold.seats.pop(body.seat, None)
    fold.stacks.pop(body.player_id, None)
    fold.commands.append(
        CashOut(fold.source(event), body.player_id, body.amount, fold.now, leaves_table=True)
    )


def _closed(fold: _Fold, event: pb.TableEvent, body: pb.TableClosed) -> None:
    fold.commands.append(CloseTableRefund(fold.source(event), fold.now, reason=body.reason))


_HANDLERS: dict[str, Callable[[_Fold, pb.TableEvent, Any], None]] = {
    "player_seated": _seated,
    "chips_added": _chips_added,
    "hand_ended": _hand_ended,
    "hand_voided": _hand_voided,
    "player_cashed_out": _cashed_out,
    "table_closed": _closed,
}


def fold_batch(view: TableView, batch: pb.TableEventBatch, position: int) -> TableView:
    """``view`` after ``batch``, the commands dropped (rebuilding a view from the log)."""
    return map_batch(view, batch, position=position, now=0)[0]
