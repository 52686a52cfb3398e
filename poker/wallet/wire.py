"""Every conversion between the Wallet's protobuf messages and the application's values.

Requests in: the fields a request's bounds (:mod:`poker.wallet.bounds`) do not already settle
- the client key's scope, the page, the rake dimensions - checked and turned into the values of
:mod:`poker.wallet.queries` and the ledger's commands; a field of the wrong shape is
:class:`~poker.servicekit.errors.InvalidArgument`. Replies out: balances, holds, transactions (as
the caller may see them), escrows, the rake report and the audit.

>>> page_size(wpb.ListTransactionsRequest(page_size=10)), page_size(wpb.ListTransactionsRequest())
(10, 50)
"""

from __future__ import annotations

from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp

from poker.servicekit.errors import InvalidArgument
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet import ledger
from poker.wallet.bounds import MAX_CLIENT_KEY, MAX_PAGE
from poker.wallet.ledger import HoldStatus, Transaction
from poker.wallet.ledger.queries import RakeDimension
from poker.wallet.queries import (
    AuditReport,
    Balance,
    EscrowLine,
    RakeReport,
    TableEscrow,
    TransactionListing,
    balance,
)

DEFAULT_PAGE = 50
_DIMENSIONS: Final[dict[int, RakeDimension]] = {
    wpb.RAKE_DIMENSION_BY_TABLE: "table",
    wpb.RAKE_DIMENSION_BY_GAME: "game",
    wpb.RAKE_DIMENSION_BY_DAY: "day",
}
_HOLD_STATUS: Final = {
    HoldStatus.PENDING: wpb.HOLD_STATUS_PENDING,
    HoldStatus.POSTED: wpb.HOLD_STATUS_POSTED,
    HoldStatus.VOIDED: wpb.HOLD_STATUS_VOIDED,
    HoldStatus.EXPIRED: wpb.HOLD_STATUS_EXPIRED,
}


# --- requests in ------------------------------------------------------------------------------


def client_key(player_id: str, key: str) -> str:
    """The ledger's idempotency key of a client's key: scoped to the player, so two players'
    keys never collide."""
    if not 0 < len(key) <= MAX_CLIENT_KEY:
        raise InvalidArgument(
            f"idempotency_key must be 1-{MAX_CLIENT_KEY} characters", field="idempotency_key"
        )
    return f"{player_id}/{key}"


def page_size(request: wpb.ListTransactionsRequest) -> int:
    """How many transactions a ListTransactions asks for (its token is checked against the
    journal: :func:`poker.wallet.history.parse_token`)."""
    limit = request.page_size or DEFAULT_PAGE
    if not 0 < limit <= MAX_PAGE:
        raise InvalidArgument(f"page_size must be 1-{MAX_PAGE}", field="page_size")
    return limit


def rake_dimensions(request: wpb.GetRakeReportRequest) -> tuple[RakeDimension, ...]:
    """The dimensions a rake report groups by, in the request's order, each once."""
    try:
        return tuple(dict.fromkeys(_DIMENSIONS[d] for d in request.group_by))
    except KeyError as error:
        raise InvalidArgument(f"unknown rake dimension {error.args[0]}", field="group_by") from None


# --- replies out ------------------------------------------------------------------------------


def rake_days(request: wpb.GetRakeReportRequest) -> tuple[str | None, str | None]:
    """The report's inclusive day range (None: open); the days themselves passed the bounds
    (days of the calendar), so only their order is checked here."""
    day_from, day_to = request.day_from or None, request.day_to or None
    if day_from is not None and day_to is not None and day_from > day_to:
        raise InvalidArgument(
            f"day_from ({day_from}) is after day_to ({day_to}): no day lies between them.",
            field="day_from",
        )
    return day_from, day_to


def _escrow_line(line: EscrowLine) -> wpb.EscrowLine:
    return wpb.EscrowLine(table_id=line.table_id, player_id=line.player_id, amount=line.amount)


def balance_message(value: Balance) -> wpb.Balance:
    """A player's balance on the wire."""
    return wpb.Balance(
        player_id=value.player_id,
        cash=value.cash,
        held=value.held,
        escrow=[_escrow_line(line) for line in value.escrow],
        total=value.total,
    )


def timestamp(unix_ms: int) -> Timestamp:
    """An instant of the ledger (unix milliseconds, as stored) as clients see it."""
    shown = Timestamp()
    shown.FromMilliseconds(unix_ms)
    return shown


def balance_of(state: ledger.LedgerState, player_id: str) -> wpb.Balance:
    """The player's cash, held money and chips at tables, on the wire."""
    return balance_message(balance(state, player_id))


def hold_view(hold: ledger.Hold) -> wpb.HoldView:
    """A hold in its current status."""
    return wpb.HoldView(
        hold_id=hold.hold_id,
        player_id=hold.player_id,
        table_id=hold.table_id,
        amount=hold.amount,
        expires_at=timestamp(hold.expires_at),
        status=_HOLD_STATUS[hold.status],
    )


def transaction_view(tx: Transaction, visible: frozenset[str] | None) -> wpb.TransactionView:
    """A transaction as the caller may see it: with ``visible`` accounts (a player's own) only
    their postings, and no rake."""
    postings = [
        lpb.LedgerPosting(account=account, amount=amount)
        for account, amount in tx.postings
        if visible is None or account in visible
    ]
    return wpb.TransactionView(
        transaction_id=tx.transaction_id,
        kind=tx.kind.value,  # type: ignore[arg-type]  # Kind mirrors the proto enum
        postings=postings,
        occurred_at=timestamp(tx.occurred_at),
        recorded_at=timestamp(tx.recorded_at),
        table_id=tx.source_table_id,
        position=tx.source_position,
        hold_id=tx.hold_id,
        hand_id=tx.hand_id,
        game=tx.game,
        rake=tx.rake if visible is None else 0,
        reason=tx.reason,
        player_id=tx.player_id,
    )


def transactions_response(listing: TransactionListing) -> wpb.ListTransactionsResponse:
    """A page of transactions and the token of the next one ("" on the last page)."""
    return wpb.ListTransactionsResponse(
        transactions=[transaction_view(tx, listing.visible) for tx in listing.transactions],
        next_page_token=listing.next_token,
    )


def table_escrow_message(escrow: TableEscrow) -> wpb.GetTableEscrowResponse:
    """A table's escrow on the wire."""
    return wpb.GetTableEscrowResponse(
        table_id=escrow.table_id,
        escrow=[_escrow_line(line) for line in escrow.escrow],
        total=escrow.total,
        last_applied_position=escrow.last_applied_position,
        closed=escrow.closed,
    )


def rake_report_message(report: RakeReport) -> wpb.GetRakeReportResponse:
    """A rake report on the wire (a dimension not grouped by is "")."""
    return wpb.GetRakeReportResponse(
        rows=[
            wpb.RakeRow(
                table_id=row.table_id or "",
                game=row.game or "",
                day=row.day or "",
                hands=row.hands,
                rake=row.rake,
            )
            for row in report.rows
        ],
        total_rake=report.total_rake,
        total_hands=report.total_hands,
    )


def audit_message(report: AuditReport) -> wpb.AuditResponse:
    """An audit on the wire."""
    return wpb.AuditResponse(
        clean=report.clean,
        breaches=[
            wpb.AuditBreach(kind=b.kind, subject=b.subject, message=b.message)
            for b in report.breaches
        ],
        tables_checked=report.tables_checked,
        ledger_sequence=report.ledger_sequence,
    )
