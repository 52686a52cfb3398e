# ruff: noqa: N802 - gRPC method names are the proto's (CamelCase).
"""The Wallet gRPC servicer: a thin converter between the wire and the ledger's book.

Every method goes the same way: the request's fields against their limits
(:mod:`poker.wallet.bounds`), who may do what (below), the request to the application's values
(:mod:`poker.wallet.wire`), the book's command or the read of :mod:`poker.wallet.queries`,
and the answer back to a reply (``wire`` again). Who may do what: the cashier (the payments
service) and the operator deposit and withdraw; a player reads only his own accounts (an empty
``player_id`` means the caller) and never moves money in or out; the dealer role places and
voids holds and reads escrows; the operator sees everything. The ledger's errors map to status
only here, through :data:`ERROR_TABLE`: malformed → INVALID_ARGUMENT, unknown account or hold
→ NOT_FOUND, a broken rule (insufficient funds, ...) → FAILED_PRECONDITION, always with nothing
written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import Final

import grpc
import structlog

from poker.servicekit import flags
from poker.servicekit.auth import current_principal
from poker.servicekit.errors import InvalidArgument, PermissionDenied, RuleViolation, Unavailable
from poker.servicekit.errors import NotFound as ServiceNotFound
from poker.servicekit.status import ErrorTable
from poker.servicekit.tokens import Principal, Role
from poker.v1 import wallet_pb2 as wpb
from poker.v1 import wallet_pb2_grpc
from poker.wallet import ledger, queries, wire
from poker.wallet.book import LedgerBook
from poker.wallet.bounds import WALLET_BOUNDS
from poker.wallet.history import parse_token
from poker.wallet.ledger import Deposit, PlaceHold, VoidHold, Withdraw
from poker.wallet.metrics import WalletMetrics
from poker.wallet.queries import ChainReader, FindingsReader, StacksReader
from poker.wallet.reasons import LEDGER_REASONS
from poker.wallet.wire import balance_of

_log = structlog.get_logger(__name__)

SERVICE_NAME: Final = "poker.v1.WalletService"

#: The ledger's error families, their statuses and reasons (the rest is servicekit's table).
ERROR_TABLE: Final = ErrorTable(
    families={
        ledger.InvalidCommand: InvalidArgument,
        ledger.NotFound: ServiceNotFound,
        ledger.RuleViolation: RuleViolation,
    },
    reasons=LEDGER_REASONS,
)


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

_check_bounds = WALLET_BOUNDS.check

#: A servicer method's context, typed by its request and response messages.
_Context = grpc.aio.ServicerContext


def _subject_player(principal: Principal, requested: str) -> str:
    """The player a request is about: a player only ever himself; others must name one."""
    if principal.role is Role.PLAYER:
        if requested and requested != principal.subject:
            raise PermissionDenied("a player sees and moves only his own account")
        return principal.subject
    if not requested:
        raise InvalidArgument("player_id is required", field="player_id")
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


def _listed_player(principal: Principal, requested: str) -> str | None:
    """Whose transactions a listing shows: a player's own; an operator's or the cashier's pick
    (empty: the whole ledger)."""
    if principal.role is Role.PLAYER or requested:
        return _subject_player(principal, requested)
    return None


class WalletServicer(wallet_pb2_grpc.WalletServiceServicer):
    """The Wallet service over a :class:`LedgerBook`."""

    def __init__(
        self,
        book: LedgerBook,
        metrics: WalletMetrics,
        stacks: StacksReader,
        *,
        hold_ttl_ms: int = int(flags.HOLD_TTL.default * 1000),
        hold_overdue_ms: int = 30_000,
        findings: FindingsReader | None = None,
        chains: ChainReader | None = None,
        deep_stacks: StacksReader | None = None,
    ) -> None:
        """``findings`` are what the consumer knows is wrong (refused batches, stalled
        tables), ``chains`` reads the breaks of the tables' hash chains (every table's whole
        log: the deep Audit's only): the Audit reports them beside the ledger's own
        breaches; ``deep_stacks`` is the deep Audit's view of the dealer (read from the table
        log, not from what the consumer folded; default ``stacks``)."""
        self._book = book
        self._hold_overdue_ms = hold_overdue_ms
        self._metrics = metrics
        self._stacks = stacks
        self._hold_ttl_ms = hold_ttl_ms
        self._findings = findings or list
        self._chains = chains
        self._deep_running = asyncio.Lock()
        self._deep_stacks = deep_stacks or stacks

    async def _move(self, command: Deposit | Withdraw, key: str) -> tuple[int, wpb.Balance]:
        """Move the money (once per key): the transaction's id and the player's balance."""
        events = await self._book.execute([command])
        state = self._book.state
        tx_id = await queries.moved_transaction_id(self._book.keyed, events, key)
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
        return tx_id, balance_of(state, command.player_id)

    async def Deposit(
        self,
        request: wpb.DepositRequest,
        context: _Context[wpb.DepositRequest, wpb.DepositResponse],
    ) -> wpb.DepositResponse:
        """See the proto."""
        _check_bounds(request)
        player = _money_mover_for(current_principal(), request.player_id)
        key = wire.client_key(player, request.idempotency_key)
        command = Deposit(player, request.amount, key, self._book.clock(), request.reason)
        tx_id, balance = await self._move(command, key)
        return wpb.DepositResponse(transaction_id=tx_id, balance=balance)

    async def Withdraw(
        self,
        request: wpb.WithdrawRequest,
        context: _Context[wpb.WithdrawRequest, wpb.WithdrawResponse],
    ) -> wpb.WithdrawResponse:
        """See the proto."""
        _check_bounds(request)
        player = _money_mover_for(current_principal(), request.player_id)
        key = wire.client_key(player, request.idempotency_key)
        queries.require_account(self._book.state, player)
        command = Withdraw(player, request.amount, key, self._book.clock(), request.reason)
        tx_id, balance = await self._move(command, key)
        return wpb.WithdrawResponse(transaction_id=tx_id, balance=balance)

    async def GetBalance(
        self,
        request: wpb.GetBalanceRequest,
        context: _Context[wpb.GetBalanceRequest, wpb.GetBalanceResponse],
    ) -> wpb.GetBalanceResponse:
        """See the proto."""
        _check_bounds(request)
        player = _subject_player(current_principal(), request.player_id)
        state = self._book.state
        queries.require_account(state, player)
        return wpb.GetBalanceResponse(balance=balance_of(state, player))

    async def ListTransactions(
        self,
        request: wpb.ListTransactionsRequest,
        context: _Context[wpb.ListTransactionsRequest, wpb.ListTransactionsResponse],
    ) -> wpb.ListTransactionsResponse:
        """See the proto."""
        _check_bounds(request)
        principal = current_principal()
        player = _listed_player(principal, request.player_id)
        state, position = self._book.state, self._book.position
        cursor = parse_token(
            request.page_token,
            journal_position=position,
            next_transaction_id=state.last_transaction_id + 1,
        )
        listing = await queries.list_transactions(
            self._book.history,
            cursor,
            player,
            own_only=principal.role is Role.PLAYER,
            limit=wire.page_size(request),
        )
        return wire.transactions_response(listing)

    async def PlaceHold(
        self,
        request: wpb.PlaceHoldRequest,
        context: _Context[wpb.PlaceHoldRequest, wpb.PlaceHoldResponse],
    ) -> wpb.PlaceHoldResponse:
        """See the proto."""
        _check_bounds(request)
        command = PlaceHold(
            request.hold_id,
            request.player_id,
            request.table_id,
            request.amount,
            ttl_ms=request.ttl.ToMilliseconds() or self._hold_ttl_ms,  # bounded above
            now=self._book.clock(),
        )
        await self._book.execute([command])
        return wpb.PlaceHoldResponse(
            hold=wire.hold_view(queries.hold(await self._book.find_hold(request.hold_id)))
        )

    async def VoidHold(
        self,
        request: wpb.VoidHoldRequest,
        context: _Context[wpb.VoidHoldRequest, wpb.VoidHoldResponse],
    ) -> wpb.VoidHoldResponse:
        """See the proto."""
        _check_bounds(request)
        await self._book.execute([VoidHold(request.hold_id, self._book.clock(), request.reason)])
        return wpb.VoidHoldResponse(
            hold=wire.hold_view(queries.hold(await self._book.find_hold(request.hold_id)))
        )

    async def GetTableEscrow(
        self,
        request: wpb.GetTableEscrowRequest,
        context: _Context[wpb.GetTableEscrowRequest, wpb.GetTableEscrowResponse],
    ) -> wpb.GetTableEscrowResponse:
        """See the proto."""
        _check_bounds(request)
        escrow = queries.table_escrow(self._book.state, request.table_id)
        return wire.table_escrow_message(escrow)

    async def GetRakeReport(
        self,
        request: wpb.GetRakeReportRequest,
        context: _Context[wpb.GetRakeReportRequest, wpb.GetRakeReportResponse],
    ) -> wpb.GetRakeReportResponse:
        """See the proto."""
        _check_bounds(request)
        day_from, day_to = wire.rake_days(request)
        state, position = self._book.state, self._book.position  # one instant of the ledger
        by, table_id, game = (
            wire.rake_dimensions(request),
            request.table_id or None,
            request.game or None,
        )
        by_table = None
        if queries.needs_forgotten_tables(state, by, table_id):
            by_table = await queries.forgotten_tables_rake(
                state, self._book.history, position, game=game, day_from=day_from, day_to=day_to
            )
        report = queries.rake_report(
            state,
            by,
            table_id=table_id,
            game=game,
            day_from=day_from,
            day_to=day_to,
            forgotten_by_table=by_table,
        )
        return wire.rake_report_message(report)

    async def Audit(
        self, request: wpb.AuditRequest, context: _Context[wpb.AuditRequest, wpb.AuditResponse]
    ) -> wpb.AuditResponse:
        """See the proto."""
        _check_bounds(request)
        if request.deep:
            return wire.audit_message(await self._deep_audit())
        report = await queries.audit(
            self._book.state,  # one frozen value: the audit sees one instant of the ledger
            self._stacks,
            self._findings,
            now=self._book.clock(),
            overdue_after_ms=self._hold_overdue_ms,
            metrics=self._metrics,
        )
        return wire.audit_message(report)

    async def _deep_audit(self) -> queries.AuditReport:
        """The audit from scratch: the ledger replayed from the journal's first record and
        compared with the live state, every hold re-checked, every table's chain re-read. Costs
        the whole history: one at a time (a second caller is told to retry)."""
        if self._deep_running.locked():
            raise Unavailable("a deep audit is already running; retry when it is done")
        async with self._deep_running:
            replayed, state = await self._book.replayed()
            return await queries.audit(
                state,
                self._deep_stacks,
                self._findings,
                now=self._book.clock(),
                overdue_after_ms=self._hold_overdue_ms,
                metrics=self._metrics,
                chains=self._chains,
                recomputed={name: entry.balance for name, entry in replayed.account_items()},
            )


__all__ = [
    "ERROR_TABLE",
    "MONEY_MOVERS",
    "ROLES_BY_METHOD",
    "SERVICE_NAME",
    "StacksReader",
    "WalletServicer",
    "balance_of",
]
