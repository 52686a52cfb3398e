"""The wallet's reads, as the application answers them: plain values the servicer converts.

Each function takes one frozen :class:`~poker.wallet.ledger.LedgerState` (the book's state at
one instant), so an answer never mixes two moments of the ledger. Unknown accounts, holds and
tables are :class:`~poker.servicekit.errors.NotFound`; nothing here knows the wire or gRPC
(:mod:`poker.wallet.wire` turns the values into messages).

>>> from poker.wallet.ledger import LedgerState
>>> balance(LedgerState(), "ann")
Balance(player_id='ann', cash=0, held=0, escrow=(), total=0)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from poker.servicekit.errors import NotFound
from poker.tablelog.chain import ChainBreak
from poker.v1.ledger_pb2 import LedgerEvent
from poker.wallet import ledger
from poker.wallet.consumer import Finding
from poker.wallet.history import Cursor, HistoryReader, account_of, owned_by
from poker.wallet.ledger import BreachKind, Hold, Transaction
from poker.wallet.ledger.accounts import cash_account
from poker.wallet.ledger.queries import RakeDimension, RakeRow
from poker.wallet.ledger.state import CLIENT_KEY_PREFIX, KeyedTransaction, RakeKey, RakeLine
from poker.wallet.metrics import WalletMetrics


class AccountNotFound(NotFound):
    """The player has no cash account: no money ever came in."""

    REASON = "ACCOUNT_NOT_FOUND"


class HoldNotFound(NotFound):
    """No hold has this id (the ledger's ``UnknownHold`` means the same)."""

    REASON = "HOLD_NOT_FOUND"


class NoTableMoney(NotFound):
    """No money ever moved at this table (the ledger's ``UnknownTable`` means the same)."""

    REASON = "NO_TABLE_MONEY"


#: ``stacks(state)``: table id -> player -> the dealer's stack, for the open tables (the audit).
StacksReader = Callable[[ledger.LedgerState], Awaitable[dict[str, dict[str, int]]]]
#: The consumer's findings for the audit (:meth:`~poker.wallet.consumer.BatchApplier.findings`).
FindingsReader = Callable[[], Sequence[Finding]]
#: ``chains(state)``: every break of the tables' hash chains (the audit; poker.tablelog.chain).
ChainReader = Callable[[ledger.LedgerState], Awaitable[Sequence[ChainBreak]]]
#: The kinds of finding the consumer reports (metric labels of ``poker_wallet_audit_breaches``).
CONSUMER_FINDINGS = ("refused_batch", "stalled_table", "foreign_subject")  # and broken_chain
#: The kind of breach a table log's broken hash chain is.
BROKEN_CHAIN = "broken_chain"
#: The kind of breach a journal record the wallet refused is (someone else wrote it there).
REFUSED_JOURNAL_RECORD = "refused_journal_record"


# --- balances and accounts ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EscrowLine:
    """A player's chips at one table (minor units)."""

    table_id: str
    player_id: str
    amount: int


@dataclass(frozen=True, slots=True)
class Balance:
    """A player's cash, held money and chips at tables, and their sum (minor units)."""

    player_id: str
    cash: int
    held: int
    escrow: tuple[EscrowLine, ...]
    total: int


def balance(state: ledger.LedgerState, player_id: str) -> Balance:
    """The player's cash, held money and chips at tables (zeros for an unknown player)."""
    money = ledger.player_balance(state, player_id)
    lines = tuple(
        EscrowLine(table_id, player_id, escrows[player_id])
        for table_id, escrows in ledger.escrow_by_table(state).items()
        if player_id in escrows
    )
    total = money.cash + money.held + sum(line.amount for line in lines)
    return Balance(player_id, money.cash, money.held, lines, total)


def require_account(state: ledger.LedgerState, player_id: str) -> None:
    """Raise :class:`NotFound` unless ``player_id`` has a cash account (money ever came in)."""
    if state.account(cash_account(player_id)) is None:
        raise AccountNotFound(f"no account for player {player_id}")


async def moved_transaction_id(
    keyed: Callable[[str], Awaitable[KeyedTransaction | None]],
    events: Sequence[LedgerEvent],
    key: str,
) -> int:
    """The transaction a Deposit or Withdraw with client key ``key`` posted: the new one, or for
    a repeat (no events) the first request's, found by ``keyed`` (the state's window, else the
    journal through the key index: :meth:`poker.wallet.book.LedgerBook.keyed`)."""
    if events:
        return events[0].transaction_posted.transaction_id
    found = await keyed(CLIENT_KEY_PREFIX + key)
    return 0 if found is None else found.transaction_id


# --- transactions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransactionListing:
    """One page of transactions, newest first; ``next_token`` is "" on the last page.

    ``visible`` is the accounts whose postings the caller may see (None: every posting, and the
    rake): a player sees only his own.
    """

    transactions: tuple[Transaction, ...]
    visible: frozenset[str] | None
    next_token: str


async def list_transactions(
    reader: HistoryReader,
    cursor: Cursor,
    player_id: str | None,
    *,
    own_only: bool,
    limit: int,
) -> TransactionListing:
    """A page of the transactions of ``player_id`` (None: the whole ledger), read from the
    journal (:mod:`poker.wallet.history`: at most its scan limit of records per page);
    ``own_only`` (the caller is that player) keeps the other accounts' postings and the rake
    out of it."""
    wanted = None if player_id is None else owned_by(player_id)
    page, following = await reader.page(cursor, limit, wanted)
    visible = None
    if own_only and player_id is not None:
        mine = account_of(player_id)
        visible = frozenset(a for tx in page for a, _ in tx.postings if mine(a))
    return TransactionListing(tuple(page), visible, "" if following is None else following.token())


# --- holds, tables, rake ------------------------------------------------------------------------


def hold(found: Hold | None) -> Hold:
    """The hold found in its current status (:meth:`poker.wallet.book.LedgerBook.find_hold`)."""
    if found is None:  # pragma: no cover - placing or voiding it raised UnknownHold already
        raise HoldNotFound("no such hold")
    return found


@dataclass(frozen=True, slots=True)
class TableEscrow:
    """The chips each seated player has at a table, and how far the ledger followed it."""

    table_id: str
    escrow: tuple[EscrowLine, ...]
    total: int
    last_applied_position: int
    closed: bool


def table_escrow(state: ledger.LedgerState, table_id: str) -> TableEscrow:
    """The escrow of ``table_id``; :class:`NotFound` if no money ever moved there. A forgotten
    table (closed, its close acked: it left the state) answers closed, with no escrow, followed
    up to its close."""
    table = state.tables.get(table_id)
    if table is None:
        closed_at = state.forgotten.get(table_id)
        if closed_at is None:
            raise NoTableMoney(f"no money has moved at table {table_id!r}")
        return TableEscrow(table_id, (), 0, closed_at, closed=True)
    escrows = ledger.table_escrow(state, table_id)
    return TableEscrow(
        table_id=table.table_id,
        escrow=tuple(
            EscrowLine(table.table_id, player, amount) for player, amount in escrows.items()
        ),
        total=sum(escrows.values()),
        last_applied_position=table.last_position,
        closed=table.closed,
    )


@dataclass(frozen=True, slots=True)
class RakeReport:
    """The rake rows of a report, and their totals."""

    rows: tuple[RakeRow, ...]
    total_rake: int
    total_hands: int


def rake_report(
    state: ledger.LedgerState,
    by: tuple[RakeDimension, ...],
    *,
    table_id: str | None,
    game: str | None,
    day_from: str | None,
    day_to: str | None,
    forgotten_by_table: Mapping[RakeKey, RakeLine] | None = None,
) -> RakeReport:
    """Rake grouped ``by`` the dimensions, filtered (None: no filter), with its totals; the
    forgotten tables' lines by table (:func:`forgotten_tables_rake`) where it needs them."""
    rows = tuple(
        ledger.rake_report(
            state,
            by=by,
            table_id=table_id,
            game=game,
            day_from=day_from,
            day_to=day_to,
            forgotten_by_table=forgotten_by_table,
        )
    )
    return RakeReport(rows, sum(row.rake for row in rows), sum(row.hands for row in rows))


#: How long before its first day the read of forgotten tables' rake starts: a hand's day is of
#: its own time, its journal record's time is the server's, later (the wallet applies it after
#: the table) unless the clocks disagree by more than this.
CLOCK_MARGIN_MS: Final = 3_600_000
_DAY_MS: Final = 86_400_000


def needs_forgotten_tables(
    state: ledger.LedgerState, by: tuple[RakeDimension, ...], table_id: str | None
) -> bool:
    """Whether a rake report needs the forgotten tables' rake by table (grouped by table, or
    filtered on a forgotten table's id, with forgotten rake in the state)."""
    if not state.forgotten_rake:
        return False
    if table_id is not None:
        return table_id in state.forgotten
    return "table" in by


async def forgotten_tables_rake(
    state: ledger.LedgerState,
    reader: HistoryReader,
    position: int,
    *,
    game: str | None,
    day_from: str | None,
    day_to: str | None,
) -> dict[RakeKey, RakeLine]:
    """The forgotten tables' rake by (table, game, day) over the requested games and days, read
    from the journal up to ``position`` (the state's): what ``rake_report`` needs to report it
    by table exactly as before the forgetting.

    **Cost.** The read starts at the journal's first record stored on the period's first day
    (less :data:`CLOCK_MARGIN_MS`; one direct get by start time finds it) and goes forward only
    until the lines found add up, per game and day, to the state's running totals of the
    forgotten rake (``LedgerState.forgotten_rake``): it grows with the period asked (and the
    journal written since, where a hand of the period was applied late), not with the room's
    whole history. Only if the lines do not add up at the state's position (a hand the clocks
    put before the start) are the records before the start read too; what still does not add up
    is reported under table id ``""`` by ``rake_report`` (the totals are the state's always).
    """
    wanted = {
        key: line
        for key, line in state.forgotten_rake.items()
        if (game is None or key[0] == game)
        and (day_from is None or key[1] >= day_from)
        and (day_to is None or key[1] <= day_to)
    }
    if not wanted:
        return {}
    first_day = min(day for _, day in wanted)
    days = (dt.date.fromisoformat(first_day) - dt.date(1970, 1, 1)).days
    start_ms = days * _DAY_MS - CLOCK_MARGIN_MS
    start = await reader.first_position_at(max(0, start_ms))
    start = position + 1 if start is None else start
    lines: dict[RakeKey, RakeLine] = {}
    sums: dict[tuple[str, str], RakeLine] = {}
    for low, high in ((start, position), (1, start - 1)):
        async for settlements in reader.settlements(low, high):
            for tx in settlements:
                day = ledger.utc_day(tx.occurred_at)
                if (tx.game, day) not in wanted or tx.source_table_id not in state.forgotten:
                    continue
                key = RakeKey(tx.source_table_id, tx.game, day)
                old = lines.get(key, RakeLine(0, 0))
                lines[key] = RakeLine(old.hands + 1, old.rake + tx.rake)
                total = sums.get((tx.game, day), RakeLine(0, 0))
                sums[(tx.game, day)] = RakeLine(total.hands + 1, total.rake + tx.rake)
            if sums == wanted:
                return lines
    return lines


# --- the audit ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Breach:
    """One thing the audit found wrong: its kind, what it is about, a sentence."""

    kind: str
    subject: str
    message: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The audit of one instant of the ledger against the dealer's stacks."""

    breaches: tuple[Breach, ...]
    tables_checked: int
    ledger_sequence: int

    @property
    def clean(self) -> bool:
        """Nothing found wrong."""
        return not self.breaches


def journal_breaches(state: ledger.LedgerState) -> list[Breach]:
    """One breach per journal record the wallet refused (its position and reason: see
    poker.wallet.journal), the latest ones named; and one for those too old to be named."""
    found = [
        Breach(
            REFUSED_JOURNAL_RECORD,
            f"journal:{position}",
            f"the wallet's journal holds a record at position {position} that the ledger key "
            f"did not seal there ({reason}): someone else wrote it; it was skipped, no money "
            "moved",
        )
        for position, reason in state.refused_recent
    ]
    older = state.refused_records - len(state.refused_recent)
    if older > 0:
        found.insert(
            0,
            Breach(
                REFUSED_JOURNAL_RECORD,
                "journal",
                f"{older} more refused journal records before position "
                f"{state.refused_recent[0][0]} (only the latest {len(state.refused_recent)} are "
                "named)",
            ),
        )
    return found


async def audit(
    state: ledger.LedgerState,
    stacks: StacksReader,
    findings: FindingsReader,
    *,
    now: int,
    overdue_after_ms: int,
    metrics: WalletMetrics,
    chains: ChainReader | None = None,
    recomputed: Mapping[str, int] | None = None,
) -> AuditReport:
    """The ledger's own breaches at ``state`` (against the dealer's stacks at the ledger's
    cursor), the consumer's findings, the journal records the wallet refused and, with
    ``chains``, every break of a table log's hash chain; each kind's count goes to
    ``metrics``. ``chains`` and ``recomputed`` (the balances a from-scratch replay of the
    journal computes) are the deep audit's: without them the cost is bounded by what is live
    (see :mod:`poker.wallet.ledger.audit`)."""
    table_stacks = await stacks(state)
    found = [
        Breach(b.kind.value, b.subject, b.message)
        for b in ledger.audit(
            state,
            table_stacks,
            now=now,
            overdue_after_ms=overdue_after_ms,
            recomputed=recomputed,
        )
    ]
    found += [Breach(f.kind, f.table_id, f.message) for f in findings()]
    if chains is not None:  # the deep audit: each break once, if the consumer found it too
        known = {(b.subject, b.message) for b in found if b.kind == BROKEN_CHAIN}
        found += [
            Breach(BROKEN_CHAIN, b.table_id, b.message)
            for b in await chains(state)
            if (b.table_id, b.message) not in known
        ]
    found += journal_breaches(state)
    kinds = (*(k.value for k in BreachKind), *CONSUMER_FINDINGS, BROKEN_CHAIN)
    for kind in (*kinds, REFUSED_JOURNAL_RECORD):
        count = sum(1 for breach in found if breach.kind == kind)
        metrics.audit_breaches.labels(kind=kind).set(count)
    return AuditReport(tuple(found), len(table_stacks), state.sequence)
