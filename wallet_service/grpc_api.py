# ruff: noqa: N802 - gRPC method names are the proto's (CamelCase).
"""The Wallet gRPC servicer: check the caller and the request, run the ledger, build the reply.

Every request field is checked against its limit (:mod:`wallet_service.bounds`) before anything
else. Who may do what: the cashier (the payments service) and the operator deposit and withdraw; a
player reads only his own accounts (an empty ``player_id`` means the caller) and never moves money
in or out; the dealer role places and voids holds and reads escrows; the operator sees
everything. The ledger's errors map to status through :data:`ERROR_FAMILIES`: malformed →
INVALID_ARGUMENT, unknown account or hold → NOT_FOUND, a broken rule (insufficient funds, ...) →
FAILED_PRECONDITION, always with nothing written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final

import structlog

from pokerpb import ledger_pb2 as lpb
from pokerpb import wallet_pb2 as wpb
from pokerpb import wallet_pb2_grpc
from servicekit.auth import Principal, Role, current_principal
from servicekit.errors import InvalidArgument, PermissionDenied, RuleViolation
from servicekit.errors import NotFound as ServiceNotFound
from servicekit.status import ExtraFamilies
from wallet_service import ledger
from wallet_service.book import LedgerBook
from wallet_service.bounds import MAX_CLIENT_KEY, MAX_PAGE, WALLET_BOUNDS
from wallet_service.consumer import Finding
from wallet_service.ledger import (
    BreachKind,
    Deposit,
    HoldStatus,
    PlaceHold,
    Transaction,
    VoidHold,
    Withdraw,
)
from wallet_service.ledger.accounts import cash_account, escrow_account, held_account
from wallet_service.ledger.queries import RakeDimension
from wallet_service.ledger.state import CLIENT_KEY_PREFIX
from wallet_service.metrics import WalletMetrics

_log = structlog.get_logger(__name__)

SERVICE_NAME: Final = "pokerpb.Wallet"

#: The ledger's error families and their statuses (the rest is servicekit's table).
ERROR_FAMILIES: Final[ExtraFamilies] = {
    ledger.InvalidCommand: InvalidArgument,
    ledger.NotFound: ServiceNotFound,
    ledger.RuleViolation: RuleViolation,
}


def _method(name: str) -> str:
    return f"/{SERVICE_NAME}/{name}"


_ANYONE = {Role.PLAYER, Role.CASHIER, Role.DEALER, Role.OPERATOR}
#: Money comes in and goes out only through the payments service (the cashier) or an operator,
#: never through a player's own token: a player who could deposit would mint money.
MONEY_MOVERS: Final = frozenset({Role.CASHIER, Role.OPERATOR})
#: Who may call what.
ROLES_BY_METHOD: Final[Mapping[str, Collection[Role]]] = {
    _method("Deposit"): MONEY_MOVERS,
    _method("Withdraw"): MONEY_MOVERS,
    _method("GetBalance"): _ANYONE,
    _method("ListTransactions"): {Role.PLAYER, Role.CASHIER, Role.OPERATOR},
    _method("PlaceHold"): {Role.DEALER},
    _method("VoidHold"): {Role.DEALER},
    _method("GetTableEscrow"): {Role.DEALER, Role.OPERATOR},
    _method("GetRakeReport"): {Role.OPERATOR},
    _method("Audit"): {Role.OPERATOR},
}

DEFAULT_PAGE = 50
_check_bounds = WALLET_BOUNDS.check
_DIMENSIONS: Final[dict[int, RakeDimension]] = {
    wpb.RAKE_BY_TABLE: "table",
    wpb.RAKE_BY_GAME: "game",
    wpb.RAKE_BY_DAY: "day",
}
_HOLD_STATUS: Final = {
    HoldStatus.PENDING: wpb.HOLD_PENDING,
    HoldStatus.POSTED: wpb.HOLD_POSTED,
    HoldStatus.VOIDED: wpb.HOLD_VOIDED,
    HoldStatus.EXPIRED: wpb.HOLD_EXPIRED,
}

#: ``stacks(state)``: table id -> player -> the dealer's stack, for the open tables (the audit).
StacksReader = Callable[[ledger.LedgerState], Awaitable[dict[str, dict[str, int]]]]
#: The consumer's findings for the audit (:meth:`~wallet_service.consumer.BatchApplier.findings`).
FindingsReader = Callable[[], Sequence[Finding]]
#: The kinds of finding the consumer reports (metric labels of ``poker_wallet_audit_breaches``).
CONSUMER_FINDINGS = ("refused_batch", "stalled_table")


def _subject_player(principal: Principal, requested: str) -> str:
    """The player a request is about: a player only ever himself; others must name one."""
    if principal.role is Role.PLAYER:
        if requested and requested != principal.subject:
            raise PermissionDenied("a player sees and moves only his own account")
        return principal.subject
    if not requested:
        raise InvalidArgument("player_id is required")
    return requested


def _money_mover_for(principal: Principal, requested: str) -> str:
    """The player whose money a Deposit or Withdraw moves; only the cashier or an operator may
    (the interceptor refuses the others first: this is the servicer's own guard)."""
    if principal.role not in MONEY_MOVERS:
        raise PermissionDenied(
            "money comes in and goes out only through the cashier (the payments service) or an "
            f"operator; a {principal.role}'s token may not deposit or withdraw"
        )
    return _subject_player(principal, requested)


def _client_key(player_id: str, key: str) -> str:
    """Client keys are scoped to the player, so two players' keys never collide."""
    if not 0 < len(key) <= MAX_CLIENT_KEY:
        raise InvalidArgument(f"idempotency_key must be 1-{MAX_CLIENT_KEY} characters")
    return f"{player_id}/{key}"


def balance_of(state: ledger.LedgerState, player_id: str) -> wpb.Balance:
    """The player's cash, held money and chips at tables."""
    money = ledger.player_balance(state, player_id)
    lines = [
        wpb.EscrowLine(table_id=table_id, player_id=player_id, amount=escrows[player_id])
        for table_id, escrows in ledger.escrow_by_table(state).items()
        if player_id in escrows
    ]
    total = money.cash + money.held + sum(line.amount for line in lines)
    return wpb.Balance(
        player_id=player_id, cash=money.cash, held=money.held, escrow=lines, total=total
    )


def _hold_view(hold: ledger.Hold) -> wpb.HoldView:
    return wpb.HoldView(
        hold_id=hold.hold_id,
        player_id=hold.player_id,
        table_id=hold.table_id,
        amount=hold.amount,
        expires_at=hold.expires_at,
        status=_HOLD_STATUS[hold.status],
    )


def _transaction_view(tx: Transaction, mine: frozenset[str] | None) -> wpb.TransactionView:
    """A transaction as the caller may see it: a player sees only his own accounts' postings."""
    postings = [
        lpb.LedgerPosting(account=account, amount=amount)
        for account, amount in tx.postings
        if mine is None or account in mine
    ]
    return wpb.TransactionView(
        transaction_id=tx.transaction_id,
        kind=tx.kind.value,  # type: ignore[arg-type]  # Kind mirrors the proto enum
        postings=postings,
        occurred_at=tx.occurred_at,
        recorded_at=tx.recorded_at,
        table_id=tx.source_table_id,
        position=tx.source_position,
        hold_id=tx.hold_id,
        hand_id=tx.hand_id,
        game=tx.game,
        rake=tx.rake if mine is None else 0,
        reason=tx.reason,
        player_id=tx.player_id,
    )


def player_accounts(state: ledger.LedgerState, player_id: str) -> list[str]:
    """Every account of the player: cash, held and each escrow he ever had."""
    accounts = [cash_account(player_id), held_account(player_id)]
    for table_id, table in state.tables.items_iter():
        if player_id in table.escrow:
            accounts.append(escrow_account(table_id, player_id))
    return accounts


def transactions_page(
    state: ledger.LedgerState, accounts: list[str] | None, before: int | None, limit: int
) -> tuple[list[Transaction], int | None]:
    """Up to ``limit`` transactions touching any of ``accounts`` (all if None), newest first,
    below id ``before``; and the ``before`` of the next page (None: the last page)."""
    if accounts is None:
        page = ledger.list_transactions(state, before=before, limit=limit)
        return list(page.transactions), page.next_before
    # Each account's newest ``limit + 1`` ids below the cursor, merged: the page is the newest
    # ``limit`` of the union, and there is more if the union holds more.
    found: dict[int, Transaction] = {}
    for account in accounts:
        more = ledger.list_transactions(state, account=account, before=before, limit=limit + 1)
        for tx in more.transactions:
            found[tx.transaction_id] = tx
    ordered = [found[tx_id] for tx_id in sorted(found, reverse=True)]
    if len(ordered) > limit:
        return ordered[:limit], ordered[limit - 1].transaction_id
    return ordered, None


class WalletServicer(wallet_pb2_grpc.WalletServicer):
    """The Wallet service over a :class:`LedgerBook`."""

    def __init__(
        self,
        book: LedgerBook,
        metrics: WalletMetrics,
        stacks: StacksReader,
        *,
        hold_ttl_ms: int = 120_000,
        hold_overdue_ms: int = 30_000,
        findings: FindingsReader | None = None,
    ) -> None:
        """``findings`` are what the consumer knows is wrong (refused batches, stalled
        tables): the Audit reports them beside the ledger's own breaches."""
        self._book = book
        self._hold_overdue_ms = hold_overdue_ms
        self._metrics = metrics
        self._stacks = stacks
        self._hold_ttl_ms = hold_ttl_ms
        self._findings = findings or list

    async def _move(self, command: Deposit | Withdraw, key: str) -> wpb.MoneyMoved:
        events = await self._book.execute([command])
        state = self._book.state
        if events:
            tx_id = events[0].transaction_posted.transaction_id
        else:  # a repeat: answer with the first request's transaction
            tx_id = state.keys.get(CLIENT_KEY_PREFIX + key, 0)
        caller = current_principal()
        # The money trail: who moved how much in or out of whose account (never a token).
        _log.info(
            "money_moved",
            kind="deposit" if isinstance(command, Deposit) else "withdrawal",
            player_id=command.player_id,
            amount=command.amount,
            transaction_id=tx_id,
            repeated=not events,
            caller=caller.subject,
            caller_role=caller.role.value,
        )
        return wpb.MoneyMoved(transaction_id=tx_id, balance=balance_of(state, command.player_id))

    async def Deposit(self, request: wpb.DepositRequest, context: Any) -> wpb.MoneyMoved:
        """See the proto."""
        _check_bounds(request)
        player = _money_mover_for(current_principal(), request.player_id)
        key = _client_key(player, request.idempotency_key)
        command = Deposit(player, request.amount, key, self._book.clock(), request.reason)
        return await self._move(command, key)

    async def Withdraw(self, request: wpb.WithdrawRequest, context: Any) -> wpb.MoneyMoved:
        """See the proto."""
        _check_bounds(request)
        player = _money_mover_for(current_principal(), request.player_id)
        key = _client_key(player, request.idempotency_key)
        if self._book.state.account(cash_account(player)) is None:
            raise ServiceNotFound(f"no account for player {player}")
        command = Withdraw(player, request.amount, key, self._book.clock(), request.reason)
        return await self._move(command, key)

    async def GetBalance(self, request: wpb.GetBalanceRequest, context: Any) -> wpb.Balance:
        """See the proto."""
        _check_bounds(request)
        player = _subject_player(current_principal(), request.player_id)
        state = self._book.state
        if state.account(cash_account(player)) is None:
            raise ServiceNotFound(f"no account for player {player}")
        return balance_of(state, player)

    async def ListTransactions(
        self, request: wpb.ListTransactionsRequest, context: Any
    ) -> wpb.ListTransactionsResponse:
        """See the proto."""
        _check_bounds(request)
        principal = current_principal()
        limit = request.page_size or DEFAULT_PAGE
        if not 0 < limit <= MAX_PAGE:
            raise InvalidArgument(f"page_size must be 1-{MAX_PAGE}")
        token = request.page_token
        if token and not token.isdigit():
            raise InvalidArgument("page_token is not one this service issued")
        before = int(token) if token else None
        state = self._book.state
        accounts: list[str] | None = None
        mine: frozenset[str] | None = None
        if principal.role is Role.PLAYER or request.player_id:
            player = _subject_player(principal, request.player_id)
            accounts = player_accounts(state, player)
            if principal.role is Role.PLAYER:
                mine = frozenset(accounts)
        page, next_before = transactions_page(state, accounts, before, limit)
        return wpb.ListTransactionsResponse(
            transactions=[_transaction_view(tx, mine) for tx in page],
            next_page_token="" if next_before is None else str(next_before),
        )

    async def PlaceHold(self, request: wpb.PlaceHoldRequest, context: Any) -> wpb.HoldView:
        """See the proto."""
        _check_bounds(request)
        command = PlaceHold(
            request.hold_id,
            request.player_id,
            request.table_id,
            request.amount,
            ttl_ms=request.ttl_ms or self._hold_ttl_ms,
            now=self._book.clock(),
        )
        await self._book.execute([command])
        return self._hold(request.hold_id)

    async def VoidHold(self, request: wpb.VoidHoldRequest, context: Any) -> wpb.HoldView:
        """See the proto."""
        _check_bounds(request)
        await self._book.execute([VoidHold(request.hold_id, self._book.clock(), request.reason)])
        return self._hold(request.hold_id)

    def _hold(self, hold_id: str) -> wpb.HoldView:
        hold = ledger.find_hold(self._book.state, hold_id)
        if hold is None:  # pragma: no cover - execute raised UnknownHold already
            raise ServiceNotFound(f"no hold {hold_id}")
        return _hold_view(hold)

    async def GetTableEscrow(
        self, request: wpb.GetTableEscrowRequest, context: Any
    ) -> wpb.TableEscrow:
        """See the proto."""
        _check_bounds(request)
        state = self._book.state
        table = state.tables.get(request.table_id)
        if table is None:
            raise ServiceNotFound(f"no money has moved at table {request.table_id!r}")
        escrows = ledger.table_escrow(state, request.table_id)
        return wpb.TableEscrow(
            table_id=table.table_id,
            escrow=[
                wpb.EscrowLine(table_id=table.table_id, player_id=player, amount=amount)
                for player, amount in escrows.items()
            ],
            total=sum(escrows.values()),
            last_applied_position=table.last_position,
            closed=table.closed,
        )

    async def GetRakeReport(
        self, request: wpb.GetRakeReportRequest, context: Any
    ) -> wpb.RakeReport:
        """See the proto."""
        _check_bounds(request)
        try:
            by = tuple(dict.fromkeys(_DIMENSIONS[d] for d in request.group_by))
        except KeyError as error:
            raise InvalidArgument(f"unknown rake dimension {error.args[0]}") from None
        rows = ledger.rake_report(
            self._book.state,
            by=by,
            table_id=request.table_id or None,
            game=request.game or None,
            day_from=request.day_from or None,
            day_to=request.day_to or None,
        )
        return wpb.RakeReport(
            rows=[
                wpb.RakeRow(
                    table_id=row.table_id or "",
                    game=row.game or "",
                    day=row.day or "",
                    hands=row.hands,
                    rake=row.rake,
                )
                for row in rows
            ],
            total_rake=sum(row.rake for row in rows),
            total_hands=sum(row.hands for row in rows),
        )

    async def Audit(self, request: wpb.AuditRequest, context: Any) -> wpb.AuditReport:
        """See the proto."""
        _check_bounds(request)
        state = self._book.state  # one frozen value: the audit sees one instant of the ledger
        stacks = await self._stacks(state)
        breaches = [
            wpb.AuditBreach(kind=b.kind.value, subject=b.subject, message=b.message)
            for b in ledger.audit(
                state, stacks, now=self._book.clock(), overdue_after_ms=self._hold_overdue_ms
            )
        ]
        breaches += [
            wpb.AuditBreach(kind=f.kind, subject=f.table_id, message=f.message)
            for f in self._findings()
        ]
        for kind in (*(k.value for k in BreachKind), *CONSUMER_FINDINGS):
            count = sum(1 for breach in breaches if breach.kind == kind)
            self._metrics.audit_breaches.labels(kind=kind).set(count)
        return wpb.AuditReport(
            clean=not breaches,
            breaches=breaches,
            tables_checked=len(stacks),
            ledger_sequence=state.sequence,
        )
