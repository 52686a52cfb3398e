"""``decide``: check a command against the state and return the events that record it.

Every check happens here (with the rules of :mod:`.rules`), before anything is written: ``decide``
either returns events or raises a :class:`~poker.wallet.ledger.errors.LedgerError` with the
rule's sentence, and never changes the state (it cannot: the state is a frozen value). Checks run
in a fixed order: the command's shape (:class:`InvalidCommand`), then idempotency (a repeat
returns ``[]``), then the rules, the money limits of :mod:`.limits` among them.

Idempotency, per command:

* Deposit, Withdraw: the caller's key, stored as ``client:<key>``; a repeat with the same player and
  amount returns ``[]``, with anything else it raises :class:`IdempotencyConflict`.
* PlaceHold: the hold id, with the same comparison; a repeat returns ``[]`` only while the hold
  is pending: a posted, voided or expired hold is refused, naming its state.
* VoidHold: a hold already voided or expired returns ``[]``.
* ExpireHolds: only pending holds expire, so a repeat finds nothing to do.
* Dealer-driven commands (PostHold, SettleHand, CashOut, CloseTableRefund): the source event's
  position; at or below the table's last applied position returns ``[]`` (redelivery).

The state keeps client keys and ended holds for a window of transactions only
(:data:`~.state.KEY_WINDOW`); older ones are given back to ``decide`` as ``recalled`` (found in
the journal by the wallet's key index) and answered exactly as if they were still in the state.
Nothing recalled ever produces an event: a recalled key is a repeat or a conflict, a recalled hold
has ended (a repeat, or refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from poker.v1 import ledger_pb2 as pb
from poker.wallet.ledger.accounts import (
    HOUSE_RAKE,
    WORLD,
    cash_account,
    escrow_account,
    held_account,
    verify_id,
)
from poker.wallet.ledger.commands import (
    CashOut,
    CloseTableRefund,
    Command,
    Deposit,
    ExpireHolds,
    ForgetTable,
    PlaceHold,
    PostHold,
    SettleHand,
    SourceEvent,
    VoidHold,
    Withdraw,
)
from poker.wallet.ledger.errors import (
    EscrowMismatch,
    EscrowOverdrawn,
    HoldAlreadyPosted,
    HoldMismatch,
    HoldNotPending,
    IdempotencyConflict,
    InvalidCommand,
)
from poker.wallet.ledger.events import transaction_event
from poker.wallet.ledger.evolve import evolve
from poker.wallet.ledger.limits import (
    DEFAULT_LIMITS,
    Limits,
    verify_deposit_room,
    verify_transaction_size,
)
from poker.wallet.ledger.rules import (
    INT64_MAX,
    verify_amount,
    verify_escrow_open,
    verify_funds,
    verify_hold_known,
    verify_hold_pending,
    verify_idempotency_key,
    verify_instant,
    verify_non_negative,
    verify_postings_covered,
    verify_settlement_balanced,
    verify_source,
    verify_table_not_closed,
    verify_table_not_forgotten,
    verify_table_open,
)
from poker.wallet.ledger.state import (
    CLIENT_KEY_PREFIX,
    NOTHING_RECALLED,
    Hold,
    HoldStatus,
    Kind,
    LedgerState,
    Posting,
    Recalled,
    TableLedger,
)

Postings = list[Posting]


# --- decide --------------------------------------------------------------------------------


def decide(
    state: LedgerState,
    command: Command,
    limits: Limits = DEFAULT_LIMITS,
    recalled: Recalled = NOTHING_RECALLED,
) -> list[pb.LedgerEvent]:
    """The events that record ``command`` (``[]`` for a repeat), or a :class:`LedgerError`;
    money brought in or reserved stays within ``limits``; ``recalled``: the keys and holds that
    left the state's window (see the module)."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise InvalidCommand(f"{type(command).__name__} is not a ledger command.")
    return handler(state, command, limits, recalled)


def recall_names(command: Command) -> tuple[str, str]:
    """What ``command`` may repeat that the state may have forgotten: its client key (with its
    prefix, "" if none) and the hold it names ("" if none)."""
    if isinstance(command, (Deposit, Withdraw)) and isinstance(command.idempotency_key, str):
        return CLIENT_KEY_PREFIX + command.idempotency_key, ""
    if isinstance(command, (PlaceHold, VoidHold, PostHold)) and isinstance(command.hold_id, str):
        return "", command.hold_id
    return "", ""


def _known_hold(state: LedgerState, recalled: Recalled, hold_id: str) -> Hold:
    """The hold ``hold_id``, in the state or recalled; :class:`UnknownHold` if neither."""
    hold = state.holds.get(hold_id) or recalled.holds.get(hold_id)
    return hold if hold is not None else verify_hold_known(state, hold_id)


def _event(
    state: LedgerState,
    offset: int,
    kind: Kind,
    key: str,
    postings: Postings,
    *,
    recorded_at: int,
    occurred_at: int | None = None,
    **details: Any,
) -> pb.LedgerEvent:
    verify_postings_covered(state, postings)
    return transaction_event(
        sequence=state.sequence + offset,
        transaction_id=state.last_transaction_id + offset,
        recorded_at=recorded_at,
        kind=kind,
        idempotency_key=key,
        postings=postings,
        occurred_at=recorded_at if occurred_at is None else occurred_at,
        **details,
    )


def _repeat_of(
    state: LedgerState, recalled: Recalled, key: str, kind: Kind, postings: Postings
) -> bool:
    """Whether ``key`` already recorded this very transaction; raise if it recorded another."""
    tx = state.keys.get(key) or recalled.keys.get(key)
    if tx is None:
        return False
    if tx.kind is kind and tx.postings == tuple(postings):
        return True
    client_key = key.removeprefix(CLIENT_KEY_PREFIX)
    raise IdempotencyConflict(
        f"idempotency key {client_key!r} was already used for another request (transaction "
        f"{tx.transaction_id}, {tx.kind.name.lower()}); a retry must repeat the same request."
    )


def _deposit(
    state: LedgerState, command: Deposit, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    verify_id("player id", command.player_id)
    amount = verify_amount("a deposit", command.amount)
    key = CLIENT_KEY_PREFIX + verify_idempotency_key(command.idempotency_key)
    now = verify_instant("now", command.now)
    postings = [(WORLD, -amount), (cash_account(command.player_id), amount)]
    if _repeat_of(state, recalled, key, Kind.DEPOSIT, postings):
        return []
    verify_transaction_size("a deposit", amount, limits)
    verify_deposit_room(state, command.player_id, amount, limits)
    return [
        _event(
            state,
            1,
            Kind.DEPOSIT,
            key,
            postings,
            recorded_at=now,
            player_id=command.player_id,
            reason=command.reason,
        )
    ]


def _withdraw(
    state: LedgerState, command: Withdraw, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    verify_id("player id", command.player_id)
    amount = verify_amount("a withdrawal", command.amount)
    key = CLIENT_KEY_PREFIX + verify_idempotency_key(command.idempotency_key)
    now = verify_instant("now", command.now)
    postings = [(cash_account(command.player_id), -amount), (WORLD, amount)]
    if _repeat_of(state, recalled, key, Kind.WITHDRAWAL, postings):
        return []
    verify_transaction_size("a withdrawal", amount, limits)
    verify_funds(state, command.player_id, amount)
    return [
        _event(
            state,
            1,
            Kind.WITHDRAWAL,
            key,
            postings,
            recorded_at=now,
            player_id=command.player_id,
            reason=command.reason,
        )
    ]


def _place_hold(
    state: LedgerState, command: PlaceHold, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    verify_id("hold id", command.hold_id)
    verify_id("player id", command.player_id)
    verify_id("table id", command.table_id)
    amount = verify_amount("a hold", command.amount)
    ttl = verify_amount("a hold's time to live (ms)", command.ttl_ms)
    now = verify_instant("now", command.now)
    existing = state.holds.get(command.hold_id) or recalled.holds.get(command.hold_id)
    if existing is not None:
        return _repeated_hold(existing, command.player_id, command.table_id, amount)
    verify_table_not_closed(state.tables.get(command.table_id))
    verify_table_not_forgotten(state, command.table_id)
    verify_transaction_size("a hold", amount, limits)
    verify_funds(state, command.player_id, amount)
    hold = Hold(command.hold_id, command.player_id, command.table_id, amount, now + ttl)
    postings = [
        (cash_account(command.player_id), -amount),
        (held_account(command.player_id), amount),
    ]
    return [
        _event(
            state,
            1,
            Kind.HOLD_PLACED,
            f"hold:{hold.hold_id}:placed",
            postings,
            recorded_at=now,
            hold=hold,
            player_id=hold.player_id,
        )
    ]


def _repeated_hold(
    existing: Hold, player_id: str, table_id: str, amount: int
) -> list[pb.LedgerEvent]:
    """PlaceHold of an id already used: ``[]`` for a true repeat (same player, table and amount,
    still pending: the same hold); otherwise refused with a sentence naming what differs or the
    state the hold is in (posted, voided, expired), never answered as a repeat."""
    if (existing.player_id, existing.table_id, existing.amount) != (player_id, table_id, amount):
        raise IdempotencyConflict(
            f"hold id {existing.hold_id} already names a hold of {existing.amount} for player "
            f"{existing.player_id} at table {existing.table_id}, not {amount} for player "
            f"{player_id} at table {table_id}; a new hold needs a new id."
        )
    if existing.status is HoldStatus.POSTED:
        raise HoldAlreadyPosted(
            f"hold {existing.hold_id} is posted: the seat it paid for at table "
            f"{existing.table_id} was already taken; a new buy-in needs a new hold id."
        )
    if existing.status is not HoldStatus.PENDING:
        raise HoldNotPending(
            f"hold {existing.hold_id} is {existing.status.value}: its cash went back to player "
            f"{existing.player_id}; a new buy-in needs a new hold id."
        )
    return []


def _release(
    state: LedgerState, offset: int, hold: Hold, *, kind: Kind, now: int, reason: str
) -> pb.LedgerEvent:
    """Held → cash for the whole hold (void or expiry)."""
    postings = [
        (held_account(hold.player_id), -hold.amount),
        (cash_account(hold.player_id), hold.amount),
    ]
    step = "voided" if kind is Kind.HOLD_VOIDED else "expired"
    return _event(
        state,
        offset,
        kind,
        f"hold:{hold.hold_id}:{step}",
        postings,
        recorded_at=now,
        hold=hold,
        player_id=hold.player_id,
        reason=reason,
    )


def _void_hold(
    state: LedgerState, command: VoidHold, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    verify_id("hold id", command.hold_id)
    now = verify_instant("now", command.now)
    hold = _known_hold(state, recalled, command.hold_id)
    if hold.status in (HoldStatus.VOIDED, HoldStatus.EXPIRED):
        return []  # the cash is back already: a repeated void is a no-op
    verify_hold_pending(hold)
    return [_release(state, 1, hold, kind=Kind.HOLD_VOIDED, now=now, reason=command.reason)]


def _expire_holds(
    state: LedgerState, command: ExpireHolds, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    now = verify_instant("now", command.now)
    due = sorted(
        (expires_at, hold_id)
        for hold_id, expires_at in state.pending_holds.items_iter()
        if expires_at <= now
    )
    return [
        _release(
            state, offset, state.holds[hold_id], kind=Kind.HOLD_EXPIRED, now=now, reason="expired"
        )
        for offset, (_, hold_id) in enumerate(due, start=1)
    ]


def _already_applied(state: LedgerState, table: TableLedger | None, source: SourceEvent) -> bool:
    """Whether the table's event at ``source`` was applied already: at or below the table's
    cursor, or of a forgotten table at or below its close (a late redelivery: never applied)."""
    if table is None:
        closed_at = state.forgotten.get(source.table_id)
        return closed_at is not None and source.position <= closed_at
    return source.position <= table.last_position


def _source_key(source: SourceEvent) -> str:
    return f"table:{source.table_id}@{source.position}"


def _post_hold(
    state: LedgerState, command: PostHold, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    source = verify_source(command.source)
    verify_id("hold id", command.hold_id)
    verify_id("player id", command.player_id)
    now = verify_instant("now", command.now)
    table = state.tables.get(source.table_id)
    if _already_applied(state, table, source):
        return []
    verify_table_not_closed(table)
    hold = _known_hold(state, recalled, command.hold_id)
    if (hold.player_id, hold.table_id) != (command.player_id, source.table_id):
        raise HoldMismatch(
            f"hold {hold.hold_id} belongs to player {hold.player_id} at table {hold.table_id}, "
            f"not to player {command.player_id} at table {source.table_id}."
        )
    verify_hold_pending(hold)
    amount = hold.amount if command.amount is None else verify_amount("a seat", command.amount)
    if amount > hold.amount:
        raise HoldMismatch(f"hold {hold.hold_id} reserved {hold.amount}, not {amount}.")
    player = hold.player_id
    postings = [
        (held_account(player), -hold.amount),
        (escrow_account(source.table_id, player), amount),
    ]
    if amount < hold.amount:  # the unused part of the hold goes straight back
        postings.append((cash_account(player), hold.amount - amount))
    return [
        _event(
            state,
            1,
            Kind.HOLD_POSTED,
            _source_key(source),
            postings,
            recorded_at=now,
            occurred_at=source.occurred_at,
            source=source,
            hold=hold,
            player_id=player,
        )
    ]


def _settle_hand(
    state: LedgerState, command: SettleHand, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    source = verify_source(command.source)
    verify_id("hand id", command.hand_id)
    verify_id("game", command.game)
    rake = verify_non_negative("the rake", command.rake)
    now = verify_instant("now", command.now)
    net = dict(command.net)
    if not net:
        raise InvalidCommand(f"hand {command.hand_id} names no player.")
    for player, result in net.items():
        verify_id("player id", player)
        if type(result) is not int or abs(result) > INT64_MAX:
            raise InvalidCommand(
                f"player {player}'s net result must be an integer of minor units, not {result!r}."
            )
    table = state.tables.get(source.table_id)
    if _already_applied(state, table, source):
        return []
    table = verify_table_open(table, source.table_id)
    verify_settlement_balanced(net, rake)
    postings: Postings = []
    for player in sorted(net):
        verify_escrow_open(table, player)
        result = net[player]
        if result < 0 and table.escrow_balance(player) + result < 0:
            raise EscrowOverdrawn(
                f"player {player} has {table.escrow_balance(player)} at table {table.table_id} "
                f"and cannot lose {-result} in hand {command.hand_id}."
            )
        if result:
            postings.append((escrow_account(table.table_id, player), result))
    if rake:
        postings.append((HOUSE_RAKE, rake))
    return [
        _event(
            state,
            1,
            Kind.HAND_SETTLED,
            _source_key(source),
            postings,
            recorded_at=now,
            occurred_at=source.occurred_at,
            source=source,
            hand_id=command.hand_id,
            game=command.game,
            rake=rake,
        )
    ]


def _cash_out(
    state: LedgerState, command: CashOut, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    source = verify_source(command.source)
    verify_id("player id", command.player_id)
    now = verify_instant("now", command.now)
    if command.leaves_table:
        amount = verify_non_negative("a cash-out", command.amount)
    else:
        amount = verify_amount("a partial cash-out", command.amount)
    table = state.tables.get(source.table_id)
    if _already_applied(state, table, source):
        return []
    table = verify_table_open(table, source.table_id)
    verify_escrow_open(table, command.player_id)
    account = escrow_account(table.table_id, command.player_id)
    escrow = table.escrow_balance(command.player_id)
    if amount > escrow:
        raise EscrowOverdrawn(
            f"player {command.player_id} has {escrow} at table {table.table_id} and cannot cash "
            f"out {amount}."
        )
    if command.leaves_table and amount != escrow:
        raise EscrowMismatch(
            f"player {command.player_id} leaves table {table.table_id} with {amount} but his "
            f"escrow holds {escrow}; leaving must take the whole escrow."
        )
    postings: Postings = []
    if amount:
        postings = [(account, -amount), (cash_account(command.player_id), amount)]
    return [
        _event(
            state,
            1,
            Kind.CASH_OUT,
            _source_key(source),
            postings,
            recorded_at=now,
            occurred_at=source.occurred_at,
            source=source,
            player_id=command.player_id,
            leaves_table=command.leaves_table,
        )
    ]


def _close_table(
    state: LedgerState, command: CloseTableRefund, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    source = verify_source(command.source)
    now = verify_instant("now", command.now)
    known = state.tables.get(source.table_id)
    if _already_applied(state, known, source):
        return []
    table = known or TableLedger(source.table_id)
    if table.closed:
        return []  # closing twice changes nothing
    postings: Postings = []
    for player in sorted(table.seated):
        account = escrow_account(table.table_id, player)
        escrow = table.escrow_balance(player)
        if escrow:
            postings += [(account, -escrow), (cash_account(player), escrow)]
    events = [
        _event(
            state,
            1,
            Kind.TABLE_CLOSED_REFUND,
            _source_key(source),
            postings,
            recorded_at=now,
            occurred_at=source.occurred_at,
            source=source,
            reason=command.reason,
        )
    ]
    # Holds still waiting for a seat at this table can never be posted now: return them at once.
    stranded = sorted(
        hold_id
        for hold_id in state.pending_holds
        if state.holds[hold_id].table_id == table.table_id
    )
    events += [
        _release(
            state,
            offset,
            state.holds[hold_id],
            kind=Kind.HOLD_VOIDED,
            now=now,
            reason="table closed",
        )
        for offset, hold_id in enumerate(stranded, start=2)
    ]
    return events


def _forget_table(
    state: LedgerState, command: ForgetTable, limits: Limits, recalled: Recalled
) -> list[pb.LedgerEvent]:
    """Forget a closed table with no escrow left (``[]`` if already forgotten); the caller
    vouches that its close is acked (see :class:`ForgetTable`)."""
    verify_id("table id", command.table_id)
    now = verify_instant("now", command.now)
    table = state.tables.get(command.table_id)
    if table is None:
        if command.table_id in state.forgotten:
            return []
        raise InvalidCommand(f"table {command.table_id} is not known to the ledger.")
    if not table.closed:
        raise InvalidCommand(f"table {command.table_id} is open: only a closed table is forgotten.")
    if any(entry.balance for entry in table.escrow.values()):
        raise InvalidCommand(
            f"table {command.table_id} still holds escrow; it cannot be forgotten."
        )
    if any(state.holds[h].table_id == command.table_id for h in state.pending_holds):
        raise InvalidCommand(
            f"table {command.table_id} has a pending hold; it cannot be forgotten."
        )
    if command.closed_at_position < table.last_position:
        raise InvalidCommand(
            f"table {command.table_id}'s close at {command.closed_at_position} is before the "
            f"ledger's cursor there ({table.last_position})."
        )
    body = pb.TableForgotten(
        table_id=command.table_id, closed_at_position=command.closed_at_position
    )
    return [pb.LedgerEvent(sequence=state.sequence + 1, occurred_at=now, table_forgotten=body)]


_HANDLERS: dict[type, Callable[[LedgerState, Any, Limits, Recalled], list[pb.LedgerEvent]]] = {
    Deposit: _deposit,
    Withdraw: _withdraw,
    PlaceHold: _place_hold,
    VoidHold: _void_hold,
    ExpireHolds: _expire_holds,
    PostHold: _post_hold,
    SettleHand: _settle_hand,
    CashOut: _cash_out,
    CloseTableRefund: _close_table,
    ForgetTable: _forget_table,
}


def execute(
    state: LedgerState, command: Command, limits: Limits = DEFAULT_LIMITS
) -> tuple[LedgerState, list[pb.LedgerEvent]]:
    """``decide``, then fold the events into the state: the state after a successful append.

    >>> from poker.wallet.ledger.commands import Deposit
    >>> state, events = execute(LedgerState(), Deposit("ann", 500, "pay-1", now=0))
    >>> state.balance("cash:ann"), len(events)
    (500, 1)
    """
    events = decide(state, command, limits)
    for event in events:
        state = evolve(state, event)
    return state, events
