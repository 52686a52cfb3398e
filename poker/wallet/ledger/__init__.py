"""The wallet's pure core: an event-sourced double-entry ledger (no I/O, no clock, no asyncio).

**Double entry.** Money lives in accounts (see :mod:`poker.wallet.ledger.accounts`):
``cash:<player>``, ``held:<player>``, ``escrow:<table>:<player>``, ``house:rake`` and
``world:external``, the counter-account of deposits and withdrawals. Every change is a transaction:
a set of signed postings that sum to zero, so money is never created or lost inside the system,
and the money inside is always deposits minus withdrawals. Amounts are ``int`` minor units only.

**Holds: a pending transfer whose reservation is a real account.** TigerBeetle reserves a pending
transfer in the ``debits_pending`` / ``credits_pending`` columns of the two accounts, then posts or
voids it. Here the reservation is an ordinary, balanced transaction into the player's ``held``
account, and the hold itself (id, player, table, amount, deadline, status) is a record beside the
balances:

* ``PlaceHold``: ``cash -a, held +a``. The cash is gone from what the player can spend or hold
  again; the hold is *pending*.
* ``PostHold`` (the dealer's seat or top-up event carries the hold id): ``held -a, escrow +s,
  cash +(a - s)`` where ``s <= a`` is what reached the table; the hold is *posted*.
* ``VoidHold`` / ``ExpireHolds``: ``held -a, cash +a``; the hold is *voided* / *expired*.

A hold ends exactly once (posted, voided or expired are final), so a dealer that died between the
hold and the seat never freezes a player's money: the hold expires. We chose a real ``held``
account over pending columns because then every balance, held money included, is a plain sum of
postings: the audit has one rule (postings sum to zero; ``held`` equals the pending holds) and
a player's statement shows the reservation as a line. The price, one more transaction per
buy-in, is cheap. Expiry happens only through ``ExpireHolds`` (the service's timer), never by
reading a clock, so a seat that arrives after the deadline but before the sweep still posts.

**Money limits.** No deposit, withdrawal or hold moves more than ``max_transaction``, no deposit
brings a player's cash above ``max_account_balance`` or the money inside above
``max_ledger_total`` (at most 2**62): since every other account stays at or above zero, every sum
of balances stays inside int64 (see :mod:`.limits`).

**Event-sourced.** ``decide(state, command) -> [LedgerEvent]`` checks everything and returns the
events; ``evolve(state, event) -> state`` applies one; ``replay`` folds ``evolve``. Each
transaction has a ledger-unique idempotency key; dealer-driven transactions also carry their
source event (table, position), and the state keeps the last position applied per table, so a
redelivered dealer event changes nothing.

**The consumer's contract.** The cursor is "last applied position", not a set of positions, so a
table's money events must be applied in log order, and a dealer event that ``decide`` refuses
must stop that table's consumption (alert, do not ack): acking it and applying a later one would
make the refused position look applied. ``last_applied_position`` tells the consumer where to
resume after a restart.

**State layout.** The state is a frozen value made of persistent maps (:mod:`.pmap`, a hash
trie): a transaction copies a few small nodes, never whole dicts. It is bounded by what is live
(accounts, tables, holds, client keys), never by the transactions ever posted: those are the
journal's (the wallet reads its history there), and what the audit needs of them is folded as
each is posted (:class:`~.state.AuditTotals`; :mod:`.audit`). Escrow accounts and rake lines
live inside their table's record, so a hand settlement rewrites one table record and nothing
else of size (see :mod:`.state`). Time is an input:
commands carry ``now`` (unix ms) and dealer events their own time, which dates the rake.

>>> from poker.wallet.ledger import Deposit, PlaceHold, decide, evolve, player_balance
>>> state = LedgerState()
>>> for command in [Deposit("ann", 1_000, "pay-1", now=0),
...                 PlaceHold("h1", "ann", "t1", 400, ttl_ms=30_000, now=5)]:
...     for event in decide(state, command):
...         state = evolve(state, event)
>>> player_balance(state, "ann")
PlayerBalance(player_id='ann', cash=600, held=400)
>>> decide(state, Deposit("ann", 1_000, "pay-1", now=9))  # the same key again: nothing new
[]
"""

from poker.wallet.ledger.accounts import (
    HOUSE_RAKE,
    WORLD,
    Account,
    cash_account,
    escrow_account,
    held_account,
    parse_account,
)
from poker.wallet.ledger.audit import Breach, BreachKind, audit
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
from poker.wallet.ledger.decide import decide, execute
from poker.wallet.ledger.errors import (
    EscrowMismatch,
    EscrowOverdrawn,
    HoldAlreadyPosted,
    HoldMismatch,
    HoldNotPending,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidCommand,
    LedgerBug,
    LedgerError,
    LimitExceeded,
    NotFound,
    RuleViolation,
    SequenceGap,
    TableClosed,
    UnbalancedSettlement,
    UnknownEscrow,
    UnknownEvent,
    UnknownHold,
    UnknownTable,
)
from poker.wallet.ledger.evolve import evolve, replay, utc_day
from poker.wallet.ledger.limits import DEFAULT_LIMITS, Limits, money_inside
from poker.wallet.ledger.queries import (
    PlayerBalance,
    RakeRow,
    escrow_by_table,
    find_hold,
    last_applied_position,
    pending_holds,
    player_balance,
    rake_lines,
    rake_report,
    table_escrow,
)
from poker.wallet.ledger.state import (
    Hold,
    HoldStatus,
    Kind,
    LedgerState,
    Posting,
    TableLedger,
    Transaction,
)

__all__ = [
    "DEFAULT_LIMITS",
    "HOUSE_RAKE",
    "WORLD",
    "Account",
    "Breach",
    "BreachKind",
    "CashOut",
    "CloseTableRefund",
    "Command",
    "Deposit",
    "EscrowMismatch",
    "EscrowOverdrawn",
    "ExpireHolds",
    "ForgetTable",
    "Hold",
    "HoldAlreadyPosted",
    "HoldMismatch",
    "HoldNotPending",
    "HoldStatus",
    "IdempotencyConflict",
    "InsufficientFunds",
    "InvalidCommand",
    "Kind",
    "LedgerBug",
    "LedgerError",
    "LedgerState",
    "LimitExceeded",
    "Limits",
    "NotFound",
    "PlaceHold",
    "PlayerBalance",
    "PostHold",
    "Posting",
    "RakeRow",
    "RuleViolation",
    "SequenceGap",
    "SettleHand",
    "SourceEvent",
    "TableClosed",
    "TableLedger",
    "Transaction",
    "UnbalancedSettlement",
    "UnknownEscrow",
    "UnknownEvent",
    "UnknownHold",
    "UnknownTable",
    "VoidHold",
    "Withdraw",
    "audit",
    "cash_account",
    "decide",
    "escrow_account",
    "escrow_by_table",
    "evolve",
    "execute",
    "find_hold",
    "held_account",
    "last_applied_position",
    "money_inside",
    "parse_account",
    "pending_holds",
    "player_balance",
    "rake_lines",
    "rake_report",
    "replay",
    "table_escrow",
    "utc_day",
]
